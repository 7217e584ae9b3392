package mcp

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Hot-path micro-benchmarks of the engine, next to bench_test.go's
// (whose BenchmarkHandle* run decode, dispatch and encode together): here
// dispatch on an already decoded message, the encoding of a tool's
// result, the argument validation on its fast and full paths, tools/list
// of 1,000 tools, and a realistic typed tool (BenchmarkHandleToolsCallDocs
// and its parts), the workload on which internal/wire's fast paths are
// judged.

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

// A tool's result of one 100 KB image (a screenshot, say) to JSON: as the
// engine encodes it, its blocks in the same pass as the result, and
// through the reflective encoder alone, which calls each block's
// MarshalJSON.
func BenchmarkEncodeImageResult(b *testing.B) {
	r := &CallToolResult{Content: []Content{&ImageContent{Data: make([]byte, 100<<10), MIMEType: "image/png"}}}
	for _, c := range []struct {
		name string
		enc  func(any) ([]byte, error)
	}{{"engine", encodeResult}, {"reflect", marshal}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.enc(r); err != nil {
					b.Fatal(err)
				}
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

// A tools/call result as a client (a gateway's upstream client) decodes
// it: one text block and the server's _meta.
func BenchmarkDecodeCallToolResult(b *testing.B) {
	raw := []byte(`{"content":[{"type":"text","text":"` + echoText + `"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"echo","version":"1"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var r CallToolResult
		if err := r.UnmarshalJSON(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// docsIn is the input of a realistic typed tool, modelled on the list
// tools of published servers (linear_getTeamDocuments in the evaluation
// set): an id, a limit, a flag, an enum and a filter.
type docsIn struct {
	TeamID          string `json:"teamId" jsonschema:"description=ID of the team whose documents should be returned"`
	Limit           int    `json:"limit,omitempty" jsonschema:"description=Maximum number of documents to return (default: 25)"`
	IncludeArchived bool   `json:"includeArchived,omitempty" jsonschema:"description=Include archived documents in the results"`
	OrderBy         string `json:"orderBy,omitempty" jsonschema:"enum=createdAt,enum=updatedAt,description=Sort documents by created or updated date"`
	Title           string `json:"title,omitempty" jsonschema:"description=Case-insensitive title search filter"`
}

type benchDoc struct {
	ID        string `json:"id"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	UpdatedAt string `json:"updatedAt"`
	Words     int    `json:"words"`
}

type docsOut struct {
	Documents  []benchDoc `json:"documents"`
	NextCursor string     `json:"nextCursor,omitempty"`
}

// findDocs is the work of a realistic handler without its I/O: a page of
// documents that match.
func findDocs(in docsIn) docsOut {
	n := min(max(in.Limit, 1), 5)
	out := docsOut{Documents: make([]benchDoc, 0, n), NextCursor: "c2Vjb25kIHBhZ2U"}
	for i := range n {
		id := fmt.Sprintf("DOC-%d", 1041+i)
		out.Documents = append(out.Documents, benchDoc{
			ID: id, Title: fmt.Sprintf("Q%d %s: planning notes", i+1, in.Title),
			URL:       "https://linear.app/acme/document/" + strings.ToLower(id),
			UpdatedAt: "2026-03-1" + fmt.Sprint(i) + "T09:30:00Z", Words: 1200 + 37*i,
		})
	}
	return out
}

// docsServer has the two shapes a realistic tool result takes: text a
// handler wrote (markdown, one block) and structured output the engine
// encodes as structuredContent and as text.
func docsServer() *Server {
	s := NewServer(&Implementation{Name: "docs", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "list_documents_text", Description: "List a team's documents"},
		func(ctx context.Context, req *CallToolRequest, in docsIn) (*CallToolResult, any, error) {
			var sb strings.Builder
			fmt.Fprintf(&sb, "Found %d documents for team %s (ordered by %s):\n\n", min(in.Limit, 5), in.TeamID, in.OrderBy)
			for _, d := range findDocs(in).Documents {
				fmt.Fprintf(&sb, "- **%s** (%s), %d words, updated %s\n  %s\n", d.Title, d.ID, d.Words, d.UpdatedAt, d.URL)
			}
			return TextResult(sb.String()), nil, nil
		})
	AddTool(s, &Tool{Name: "list_documents", Description: "List a team's documents"},
		func(ctx context.Context, req *CallToolRequest, in docsIn) (*CallToolResult, docsOut, error) {
			return nil, findDocs(in), nil
		})
	return s
}

const docsArgs = `{"teamId":"TEAM-8f3a2c","limit":5,"includeArchived":false,"orderBy":"updatedAt","title":"roadmap"}`

// A tools/call of a realistic typed tool, decode to encode: five
// arguments validated and decoded, a handler that builds a page of
// results, the reply encoded (text, or structured output and its text).
// cpu-µs/op is the process's CPU time per call, steadier than ns/op on a
// shared machine.
func BenchmarkHandleToolsCallDocs(b *testing.B) {
	s := docsServer()
	for _, c := range []struct{ name, tool string }{{"text", "list_documents_text"}, {"structured", "list_documents"}} {
		b.Run(c.name, func(b *testing.B) {
			cpu0 := processCPU()
			benchHandle(b, s, `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"`+c.tool+`","arguments":`+docsArgs+`,"_meta":{"progressToken":42}}}`)
			if cpu := processCPU(); cpu > 0 {
				b.ReportMetric(float64((cpu-cpu0).Nanoseconds())/1e3/float64(b.N), "cpu-µs/op")
			}
		})
	}
}

// The results of BenchmarkHandleToolsCallDocs's tools to the bytes of a
// reply, as the engine encodes them.
func BenchmarkEncodeDocsResult(b *testing.B) {
	out := findDocs(docsIn{TeamID: "TEAM-8f3a2c", Limit: 5, OrderBy: "updatedAt", Title: "roadmap"})
	sc, err := json.Marshal(out)
	if err != nil {
		b.Fatal(err)
	}
	var sb strings.Builder
	for _, d := range out.Documents {
		fmt.Fprintf(&sb, "- **%s** (%s), %d words, updated %s\n  %s\n", d.Title, d.ID, d.Words, d.UpdatedAt, d.URL)
	}
	for _, c := range []struct {
		name string
		res  *CallToolResult
	}{
		{"text", TextResult(sb.String())},
		{"structured", &CallToolResult{Content: []Content{&TextContent{Text: string(sc)}}, StructuredContent: jsontext.Value(sc)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if reply := encodeResponse(jsonrpc.IntID(42), c.res, nil, nil); len(reply) == 0 {
					b.Fatal("no reply")
				}
			}
		})
	}
}

// A realistic typed tool as the engine wraps its handler: defaults
// filled in, the arguments decoded into the input struct, the handler
// run and its output encoded.
func BenchmarkTypedToolDocs(b *testing.B) {
	s := docsServer()
	st, ok := s.tools.get("list_documents")
	if !ok {
		b.Fatal("no tool")
	}
	req := &CallToolRequest{Params: &CallToolParams{Name: "list_documents", Arguments: []byte(docsArgs)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.handler(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}

// The realistic tool's arguments against its inferred schema, as the
// engine validates them.
func BenchmarkValidateDocsArgs(b *testing.B) {
	raw, err := inferSchema(reflect.TypeFor[docsIn]())
	if err != nil {
		b.Fatal(err)
	}
	sch, err := compileSchema(raw, true)
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(docsArgs)
	b.ReportAllocs()
	for b.Loop() {
		if p := sch.validate(args); p != "" {
			b.Fatal(p)
		}
	}
}

// The replies of BenchmarkHandleToolsCallDocs's tools decoded as a
// client (a gateway's upstream client) decodes them.
func BenchmarkDecodeDocsResult(b *testing.B) {
	s := docsServer()
	ss := benchSession(b, s)
	for _, c := range []struct{ name, tool string }{{"text", "list_documents_text"}, {"structured", "list_documents"}} {
		var reply []byte
		ss.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"`+c.tool+`","arguments":`+docsArgs+`}}`),
			MessageWriterFunc(func(msg []byte) error { reply = append([]byte(nil), msg...); return nil }))
		var m struct {
			Result jsontext.Value `json:"result"`
		}
		if err := json.Unmarshal(reply, &m); err != nil || len(m.Result) == 0 {
			b.Fatalf("reply %s: %v", reply, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r CallToolResult
				if err := r.UnmarshalJSON(m.Result); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
