package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
)

// Fixtures of the 2026-07-28 multi-round-trip scenarios
// (input-required-result-*). Each asks for input with fixed keys and
// finishes once the answers are in; a legacy client gets the same inputs
// asked with server-to-client requests.

func ask(message, field string) *mcp.InputRequest {
	return mcp.ElicitInput(&mcp.ElicitParams{Message: message, RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{field: map[string]any{"type": "string"}}, "required": []string{field},
	}})
}

func content(req *mcp.Request, key, field string) (string, bool) {
	r, ok := mcp.InputAs[mcp.ElicitResult](req, key)
	if !ok {
		return "", false
	}
	return fmt.Sprint(r.Content[field]), true
}

func sampledText(req *mcp.Request, key string) (string, bool) {
	r, ok := mcp.InputAs[mcp.CreateMessageResult](req, key)
	if !ok {
		return "", false
	}
	return modelText(r), true
}

func addInputRequiredTools(s *mcp.Server) {
	tool(s, "test_input_required_result_elicitation", "Asks the user's name, then greets them", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		name, ok := content(req.Request, "user_name", "name")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"user_name": ask("What is your name?", "name")}, nil)
		}
		return result(&mcp.TextContent{Text: "Hello, " + name + "!"})
	})
	tool(s, "test_input_required_result_sampling", "Asks the client's model a question", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		text, ok := sampledText(req.Request, "capital_question")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"capital_question": mcp.SamplingInput(&mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: "What is the capital of France?"})},
				MaxTokens: 100,
			})}, nil)
		}
		return result(&mcp.TextContent{Text: "The model said: " + text})
	})
	tool(s, "test_input_required_result_list_roots", "Asks the client for its roots", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		r, ok := mcp.InputAs[mcp.ListRootsResult](req.Request, "client_roots")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"client_roots": mcp.RootsInput()}, nil)
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return result(&mcp.TextContent{Text: fmt.Sprintf("The client has %d roots: %s", len(uris), strings.Join(uris, ", "))})
	})
	tool(s, "test_input_required_result_request_state", "Round-trips a request state", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		_, ok := mcp.InputAs[mcp.ElicitResult](req.Request, "confirm")
		if !ok || string(req.State()) != "awaiting-confirmation" {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"confirm": mcp.ElicitInput(&mcp.ElicitParams{Message: "Please confirm", RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"},
			}})}, []byte("awaiting-confirmation"))
		}
		return result(&mcp.TextContent{Text: "state-ok: confirmed"})
	})
	tool(s, "test_input_required_result_multiple_inputs", "Asks for three inputs at once", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		name, ok1 := content(req.Request, "user_name", "name")
		greeting, ok2 := sampledText(req.Request, "greeting")
		roots, ok3 := mcp.InputAs[mcp.ListRootsResult](req.Request, "client_roots")
		if !ok1 || !ok2 || !ok3 {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{
				"user_name": ask("What is your name?", "name"),
				"greeting": mcp.SamplingInput(&mcp.CreateMessageParams{
					Messages:  []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: "Generate a greeting"})},
					MaxTokens: 50,
				}),
				"client_roots": mcp.RootsInput(),
			}, []byte("multiple"))
		}
		return result(&mcp.TextContent{Text: fmt.Sprintf("%s, %s (%d roots)", greeting, name, len(roots.Roots))})
	})
	tool(s, "test_input_required_result_multi_round", "Asks two questions, one per round", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		name, ok := content(req.Request, "step1", "name")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"step1": ask("Step 1: What is your name?", "name")}, []byte("round-1"))
		}
		color, ok := content(req.Request, "step2", "color")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"step2": ask("Step 2: What is your favorite color?", "color")}, []byte("round-2"))
		}
		return result(&mcp.TextContent{Text: fmt.Sprintf("%s likes %s", name, color)})
	})
	tool(s, "test_input_required_result_tampered_state", "Refuses a request state it did not sign", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		if _, ok := mcp.InputAs[mcp.ElicitResult](req.Request, "confirm"); !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"confirm": ask("Please confirm", "ok")}, []byte("signed"))
		}
		return result(&mcp.TextContent{Text: "state verified"})
	})
	// Both need sampling: a client that did not declare it gets -32021.
	needsSampling := func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages:  []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: "Say hi"})},
			MaxTokens: 10,
		})
		if err != nil {
			return nil, nil, err
		}
		return result(&mcp.TextContent{Text: modelText(res)})
	}
	tool(s, "test_input_required_result_capabilities", "Needs sampling from the client", needsSampling)
	tool(s, "test_missing_capability", "Needs the client's sampling capability", needsSampling)
	tool(s, "test_streaming_elicitation", "Asks the user for input, with progress before", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		req.NotifyProgress(0, 1, "asking")
		name, ok := content(req.Request, "answer", "name")
		if !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"answer": ask("What is your name?", "name")}, nil)
		}
		return result(&mcp.TextContent{Text: "Hello, " + name})
	})
	tool(s, "test_logging_tool", "Logs at info level", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		req.Log(mcp.LevelInfo, "conformance", "a log message")
		return result(&mcp.TextContent{Text: "logged"})
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first"},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			c, ok := content(req.Request, "user_context", "context")
			if !ok {
				return nil, req.RequireInput(map[string]*mcp.InputRequest{"user_context": ask("What context should the prompt use?", "context")}, nil)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Use this context: " + c}}}}, nil
		})
}

// modelText is the text of a sampling result (content is one block or,
// with tools, an array).
func modelText(r *mcp.CreateMessageResult) string {
	var block struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(r.Content, &block) == nil {
		return block.Text
	}
	return string(r.Content)
}
