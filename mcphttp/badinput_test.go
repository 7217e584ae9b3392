package mcphttp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Bad input of every kind gets the right status and JSON-RPC code, and the
// server goes on serving a well-behaved session throughout.
func TestBadInputOverHTTP(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	good := newClient(t, srv)
	good.initialize("2025-11-25")
	c := newClient(t, srv)
	c.initialize("2025-11-25")

	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 10<<20) + `"}}}`
	for _, tt := range []struct {
		body   string
		status int
		code   int64
	}{
		{``, 400, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"`, 400, -32700},
		{`<xml/>`, 400, -32700},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", 400, -32700},
		{`null`, 400, -32600},
		{`"ping"`, 400, -32600},
		{`[]`, 400, -32600},
		{`{"jsonrpc":"2.0"}`, 400, -32600},
		{`{"jsonrpc":2,"id":1,"method":"ping"}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":{},"method":"ping"}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":7}`, 400, -32600},
		{`{"jsonrpc":"2.0","method":"notifications/x","params":"bad"}`, 400, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`, 200, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"x"}}`, 200, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":{}}}`, 200, -32602},
		{`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":[]}}`, 200, -32601},
		{`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":5}}`, 200, -32602},
		{big, 413, -32600},
	} {
		resp := c.post(tt.body)
		body := readAll(t, resp)
		if resp.StatusCode != tt.status || errorCode(t, body) != tt.code {
			t.Errorf("%.50q: %d %.200s, want %d and code %d", tt.body, resp.StatusCode, body, tt.status, tt.code)
		}
		if st, body := good.call(1, "tools/call", `{"name":"echo","arguments":{"text":"fine"}}`); st != 200 || !strings.Contains(body, "fine") {
			t.Fatalf("the good session stopped working after %.50q: %d %s", tt.body, st, body)
		}
	}

	// The same oversized body without a declared length (chunked) is cut
	// off at the limit while it streams in.
	req, _ := http.NewRequest(http.MethodPost, c.url, io.MultiReader(strings.NewReader(big)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 413 || errorCode(t, body) != -32600 {
		t.Errorf("chunked oversized body: %d %.200s, want 413", resp.StatusCode, body)
	}
}

// An abandoned, half-sent request is given up after BodyReadTimeout and the
// server goes on serving. The timeout is short here and in a test of its
// own, so that the other bad inputs never race it on a slow machine.
func TestAbandonedBody(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{BodyReadTimeout: 200 * time.Millisecond})
	good := newClient(t, srv)
	good.initialize("2025-11-25")
	c := newClient(t, srv)
	c.initialize("2025-11-25")

	// An abandoned, half-sent request: headers promise a body that never
	// comes. The server gives up on it and keeps serving.
	addr := strings.TrimPrefix(srv.URL, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", addr, c.sid)
	if st, _ := good.call(2, "ping", ""); st != 200 {
		t.Errorf("ping while a request hangs: %d", st)
	}
	conn.SetReadDeadline(time.Now().Add(waitFor))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to the abandoned request: %v", err)
	}
	if resp.StatusCode != 400 {
		t.Errorf("abandoned request: %d", resp.StatusCode)
	}
}

// An initialize with fields of the wrong type is refused with -32602 and
// opens no session.
func TestBadInitialize(t *testing.T) {
	h, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	for _, params := range []string{
		`{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}`,
		`{"protocolVersion":"2025-11-25","capabilities":"all","clientInfo":{"name":"t","version":"1"}}`,
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":["t","1"]}`,
		`{"protocolVersion":"2025-11-25","capabilities":{"sampling":7},"clientInfo":{"name":"t","version":"1"}}`,
		`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":1,"version":"1"}}`,
	} {
		resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + params + `}`)
		body := readAll(t, resp)
		if resp.StatusCode != 200 || errorCode(t, body) != -32602 || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Errorf("%s: %d %s (session %q), want -32602 and no session", params, resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id"))
		}
	}
	// The failed initializes hold no slot in the session table.
	deadline := time.Now().Add(waitFor)
	for h.SessionCount() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := h.SessionCount(); n != 0 {
		t.Errorf("%d sessions left after failed initializes", n)
	}
}

// Text that is not JSON is answered with a null id, even where an id shows
// in it, and an object that is no request, notification or response is
// answered with -32600, never dropped: in a POST, in a batch and on the
// 2024-11-05 SSE transport alike.
func TestNoIDForParseErrorsAndNoSilenceForNonMessages(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{LegacySSE: true})
	tests := []struct {
		body string
		code int64
		id   string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, `null`},
		{`{"jsonrpc":"2.0","id":8,"method":"ping"} {}`, -32700, `null`},
		{`{}`, -32600, `null`},
		{`{"jsonrpc":"2.0"}`, -32600, `null`},
		{`{"id":1}`, -32600, `1`},
	}
	t.Run("POST", func(t *testing.T) {
		c := newClient(t, srv)
		c.initialize("2025-11-25")
		for _, tt := range tests {
			resp := c.post(tt.body)
			body := readAll(t, resp)
			if resp.StatusCode != 400 || !isError(body, tt.code, tt.id) {
				t.Errorf("%s: %d %s, want 400, code %d and id %s", tt.body, resp.StatusCode, body, tt.code, tt.id)
			}
		}
	})
	t.Run("batch", func(t *testing.T) {
		c := newClient(t, srv)
		c.initialize("2025-03-26")
		resp := c.post(`[{},{"jsonrpc":"2.0"},{"id":3},{"jsonrpc":"2.0","method":"notifications/x"}]`)
		body := readAll(t, resp)
		var replies []json.RawMessage
		if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &replies) != nil || len(replies) != 3 ||
			!isError(string(replies[0]), -32600, `null`) || !isError(string(replies[1]), -32600, `null`) || !isError(string(replies[2]), -32600, `3`) {
			t.Errorf("%d %s, want an array of three -32600 errors, ids null, null and 3", resp.StatusCode, body)
		}
	})
	t.Run("legacy SSE", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		stream, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer stream.Body.Close()
		endpoint := readEvents(t, stream.Body, 1)[0].data
		post := func(body string) {
			t.Helper()
			resp, err := srv.Client().Post(srv.URL+endpoint, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if readAll(t, resp); resp.StatusCode != 202 {
				t.Fatalf("%s: %d", body, resp.StatusCode)
			}
		}
		post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
		readEvents(t, stream.Body, 1)
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for _, tt := range tests {
			post(tt.body)
			if ev := readEvents(t, stream.Body, 1); !isError(ev[0].data, tt.code, tt.id) {
				t.Errorf("%s: event %+v, want code %d and id %s", tt.body, ev[0], tt.code, tt.id)
			}
		}
	})
}

// isError reports whether msg is a JSON-RPC error with code and the id
// whose JSON text is id.
func isError(msg string, code int64, id string) bool {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct{ Code int64 }
	}
	return json.Unmarshal([]byte(msg), &m) == nil && m.Error != nil && m.Error.Code == code && string(m.ID) == id
}
