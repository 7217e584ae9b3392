package taskstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpgate/mcpgate/mcp"
)

// The tools' argument and result types. Their descriptions are what a
// model reads to decide how to call a tool, so they say what a value
// means and what happens when it is left out, and nothing else.

type taskOut struct {
	ID          string   `json:"id" jsonschema_description:"The task's id, used by the other task tools."`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Status      string   `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=done,enum=cancelled"`
	Priority    string   `json:"priority" jsonschema:"enum=low,enum=medium,enum=high"`
	Tags        []string `json:"tags"`
	CreatedAt   string   `json:"created_at" jsonschema_description:"RFC 3339 time, UTC."`
	UpdatedAt   string   `json:"updated_at" jsonschema_description:"RFC 3339 time, UTC, of the last change."`
	CompletedAt string   `json:"completed_at,omitempty" jsonschema_description:"RFC 3339 time, UTC, when the task was marked done; present only while status is done."`
}

type createIn struct {
	Title       string   `json:"title" jsonschema:"minLength=1,maxLength=500" jsonschema_description:"A short summary of what needs doing."`
	Description string   `json:"description,omitempty" jsonschema:"maxLength=20000" jsonschema_description:"Details, context or acceptance criteria."`
	Priority    string   `json:"priority,omitempty" jsonschema:"enum=low,enum=medium,enum=high,default=medium"`
	Tags        []string `json:"tags,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=100" jsonschema_description:"Labels for grouping and filtering, such as a project or area."`
	Status      string   `json:"status,omitempty" jsonschema:"enum=pending,enum=in_progress,enum=done,enum=cancelled,default=pending"`
}

type idIn struct {
	ID string `json:"id" jsonschema_description:"The task's id (task_ and 16 letters or digits), from create_task or list_tasks."`
}

type listIn struct {
	Status string `json:"status,omitempty" jsonschema:"enum=pending,enum=in_progress,enum=done,enum=cancelled" jsonschema_description:"Only tasks with this status. Omit for tasks of every status."`
	Query  string `json:"query,omitempty" jsonschema:"maxLength=500" jsonschema_description:"Only tasks whose title or description contains this text, ignoring case."`
	Tag    string `json:"tag,omitempty" jsonschema:"maxLength=100" jsonschema_description:"Only tasks with this tag, ignoring case."`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100,default=20" jsonschema_description:"Most tasks to return."`
	Cursor string `json:"cursor,omitempty" jsonschema_description:"next_cursor from the previous call, to get the next page with the same filters."`
}

