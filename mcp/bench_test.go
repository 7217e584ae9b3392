package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// discard is a MessageWriter that drops every message.
type discard struct{ n int }

func (d *discard) WriteMessage(msg []byte) error { d.n++; return nil }

func benchSession(b *testing.B, s *Server) *ServerSession {
	ss := s.NewSession(&discard{}, nil)
	ctx := context.Background()
	w := &discard{}
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`), w)
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), w)
	b.Cleanup(func() { ss.Close() })
	return ss
}

// The engine's cost per request without any transport: decode, dispatch,
// validate, run the handler, encode.
func benchHandle(b *testing.B, s *Server, msg string) {
	ss := benchSession(b, s)
	data := []byte(msg)
	w := &discard{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ss.Handle(ctx, data, w)
	}
	if w.n == 0 {
		b.Fatal("no reply")
	}
}

func BenchmarkHandlePing(b *testing.B) {
	benchHandle(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

func BenchmarkHandleToolsCallEcho(b *testing.B) {
	benchHandle(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}}}`)
}

// The same call as a 2026-07-28 request: _meta validated and the result
// shaped on every request.
func BenchmarkHandleToolsCallEchoPerRequest(b *testing.B) {
	benchHandle(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}}}}`)
}

func BenchmarkHandleToolsCallTyped(b *testing.B) {
	benchHandle(b, typedServer(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"title":"a task","priority":"high","limit":5,"tags":["x","y"]}}}`)
}

// tools/list of the 50 tools of the published GitHub server, when the
// evaluation data is present.
func BenchmarkHandleToolsListGitHub(b *testing.B) {
	data, err := os.ReadFile("../../shared/eval/tools/github.json")
	if err != nil {
		b.Skip("evaluation data not present")
	}
	var f struct {
		Tools []struct {
			Name        string
			Description string
			InputSchema json.RawMessage
		}
	}
	json.Unmarshal(data, &f)
	s := NewServer(nil, nil)
	for _, t := range f.Tools {
		if err := s.AddTool(&Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(data)))
	benchHandle(b, s, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
}

func BenchmarkValidateArguments(b *testing.B) {
	sch, err := compileSchema(`{"type":"object","properties":{"title":{"type":"string","minLength":1},"priority":{"enum":["low","high"]},"limit":{"type":"integer","minimum":1}},"required":["title"],"additionalProperties":false}`, true)
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"title":"a task","priority":"high","limit":5}`)
	b.ReportAllocs()
	for b.Loop() {
		if p := sch.validate(args); p != "" {
			b.Fatal(p)
		}
	}
}

var _ = fmt.Sprint
