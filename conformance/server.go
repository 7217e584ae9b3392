package conformance

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Small valid media the suite only checks for presence.
var (
	pngData, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wavData, _ = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
)

// NewServer returns the fixtures server.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcp-conformance-test-server", Version: "1.0.0"}, &mcp.ServerOptions{
		Logging: true,
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionValues{Values: []string{}}}, nil
		},
	})
	addContentTools(s)
	addInteractiveTools(s)
	addElicitationTools(s)
	addInputRequiredTools(s)
	addChangeTools(s)
	addHeaderTools(s)
	addTaskTools(s)
	addResources(s)
	addPrompts(s)
	return s
}

type none struct{}

func tool(s *mcp.Server, name, description string, h mcp.ToolHandlerFor[none, any]) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
}

func result(blocks ...mcp.Content) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: blocks}, nil, nil
}

func addContentTools(s *mcp.Server) {
	tool(s, "test_simple_text", "Returns a simple text response", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.TextContent{Text: "This is a simple text response for testing."})
	})
	tool(s, "test_image_content", "Returns a small PNG image", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.ImageContent{Data: pngData, MIMEType: "image/png"})
	})
	tool(s, "test_audio_content", "Returns a short WAV clip", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.AudioContent{Data: wavData, MIMEType: "audio/wav"})
	})
	tool(s, "test_embedded_resource", "Returns an embedded text resource", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}})
	})
	tool(s, "test_multiple_content_types", "Returns text, an image and a resource", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return result(
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: pngData, MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		)
	})
	tool(s, "test_error_handling", "Always fails, as a tool error", func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, any, error) {
		return nil, nil, fmt.Errorf("This tool intentionally returns an error for testing")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "json_schema_2020_12_tool", Description: "Takes arguments described by a JSON Schema 2020-12 document with $defs",
		// The suite's 0.2.0 line also checks composition, conditional and
		// $anchor keywords (SEP-2106); they must come back untouched.
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
			`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
			`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
			`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
			`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
			`"additionalProperties":false}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
			b, _ := json.Marshal(in)
			return result(&mcp.TextContent{Text: "Received: " + string(b)})
		})
}

func addInteractiveTools(s *mcp.Server) {
	tool(s, "test_tool_with_logging", "Sends three log messages while it runs", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			if i > 0 {
				pause(ctx, 50*time.Millisecond)
			}
			req.Log(mcp.LevelInfo, "conformance", msg)
		}
		return result(&mcp.TextContent{Text: "Tool with logging executed successfully"})
	})
	tool(s, "test_tool_with_progress", "Reports progress three times while it runs", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		for i, p := range []float64{0, 50, 100} {
			if i > 0 {
				pause(ctx, 50*time.Millisecond)
			}
			req.NotifyProgress(p, 100, fmt.Sprintf("Completed step %d of 3", i+1))
		}
		return result(&mcp.TextContent{Text: "Progress test completed"})
	})
	tool(s, "test_reconnection", "Closes its response stream mid-call; the result arrives when the client resumes", func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
		mcphttp.CloseSSEStream(ctx)
		pause(ctx, 100*time.Millisecond)
		return result(&mcp.TextContent{Text: "Reconnection test completed"})
	})

	type samplingIn struct {
		Prompt string `json:"prompt" jsonschema:"description=The prompt to send to the client's model"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "test_sampling", Description: "Asks the client's model to answer a prompt"},
		func(ctx context.Context, req *mcp.CallToolRequest, in samplingIn) (*mcp.CallToolResult, any, error) {
			res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: in.Prompt})},
				MaxTokens: 100,
			})
			if err != nil {
				return result(&mcp.TextContent{Text: "Sampling not supported or error: " + err.Error()})
			}
			var text struct{ Text string }
			json.Unmarshal(res.Content, &text)
			return result(&mcp.TextContent{Text: "LLM response: " + text.Text})
		})
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