type listOut struct {
	Tasks      []taskOut `json:"tasks" jsonschema_description:"Newest first."`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema_description:"Present when more tasks match: pass it as cursor to get the next page."`
	Total      int       `json:"total" jsonschema_description:"How many tasks match the filters, on all pages."`
}

type updateIn struct {
	ID          string    `json:"id" jsonschema_description:"The task's id (task_ and 16 letters or digits), from create_task or list_tasks."`
	Title       *string   `json:"title,omitempty" jsonschema:"minLength=1,maxLength=500"`
	Description *string   `json:"description,omitempty" jsonschema:"maxLength=20000" jsonschema_description:"The new description; an empty string clears it."`
	Status      *string   `json:"status,omitempty" jsonschema:"enum=pending,enum=in_progress,enum=done,enum=cancelled"`
	Priority    *string   `json:"priority,omitempty" jsonschema:"enum=low,enum=medium,enum=high"`
	Tags        *[]string `json:"tags,omitempty" jsonschema:"maxItems=100,minLength=1,maxLength=100" jsonschema_description:"The complete new tag list, replacing the old one; [] removes all tags."`
}

type deleteOut struct {
	Deleted bool   `json:"deleted"`
	ID      string `json:"id"`
}

// Register adds the task tools to s, backed by st: create_task, get_task,
// list_tasks, update_task, complete_task and delete_task.
//
// The annotations say what a client may assume. Every tool works on the
// local task file only, so none is open-world. The spec's default for
// destructiveHint is true, so the tools that write but only add or edit
// say false. update_task and complete_task are idempotent because an
// update that changes nothing leaves the task, updated_at included, as it
// was; delete_task is, because deleting again changes nothing (it only
// reports that the task is gone).
func Register(s *mcp.Server, st *Store) {
	mcp.AddTool(s, &mcp.Tool{
		Name:  "create_task",
		Title: "Create task",
		Description: "Add a task to the user's persistent task list and return it with its id. " +
			"New tasks are pending with medium priority unless status or priority says otherwise.",
		Annotations: &mcp.ToolAnnotations{Title: "Create task", DestructiveHint: new(false), OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in createIn) (*mcp.CallToolResult, taskOut, error) {
		t, err := st.Create(ctx, NewTask{Title: in.Title, Description: in.Description,
			Status: Status(in.Status), Priority: Priority(in.Priority), Tags: in.Tags})
		return result(t, err)
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_task",
		Title:       "Get task",
		Description: "Get one task by id, with its full description, tags and timestamps.",
		Annotations: &mcp.ToolAnnotations{Title: "Get task", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, taskOut, error) {
		return result(st.Get(ctx, in.ID))
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:  "list_tasks",
		Title: "List tasks",
		Description: "List tasks, newest first, optionally filtered by status, tag or text. " +
			"If the result has next_cursor, more tasks match: call again with it as cursor and the same filters to get them.",
		Annotations: &mcp.ToolAnnotations{Title: "List tasks", ReadOnlyHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
		r, err := st.List(ctx, ListOptions{Status: Status(in.Status), Query: in.Query, Tag: in.Tag, Limit: in.Limit, Cursor: in.Cursor})
		if err != nil {
			return nil, listOut{}, toolError(err)
		}
		out := listOut{Tasks: make([]taskOut, len(r.Tasks)), NextCursor: r.NextCursor, Total: r.Total}
		for i, t := range r.Tasks {
			out.Tasks[i] = toOut(t)
		}
		return nil, out, nil
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:  "update_task",
		Title: "Update task",
		Description: "Change a task's title, description, status, priority or tags, and return the updated task. " +
			"Only the fields given change; give at least one. tags replaces the whole list. " +
			"Setting status to done records completed_at; moving it away from done clears it.",
		Annotations: &mcp.ToolAnnotations{Title: "Update task", DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in updateIn) (*mcp.CallToolResult, taskOut, error) {
		p := Patch{Title: in.Title, Description: in.Description, Tags: in.Tags}
		if in.Status != nil {
			p.Status = new(Status(*in.Status))
		}
		if in.Priority != nil {
			p.Priority = new(Priority(*in.Priority))
		}
		return result(st.Update(ctx, in.ID, p))
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:  "complete_task",
		Title: "Complete task",
		Description: "Mark a task done and record when, then return it. " +
			"Completing a task that is already done changes nothing and keeps its original completed_at.",
		Annotations: &mcp.ToolAnnotations{Title: "Complete task", DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, taskOut, error) {
		return result(st.Complete(ctx, in.ID))
	})

	mcp.AddTool(s, &mcp.Tool{
		Name:  "delete_task",
		Title: "Delete task",
		Description: "Delete a task permanently; it cannot be recovered. " +
			"To keep a record of abandoned work, set its status to cancelled with update_task instead.",
		Annotations: &mcp.ToolAnnotations{Title: "Delete task", DestructiveHint: new(true), IdempotentHint: true, OpenWorldHint: new(false)},
	}, func(ctx context.Context, _ *mcp.CallToolRequest, in idIn) (*mcp.CallToolResult, deleteOut, error) {
		if err := st.Delete(ctx, in.ID); err != nil {
			return nil, deleteOut{}, toolError(err)
		}
		return nil, deleteOut{Deleted: true, ID: in.ID}, nil
	})
}

func result(t Task, err error) (*mcp.CallToolResult, taskOut, error) {
	if err != nil {
		return nil, taskOut{}, toolError(err)
	}
	return nil, toOut(t), nil
}

// toolError adds to a store error what a model should do next.
func toolError(err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w; call list_tasks to find task ids", err)
	}
	return err
}

func toOut(t Task) taskOut {
	out := taskOut{
		ID:          t.ID,
		Title:       t.Title,
		Description: t.Description,
		Status:      string(t.Status),
		Priority:    string(t.Priority),
		Tags:        t.Tags,
		CreatedAt:   formatTime(t.CreatedAt),
		UpdatedAt:   formatTime(t.UpdatedAt),
	}
	if !t.CompletedAt.IsZero() {
		out.CompletedAt = formatTime(t.CompletedAt)
	}
	return out
}
