// Package taskstore is the task list mcpgate serves by default: tasks kept
// in a SQLite file (through the pure-Go modernc.org/sqlite driver), or in
// a Postgres database (through pgx) that several mcpgate replicas share,
// and the MCP tools, prompt and resource that work on them.
//
// # The store
//
// [Open] opens a [Store] at a path ([DefaultPath] says where mcpgate keeps
// it, or [EnvPath] overrides) or a postgres:// URL; its methods create,
// get, list, update, complete and delete a [Task]. Several processes may
// share one file or one Postgres database: every write is a transaction
// that holds the database's write lock (SQLite's BEGIN IMMEDIATE, an
// advisory lock in Postgres), so a read-modify-write ([Store.Modify])
// never loses a concurrent update. The schema is versioned on both
// (migrate.go); text Postgres cannot hold (NUL, invalid UTF-8) is
// refused there as invalid input. Errors that refuse a
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
