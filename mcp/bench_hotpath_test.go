package mcp

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Hot-path micro-benchmarks of the engine, next to bench_test.go's
// (whose BenchmarkHandle* run decode, dispatch and encode together): here
// dispatch on an already decoded message, the encoding of a tool's
// result, the argument validation on its fast and full paths, and
// tools/list of 1,000 tools.

var echoText = strings.Repeat("a", 100)

// benchDispatch hands a decoded message to the session over and over:
// routing, admission, validation, the handler and the reply's encoding,
// without decoding.
func benchDispatch(b *testing.B, s *Server, msg string) {
	ss := benchSession(b, s)
	m, err := jsonrpc.DecodeMessage([]byte(msg))
	if err != nil {
		b.Fatal(err)
	}
	w := &discard{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ss.HandleMessage(ctx, m, w)
	}
	if w.n == 0 {
		b.Fatal("no reply")
	}
}

func BenchmarkDispatchPing(b *testing.B) {
	benchDispatch(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
}

func BenchmarkDispatchToolsCallEcho(b *testing.B) {
	benchDispatch(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+echoText+`"}}}`)
}

func BenchmarkDispatchToolsCallEchoPerRequest(b *testing.B) {
	benchDispatch(b, echoServer(nil), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`+echoText+`"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"}}}}`)
}

// A tool's result to the bytes of its reply: as the engine encodes it,
// and through the reflective encoder alone.
func BenchmarkEncodeCallToolResult(b *testing.B) {
	for _, c := range []struct {
		name string
		enc  func(any) ([]byte, error)
	}{{"engine", encodeResult}, {"reflect", marshal}} {
		b.Run(c.name, func(b *testing.B) {
			id := jsonrpc.IntID(12345)
			buf := make([]byte, 0, 512)
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.enc(TextResult(echoText))
				if err != nil {
					b.Fatal(err)
				}
				buf = jsonrpc.AppendResult(buf[:0], id, res)
			}
		})
	}
}

// A tools/list result of 50 tools with small schemas to JSON.
func BenchmarkEncodeToolsList50(b *testing.B) {
	tools := make([]*Tool, 0, 50)
	for i := range 50 {
		tools = append(tools, &Tool{Name: fmt.Sprintf("tool_%04d", i), Description: "Filler tool: echo the input text", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := marshal(&ListToolsResult{Tools: tools}); err != nil {
			b.Fatal(err)
		}
	}
}

// Validation of the echo tool's arguments against its inferred schema:
// the one-pass fast path for flat object schemas, and the full validator
// on the same schema and arguments.
func BenchmarkValidateEcho(b *testing.B) {
	raw, err := inferSchema(reflect.TypeFor[echoIn]())
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"text":"` + echoText + `"}`)
	for _, path := range []string{"flat", "full"} {
		b.Run(path, func(b *testing.B) {
			sch, err := compileSchema(raw, true)
			if err != nil {
				b.Fatal(err)
			}
			if sch.flat == nil {
				b.Fatal("the echo schema has no fast path")
			}
			if path == "full" {
				sch.flat = nil
			}
			b.ReportAllocs()
			for b.Loop() {
				if p := sch.validate(args); p != "" {
					b.Fatal(p)
				}
			}
		})
	}
}

// A schema the fast path does not take (nested objects, an array of
// objects, a pattern): always the full validator.
func BenchmarkValidateNested(b *testing.B) {
	sch, err := compileSchema(`{"type":"object","properties":{
		"title":{"type":"string","pattern":"^[a-z ]+$"},
		"owner":{"type":"object","properties":{"name":{"type":"string"},"email":{"type":"string","format":"email"}},"required":["name"]},
		"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer","minimum":1}},"required":["sku","qty"]},"maxItems":10}},
		"required":["title","owner"],"additionalProperties":false}`, true)
	if err != nil {
		b.Fatal(err)
	}
	if sch.flat != nil {
		b.Fatal("expected the full validator")
	}
	args := []byte(`{"title":"a task","owner":{"name":"ann","email":"ann@example.com"},"items":[{"sku":"x1","qty":2},{"sku":"y2","qty":1}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if p := sch.validate(args); p != "" {
			b.Fatal(p)
		}
	}
}

func manyToolsServer(b *testing.B, n int) *Server {
	s := echoServer(nil)
	for i := 1; i < n; i++ {
		AddTool(s, &Tool{Name: fmt.Sprintf("tool_%04d", i), Description: fmt.Sprintf("Filler tool %d: echo the input text", i)},
			func(ctx context.Context, req *CallToolRequest, in echoIn) (*CallToolResult, any, error) {
				return TextResult(in.Text), nil, nil
			})
	}
	return s
}

// tools/list of 1,000 tools (one page at the default page size), decode
// to encode.
func BenchmarkHandleToolsList1000(b *testing.B) {
	benchHandle(b, manyToolsServer(b, 1000), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
}

// tools/call params to CallToolParams: the one-pass path the engine takes
// for the usual shape, and the reflective decoder it falls back to.
func BenchmarkDecodeCallToolParams(b *testing.B) {
	s := echoServer(nil)
	raw := []byte(`{"name":"echo","arguments":{"text":"` + echoText + `"}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p CallToolParams
			if !s.decodeCallFast(raw, &p) || p.Name != "echo" {
				b.Fatal("declined")
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var p CallToolParams
			if err := unmarshalParams(raw, &p); err != nil || p.Name != "echo" {
				b.Fatal(err)
			}
		}
	})
}

// A typed tool's arguments into its input struct: the one-pass flat
// decoder and json.Unmarshal.
func BenchmarkDecodeTypedArgs(b *testing.B) {
	type in struct {
		Text  string `json:"text"`
		Limit int    `json:"limit,omitempty"`
	}
	raw := []byte(`{"text":"` + echoText + `","limit":20}`)
	fa := newFlatArgs(reflect.TypeFor[in]())
	b.Run("flat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v in
			if !fa.decode(raw, unsafe.Pointer(&v)) || v.Limit != 20 {
				b.Fatal("declined")
			}
		}
	})
	b.Run("reflect", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v in
			if err := json.Unmarshal(raw, &v, jsontext.AllowInvalidUTF8(true)); err != nil || v.Limit != 20 {
				b.Fatal(err)
			}
		}
	})
}

// A tools/call result as a client (a gateway's upstream client) decodes
// it: one text block and the server's _meta.
func BenchmarkDecodeCallToolResult(b *testing.B) {
	raw := []byte(`{"content":[{"type":"text","text":"` + echoText + `"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"echo","version":"1"}}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r CallToolResult
			if !r.decodeFast(raw) {
				b.Fatal("declined")
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var r CallToolResult
			if err := r.decodeFull(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
