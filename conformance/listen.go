package conformance

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/mcp"
)

// Fixtures of the 2026-07-28 subscriptions/listen checks: each call
// toggles a tool or a prompt, so that the lists change.
func addChangeTools(s *mcp.Server) {
	var toolOn, promptOn atomic.Bool
	tool(s, "test_trigger_tool_change", "Adds or removes the tool test_dynamic_tool", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		if toolOn.CompareAndSwap(false, true) {
			tool(s, "test_dynamic_tool", "A tool that comes and goes", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
				return result(&mcp.TextContent{Text: "here"})
			})
		} else {
			toolOn.Store(false)
			s.RemoveTools("test_dynamic_tool")
		}
		return result(&mcp.TextContent{Text: "tool list changed"})
	})
	tool(s, "test_trigger_prompt_change", "Adds or removes the prompt test_dynamic_prompt", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		if promptOn.CompareAndSwap(false, true) {
			s.AddPrompt(&mcp.Prompt{Name: "test_dynamic_prompt", Description: "A prompt that comes and goes"},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "here"}}}}, nil
				})
		} else {
			promptOn.Store(false)
			s.RemovePrompts("test_dynamic_prompt")
		}
		return result(&mcp.TextContent{Text: "prompt list changed"})
	})
}

// addHeaderTools gives the custom-header checks (SEP-2243) a tool whose
// argument is repeated in the Mcp-Param-Region header.
func addHeaderTools(s *mcp.Server) {
	type regionIn struct {
		Region string `json:"region"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_custom_header", Description: "Echoes its region argument, which also travels as the Mcp-Param-Region header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in regionIn) (*mcp.CallToolResult, any, error) {
			return result(&mcp.TextContent{Text: "region " + in.Region})
		})
}
