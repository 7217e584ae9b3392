package mcp

import (
	"context"
	"strings"
	"testing"
)

// Filter hides items from some callers: left out of every list and
// answered as unknown, exactly as if they did not exist.
func TestFilterHidesItems(t *testing.T) {
	s := NewServer(nil, &ServerOptions{Filter: func(ctx context.Context, kind ItemKind, name string) bool {
		return PrincipalFrom(ctx) == "admin" || !strings.Contains(name, "secret")
	}})
	obj := map[string]any{"type": "object"}
	for _, n := range []string{"open", "secret"} {
		s.AddTool(&Tool{Name: n, InputSchema: obj}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return TextResult("ran"), nil })
		s.AddPrompt(&Prompt{Name: n}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil })
		s.AddResource(&Resource{URI: "mem://" + n, Name: n}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}}, nil
		})
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "mem://" + n + "/{id}", Name: n}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}}, nil
		})
	}
	ss := s.NewSession(MessageWriterFunc(func([]byte) error { return nil }), &SessionOptions{Initialized: &InitializeParams{ProtocolVersion: LatestVersion}})
	ask := func(who, method, params string) string {
		var out string
		ss.Handle(WithPrincipal(context.Background(), who), []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`), MessageWriterFunc(func(b []byte) error {
			out = string(b)
			return nil
		}))
		return out
	}
	for _, tt := range []struct{ method, params string }{
		{"tools/list", `{}`}, {"prompts/list", `{}`}, {"resources/list", `{}`}, {"resources/templates/list", `{}`},
	} {
		if got := ask("bob", tt.method, tt.params); strings.Contains(got, "secret") || !strings.Contains(got, "open") {
			t.Errorf("%s for bob: %s", tt.method, got)
		}
		if got := ask("admin", tt.method, tt.params); !strings.Contains(got, "secret") {
			t.Errorf("%s for admin: %s", tt.method, got)
		}
	}
	for _, tt := range []struct{ method, params string }{
		{"tools/call", `{"name":"secret"}`},
		{"prompts/get", `{"name":"secret"}`},
		{"resources/read", `{"uri":"mem://secret"}`},
		{"resources/read", `{"uri":"mem://secret/7"}`},
	} {
		if got := ask("bob", tt.method, tt.params); !strings.Contains(got, `"error"`) {
			t.Errorf("%s %s for bob: %s", tt.method, tt.params, got)
		}
		if got := ask("admin", tt.method, tt.params); strings.Contains(got, `"error"`) {
			t.Errorf("%s %s for admin: %s", tt.method, tt.params, got)
		}
	}
}
