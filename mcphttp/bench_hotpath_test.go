package mcphttp

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// Hot-path micro-benchmarks of the Streamable HTTP transport, next to
// bench_test.go's loopback benchmark: the handler served in process (no
// TCP, no client), and the SSE framing both ways.

// benchRW is a reusable ResponseWriter that keeps the body and can flush.
type benchRW struct {
	h    http.Header
	code int
	body bytes.Buffer
}

func (w *benchRW) Header() http.Header         { return w.h }
func (w *benchRW) WriteHeader(code int)        { w.code = code }
func (w *benchRW) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *benchRW) Flush()                      {}

func (w *benchRW) reset() {
	clear(w.h)
	w.code = 0
	w.body.Reset()
}

func benchPOST(h http.Handler, w *benchRW, hdr http.Header, body []byte) {
	w.reset()
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	r.Host = "127.0.0.1"
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header = hdr
	h.ServeHTTP(w, r)
}

// BenchmarkServeHTTPToolsCall is one tools/call echo through the
// handler, in process: header checks, session lookup, dispatch, the reply
// as JSON or as an SSE stream, and a 2026-07-28 request, which gets a
// session of its own.
func BenchmarkServeHTTPToolsCall(b *testing.B) {
	text := strings.Repeat("x", 100)
	for _, mode := range []string{"json", "sse", "perrequest"} {
		b.Run(mode, func(b *testing.B) {
			h, _ := startHTTP(b, testServer(), &Options{StreamResponses: mode == "sse"})
			w := &benchRW{h: http.Header{}}
			hdr := http.Header{
				"Content-Type": {"application/json"},
				"Accept":       {"application/json, text/event-stream"},
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`
			if mode == "perrequest" {
				hdr.Set("Mcp-Protocol-Version", "2026-07-28")
				hdr.Set("Mcp-Method", "tools/call")
				hdr.Set("Mcp-Name", "echo")
				body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
			} else {
				benchPOST(h, w, hdr, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`))
				sid := w.h.Get("Mcp-Session-Id")
				if w.code != 200 || sid == "" {
					b.Fatalf("initialize: %d %s", w.code, w.body.Bytes())
				}
				hdr.Set("Mcp-Session-Id", sid)
				hdr.Set("Mcp-Protocol-Version", "2025-11-25")
				benchPOST(h, w, hdr, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			}
			msg := []byte(body)
			want := []byte(`"text":"` + text + `"`)
			b.ReportAllocs()
			for b.Loop() {
				benchPOST(h, w, hdr, msg)
				if w.code != 0 && w.code != 200 || !bytes.Contains(w.body.Bytes(), want) {
					b.Fatalf("%d %s", w.code, w.body.Bytes())
				}
			}
		})
	}
}

// One reply as an SSE event on an open stream: framing and the write.
func BenchmarkSSEWriteEvent(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}`)
	for _, perRequest := range []bool{false, true} {
		name := "legacy"
		if perRequest {
			name = "perrequest"
		}
		b.Run(name, func(b *testing.B) {
			w := &benchRW{h: http.Header{}}
			s := newStream(&session{perRequest: perRequest}, "0", false)
			c := newConn(w)
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				w.body.Reset()
				s.writeEvent(c, "0-1", msg, true)
			}
			if !bytes.HasSuffix(w.body.Bytes(), []byte("\n\n")) {
				b.Fatalf("%q", w.body.Bytes())
			}
		})
	}
}

// sseRepeat serves the same event stream over and over.
type sseRepeat struct {
	data []byte
	off  int
}

func (r *sseRepeat) Read(p []byte) (int, error) {
	n := copy(p, r.data[r.off:])
	r.off = (r.off + n) % len(r.data)
	return n, nil
}

// One event read by the client transport: lines, fields, data joined.
func BenchmarkSSEReadEvent(b *testing.B) {
	ev := "id: 0-7\nevent: message\ndata: " + `{"jsonrpc":"2.0","id":12345,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 100) + `"}]}}` + "\n\n"
	r := newSSEReader(&sseRepeat{data: []byte(strings.Repeat(ev, 64))}, 0)
	b.SetBytes(int64(len(ev)))
	b.ReportAllocs()
	for b.Loop() {
		e, err := r.next()
		if err != nil || !e.hasData {
			b.Fatal(err)
		}
	}
}
