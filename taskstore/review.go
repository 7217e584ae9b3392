package taskstore

// The tools are for the model; this file is for the person. Clients show
// prompts as commands a person picks (a slash command in Claude Desktop)
// and resources as things to attach, so the open tasks are offered both
// ways: the review_tasks prompt asks the model to go through them, and
// the tasks://open resource is the list itself, to bring into any
// conversation.

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
)

// OpenTasksURI is the resource [RegisterResources] adds: the pending and
// in-progress tasks as a Markdown list.
const OpenTasksURI = "tasks://open"

// maxOpenShown bounds the tasks a prompt or the resource lists, so that a
// long-neglected list does not fill a model's context; the rest are
// counted.
const maxOpenShown = 100

// RegisterPrompts adds the review_tasks prompt to s, backed by st: the
// open tasks (optionally those with one tag), and a request to review
// them with the person, changing tasks only once they agree.
func RegisterPrompts(s *mcp.Server, st *Store) {
	err := s.AddPrompt(&mcp.Prompt{
		Name:        "review_tasks",
		Title:       "Review open tasks",
		Description: "Go through the open tasks (pending and in progress): what to do next, what is stale, duplicated or too big.",
		Arguments: []*mcp.PromptArgument{{
			Name:        "tag",
			Description: "Only the tasks with this tag, such as a project. Leave it out for every open task.",
		}},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		tag := strings.TrimSpace(req.Params.Arguments["tag"])
		open, more, err := openTasks(ctx, st, tag)
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{
			Description: "A review of the open tasks",
			Messages:    []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: reviewText(open, more, tag)}}},
		}, nil
	})
	if err != nil {
		panic(err) // the prompt above is complete: only a bug gets here
	}
}

// RegisterResources adds the tasks://open resource to s, backed by st.
func RegisterResources(s *mcp.Server, st *Store) {
	err := s.AddResource(&mcp.Resource{
		URI:         OpenTasksURI,
		Name:        "open-tasks",
		Title:       "Open tasks",
		Description: "The pending and in-progress tasks, in progress first, then by priority, newest first.",
		MIMEType:    "text/markdown",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		open, more, err := openTasks(ctx, st, "")
		if err != nil {
			return nil, err
		}
		text := "# Open tasks\n\n" + markdownList(open, more, "There are no open tasks.")
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}}, nil
	})
	if err != nil {
		panic(err) // the resource above is complete: only a bug gets here
	}
}

// openTasks returns the pending and in-progress tasks (with tag, when
// given), in progress first, then high priority first, then newest
// first: at most maxOpenShown of them, and how many more there are. The
// order is the database's, so the first shown are the first of all,
// however many there are.
func openTasks(ctx context.Context, st *Store, tag string) ([]Task, int, error) {
	filter := ` WHERE status IN ('pending', 'in_progress')`
	var args []any
	if err := st.d.checkText("tag", tag); err != nil {
		return nil, 0, err
	}
	if tag != "" {
		filter += ` AND ` + st.d.hasTag
		args = append(args, tag)
	}
	tx, err := st.db.BeginTx(ctx, st.d.readTx)
	if err != nil {
		return nil, 0, fmt.Errorf("taskstore: begin: %w", err)
	}
	defer tx.Rollback()
	var total int
	if err := tx.QueryRowContext(ctx, st.d.sql(`SELECT count(*) FROM tasks`+filter), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("taskstore: count: %w", err)
	}
	rows, err := tx.QueryContext(ctx, st.d.sql(`SELECT `+taskColumns+` FROM tasks`+filter+
		` ORDER BY status = 'in_progress' DESC, CASE priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END,`+
		` created_at DESC, id DESC LIMIT ?`), append(args, maxOpenShown)...)
	if err != nil {
		return nil, 0, fmt.Errorf("taskstore: list: %w", err)
	}
	defer rows.Close()
	var open []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, 0, err
		}
		open = append(open, t)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("taskstore: list: %w", err)
	}
	return open, total - len(open), nil
}

// markdownList renders tasks one a line: title, priority, status, tags
// and id, for a person and a model alike.
func markdownList(tasks []Task, more int, none string) string {
	if len(tasks) == 0 {
		return none + "\n"
	}
	var b strings.Builder
	for _, t := range tasks {
		fmt.Fprintf(&b, "- %s (%s priority", t.Title, t.Priority)
		if t.Status == StatusInProgress {
			b.WriteString(", in progress")
		}
		if len(t.Tags) > 0 {
			fmt.Fprintf(&b, "; tags: %s", strings.Join(t.Tags, ", "))
		}
		fmt.Fprintf(&b, ") `%s`\n", t.ID)
		if d, _, _ := strings.Cut(t.Description, "\n"); d != "" {
			fmt.Fprintf(&b, "  %s\n", clipRunes(d, 200))
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "- … and %d more (list_tasks finds them)\n", more)
	}
	return b.String()
}

func reviewText(open []Task, more int, tag string) string {
	which := "my open tasks"
	if tag != "" {
		which = fmt.Sprintf("my open tasks tagged %q", clip(tag))
	}
	if len(open) == 0 {
		return fmt.Sprintf("I have no open tasks%s. Help me plan: ask what I am working on, "+
			"and record each piece of work with create_task once I agree.", strings.TrimPrefix(which, "my open tasks"))
	}
	return "Here are " + which + " (in progress first, then by priority):\n\n" + markdownList(open, more, "") +
		"\nReview them with me: say which to do next and why, and point out any that look stale, " +
		"duplicated or too big to finish in one go. Suggest changes, and make them with update_task, " +
		"complete_task or delete_task only once I agree."
}

// clipRunes cuts s to n characters, marking the cut.
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
