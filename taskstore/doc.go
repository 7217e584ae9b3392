// Package taskstore is the task list mcpgate serves by default: tasks kept
// in a SQLite file (through the pure-Go modernc.org/sqlite driver) and the
// MCP tools, prompt and resource that work on them.
//
// # The store
//
// [Open] opens a [Store] at a path ([DefaultPath] says where mcpgate keeps
// it, or [EnvPath] overrides); its methods create, get, list, update,
// complete and delete a [Task]. Several processes may share one file:
// every write is a BEGIN IMMEDIATE transaction, so a read-modify-write
// ([Store.Modify]) never loses a concurrent update. Errors that refuse a
// caller's input match [ErrInvalid], and an unknown id [ErrNotFound].
//
// # Serving it over MCP
//
// [Register] adds the tools (create_task, get_task, list_tasks,
// update_task, complete_task, delete_task) to an [mcp.Server], with
// annotations that say what a client may assume of each; [RegisterPrompts] adds the review_tasks
// prompt and [RegisterResources] the list of open tasks at
// [OpenTasksURI]. The tools are typed ([mcp.AddTool]): their schemas
// come from the struct tags of their inputs and outputs.
package taskstore
