package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// Fixtures of the tasks scenarios (the io.modelcontextprotocol/tasks
// extension of 2026-07-28; the same tools serve 2025-11-25 clients that
// ask for a task with params.task).

type computeArgs struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"how long the computation takes"`
	Label   string  `json:"label,omitempty" jsonschema:"a label echoed in the result"`
}

type deleteArgs struct {
	Filename string `json:"filename" jsonschema:"the file to delete"`
}

func taskTool(support string) *mcp.ToolExecution { return &mcp.ToolExecution{TaskSupport: support} }

// sleep waits d or until ctx ends (a cancelled task).
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func addTaskTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone at once"},
		func(ctx context.Context, req *mcp.CallToolRequest, in struct {
			Name string `json:"name,omitempty"`
		}) (*mcp.CallToolResult, any, error) {
			return result(&mcp.TextContent{Text: "Hello, " + in.Name + "!"})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow_compute", Description: "Computes for the given number of seconds, reporting progress every tenth of one", Execution: taskTool(mcp.TaskSupportOptional)},
		func(ctx context.Context, req *mcp.CallToolRequest, in computeArgs) (*mcp.CallToolResult, any, error) {
			total := time.Duration(in.Seconds * float64(time.Second))
			for done := time.Duration(0); done < total; {
				step := min(100*time.Millisecond, total-done)
				if err := sleep(ctx, step); err != nil {
					return nil, nil, err
				}
				done += step
				req.NotifyProgress(done.Seconds(), in.Seconds, "computing")
			}
			return result(&mcp.TextContent{Text: fmt.Sprintf("Computed %q in %gs", in.Label, in.Seconds)})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "failing_job", Description: "Fails with a tool error after a second", Execution: taskTool(mcp.TaskSupportRequired)},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			if err := sleep(ctx, time.Second); err != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("the job failed, as this tool always does")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "protocol_error_job", Description: "Crashes after half a second", Execution: taskTool(mcp.TaskSupportOptional)},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			if err := sleep(ctx, 500*time.Millisecond); err != nil {
				return nil, nil, err
			}
			panic("protocol_error_job crashes on purpose")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Asks the user to confirm, then deletes a file", Execution: taskTool(mcp.TaskSupportOptional)},
		func(ctx context.Context, req *mcp.CallToolRequest, in deleteArgs) (*mcp.CallToolResult, any, error) {
			r, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Delete " + in.Filename + "?", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"},
			}})
			if err != nil {
				return nil, nil, err
			}
			if r.Action == "accept" && r.Content["confirm"] == true {
				return result(&mcp.TextContent{Text: "Deleted " + in.Filename})
			}
			return result(&mcp.TextContent{Text: "Kept " + in.Filename})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "multi_input", Description: "Asks two questions at once", Execution: taskTool(mcp.TaskSupportOptional)},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			first, ok1 := content(req.Request, "first", "name")
			second, ok2 := content(req.Request, "second", "name")
			if !ok1 || !ok2 {
				return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{
					"first":  ask("First name?", "name"),
					"second": ask("Second name?", "name"),
				}, nil)
			}
			return result(&mcp.TextContent{Text: "Got " + first + " and " + second})
		})
	mcp.AddTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks the user's name, then works on it as a task",
		Execution: taskTool(mcp.TaskSupportRequired), TaskAfter: 200 * time.Millisecond},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			name, ok := content(req.Request, "user_name", "name")
			if !ok {
				return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"user_name": ask("What is your name?", "name")}, nil)
			}
			if err := sleep(ctx, time.Second); err != nil {
				return nil, nil, err
			}
			return result(&mcp.TextContent{Text: "Hello, " + name + "! Your task is done."})
		})
}
