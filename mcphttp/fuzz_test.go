package mcphttp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzPOST sends arbitrary bodies to a live session: the answer is always
// a known status with a JSON body (or none), a parse error's id is null,
// and the session survives.
func FuzzPOST(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}`,
		`garbage`,
		`{"jsonrpc":"2.0","id":7,"method":`,
		`{}`,
	} {
		f.Add(s)
	}
	h := NewHandler(testServerWithTimeout(time.Millisecond), nil)
	init := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`))
	init.Host = "localhost"
	init.Header.Set("Content-Type", "application/json")
	init.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, init)
	sid := rec.Header().Get("Mcp-Session-Id")
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		req.Host = "localhost"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 202, 400, 404, 413:
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
		out := rec.Body.String()
		if rec.Header().Get("Content-Type") == "application/json" && !json.Valid([]byte(out)) {
			t.Fatalf("invalid JSON answer %q", out)
		}
		if isParseError(out) && !isError(out, -32700, "null") {
			t.Fatalf("a parse error answered with an id: %s to %q", out, body)
		}
	})
}

// isParseError reports whether msg is a JSON-RPC error with code -32700.
func isParseError(msg string) bool {
	var m struct{ Error *struct{ Code int64 } }
	return json.Unmarshal([]byte(msg), &m) == nil && m.Error != nil && m.Error.Code == -32700
}
