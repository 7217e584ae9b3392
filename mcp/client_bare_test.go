package mcp

import (
	"context"
	"errors"
	"log/slog"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/testbin"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestBareToolServerIsSpokenToAsOne(t *testing.T) {
	bin := testbin.Build(t, testbin.BareServer)
	for _, tc := range []struct {
		name string
		mode BareMode
		// initialize: whether the client asked it (detection) or not.
		initialize bool
		logged     string
	}{
		{"detected", BareDetect, true, "does not speak the MCP lifecycle"},
		{"forced", BareAlways, false, "as configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a bound on a hang
			defer cancel()
			var serverLog, clientLog logBuffer
			tr := &CommandTransport{Command: exec.Command(bin), Logger: slog.New(slog.NewTextHandler(&serverLog, nil))}
			cs, err := NewClient(nil, &ClientOptions{Bare: tc.mode, Logger: slog.New(slog.NewTextHandler(&clientLog, &slog.HandlerOptions{Level: slog.LevelDebug}))}).Connect(ctx, tr)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			if !cs.Bare() {
				t.Fatal("the session is not bare")
			}
			if got := cs.InitializeResult().Capabilities; got.Tools == nil || got.Prompts != nil || got.Resources != nil || got.Logging != nil {
				t.Errorf("capabilities %+v, want tools only", got)
			}
			var names []string
			for tool, err := range cs.Tools(ctx) {
				if err != nil {
					t.Fatalf("listing: %v", err)
				}
				names = append(names, tool.Name)
				if s, ok := tool.InputSchema.(map[string]any); !ok || s["type"] != "object" {
					t.Errorf("tool %s: input schema %v, want an object schema", tool.Name, tool.InputSchema)
				}
			}
			if want := []string{"add", "greet", "note", "lookup", "hang"}; !reflect.DeepEqual(names, want) {
				t.Errorf("tools %v, want %v", names, want)
			}
			for _, call := range []struct {
				tool       string
				args       any
				text       string
				structured any
				isError    bool
			}{
				{"add", map[string]any{"a": 2, "b": 3}, `{"sum":5}`, map[string]any{"sum": 5.0}, false},
				{"greet", map[string]any{"name": "Ada"}, "Hello, Ada!", map[string]any{"result": "Hello, Ada!"}, false},
				{"note", nil, `{"content":"milk, eggs","title":"groceries"}`, map[string]any{"title": "groceries", "content": "milk, eggs"}, false},
				{"lookup", nil, "the database is locked", nil, true},
				{"nope", nil, "Unknown tool: nope", nil, true},
			} {
				res, err := cs.CallTool(ctx, call.tool, call.args)
				if err != nil {
					t.Errorf("%s: %v", call.tool, err)
					continue
				}
				if len(res.Content) != 1 {
					t.Errorf("%s: content %v, want one text", call.tool, res.Content)
					continue
				}
				if text, _ := res.Content[0].(*TextContent); text == nil || text.Text != call.text {
					t.Errorf("%s: content %#v, want the text %q", call.tool, res.Content[0], call.text)
				}
				if !reflect.DeepEqual(res.StructuredContent, call.structured) || res.IsError != call.isError {
					t.Errorf("%s: structured %#v isError %v, want %#v %v", call.tool, res.StructuredContent, res.IsError, call.structured, call.isError)
				}
			}
			// A call given up on would send notifications/cancelled to an MCP
			// server; a bare one would answer it with an error.
			hctx, hcancel := context.WithTimeout(ctx, 100*time.Millisecond)
			if _, err := cs.CallTool(hctx, "hang", nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("hang: %v, want the deadline exceeded", err)
			}
			hcancel()
			// The server answers ping with -32601: that must not read as dead.
			if err := cs.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
			if _, err := cs.ListPrompts(ctx, nil); !errors.Is(err, ErrNotSupported) {
				t.Errorf("ListPrompts: %v, want ErrNotSupported (nothing is asked of the server)", err)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			sent := serverLog.String()
			if strings.Contains(sent, "got notifications/") || strings.Contains(sent, "got ping") || strings.Contains(sent, "got prompts/") {
				t.Errorf("the client sent a bare server what it does not know:\n%s", sent)
			}
			if got := strings.Contains(sent, "got initialize"); got != tc.initialize {
				t.Errorf("initialize sent: %v, want %v:\n%s", got, tc.initialize, sent)
			}
			if n := strings.Count(clientLog.String(), tc.logged); n != 1 {
				t.Errorf("the client logged %q %d times, want once:\n%s", tc.logged, n, clientLog.String())
			}
		})
	}
}

func TestBareNeverFailsConnectWhenInitializeIsUnknown(t *testing.T) {
	bin := testbin.Build(t, testbin.BareServer)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a bound on a hang
	defer cancel()
	_, err := NewClient(nil, &ClientOptions{Bare: BareNever}).Connect(ctx, &CommandTransport{Command: exec.Command(bin)})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Method != methodInitialize || ce.Err.Code != jsonrpc.CodeMethodNotFound {
		t.Fatalf("Connect: %v, want initialize's -32601", err)
	}
}

func TestBareToolResultsBecomeCallToolResults(t *testing.T) {
	for _, tc := range []struct {
		name, raw  string
		text       []string
		structured any
	}{
		{"object", `{"sum": 5}`, []string{`{"sum":5}`}, map[string]any{"sum": 5.0}},
		{"string", `"done"`, []string{"done"}, map[string]any{"result": "done"}},
		{"number", `42`, []string{"42"}, map[string]any{"result": 42.0}},
		{"array", `[1, "two"]`, []string{`[1,"two"]`}, map[string]any{"result": []any{1.0, "two"}}},
		{"null", `null`, nil, nil},
		{"already a result", `{"content":[{"type":"text","text":"hi"}],"isError":true}`, []string{"hi"}, nil},
		{"a content member of its own", `{"content":"milk"}`, []string{`{"content":"milk"}`}, map[string]any{"content": "milk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := bareToolResult(jsontext.Value(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			var text []string
			for _, c := range res.Content {
				text = append(text, c.(*TextContent).Text)
			}
			if !reflect.DeepEqual(text, tc.text) || !reflect.DeepEqual(res.StructuredContent, tc.structured) {
				t.Errorf("got text %q structured %#v, want %q %#v", text, res.StructuredContent, tc.text, tc.structured)
			}
		})
	}
}
