package mcphttp

import (
	"net/http"
	"strings"
	"testing"
)

func TestStatusCodes(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{MaxBodySize: 1 << 20})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	other := newClient(t, srv)
	other.initialize("2025-11-25")

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	for _, tt := range []struct {
		name   string
		body   string
		hdr    []string
		status int
		code   int64 // JSON-RPC error code expected in the body, 0 for none
	}{
		{"ok", call, nil, 200, 0},
		{"foreign host", call, []string{"Host", "evil.example.com"}, 403, -32600},
		{"foreign origin", call, []string{"Origin", "http://evil.example.com"}, 403, -32600},
		{"null origin", call, []string{"Origin", "null"}, 403, -32600},
		{"own origin", call, []string{"Origin", "http://localhost:1234"}, 200, 0},
		{"no accept", call, []string{"Accept", ""}, 406, -32600},
		{"json only accept", call, []string{"Accept", "application/json"}, 406, -32600},
		{"wildcard accept", call, []string{"Accept", "*/*"}, 200, 0},
		{"form content type", call, []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, -32600},
		{"json with charset", call, []string{"Content-Type", "application/json; charset=utf-8"}, 200, 0},
		{"unsupported protocol version", call, []string{"Mcp-Protocol-Version", "2099-01-01"}, 400, -32600},
		{"unsupported version without session", call, []string{"Mcp-Protocol-Version", "1.0", "Mcp-Session-Id", ""}, 400, -32600},
		{"other supported version in session", call, []string{"Mcp-Protocol-Version", "2025-03-26"}, 200, 0},
		{"missing session", call, []string{"Mcp-Session-Id", ""}, 400, -32600},
		{"unknown session", call, []string{"Mcp-Session-Id", "nope"}, 404, -32001},
		{"parse error", `{"jsonrpc":"2.0",`, nil, 400, -32700},
		{"not a message", `42`, nil, 400, -32600},
		{"empty object", `{}`, nil, 400, -32600},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/whatever"}`, nil, 202, 0},
		{"response", `{"jsonrpc":"2.0","id":99,"result":{}}`, nil, 202, 0},
		{"batch outside 2025-03-26", `[` + call + `]`, nil, 400, -32600},
		{"second initialize", `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, nil, 400, -32600},
		{"method not found is in-band", `{"jsonrpc":"2.0","id":3,"method":"nope"}`, nil, 200, -32601},
		{"too large", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, nil, 413, -32600},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.post(tt.body, tt.hdr...)
			body := readAll(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.code != 0 && errorCode(t, body) != tt.code {
				t.Errorf("body %s, want code %d", body, tt.code)
			}
			if tt.status == 202 && body != "" {
				t.Errorf("202 with a body: %q", body)
			}
		})
	}

	// A session bound to another principal is not found.
	principal := "alice"
	_, psrv := startHTTP(t, testServer(), &Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	alice := newClient(t, psrv)
	alice.headers["X-User"] = principal
	alice.initialize("2025-11-25")
	resp := alice.post(call, "X-User", "mallory")
	if body := readAll(t, resp); resp.StatusCode != 404 {
		t.Errorf("other principal: %d %s", resp.StatusCode, body)
	}

	// Methods.
	for _, m := range []string{http.MethodPut, http.MethodPatch} {
		req, _ := http.NewRequest(m, c.url, nil)
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, POST, DELETE" {
			t.Errorf("%s: %d Allow=%q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	// DELETE ends the session; it is then 404.
	del := func(sid string) int {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		return resp.StatusCode
	}
	if st := del(""); st != 400 {
		t.Errorf("DELETE without session: %d", st)
	}
	if st := del(other.sid); st != 200 {
		t.Errorf("DELETE: %d", st)
	}
	if st := del(other.sid); st != 404 {
		t.Errorf("second DELETE: %d", st)
	}
	if st, _ := other.call(5, "ping", ""); st != 404 {
		t.Errorf("request on a deleted session: %d", st)
	}
	// Unknown paths, the OAuth well-known ones included, are 404 when
	// auth is off.
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-authorization-server", "/other"} {
		resp, err := c.hc.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		if resp.StatusCode != 404 {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
}

func TestLoopbackHostsAccepted(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, host := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST"} {
		resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			"Host", host, "Origin", "http://"+host)
		if body := readAll(t, resp); resp.StatusCode != 200 {
			t.Errorf("Host %s: %d %s", host, resp.StatusCode, body)
		}
	}
	_, srv2 := startHTTP(t, testServer(), &Options{AllowedHosts: []string{"mcp.example.com"}, AllowedOrigins: []string{"https://app.example.com"}})
	c2 := newClient(t, srv2)
	for _, tt := range []struct {
		host, origin string
		status       int
	}{
		{"mcp.example.com", "", 200},
		{"mcp.example.com:443", "https://app.example.com", 200},
		{"mcp.example.com", "https://evil.example.com", 403},
		{"other.example.com", "", 403},
	} {
		resp := c2.post(`{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Host", tt.host, "Origin", tt.origin, "Mcp-Session-Id", "")
		readAll(t, resp)
		if resp.StatusCode != tt.status && !(tt.status == 200 && resp.StatusCode == 400) {
			t.Errorf("%s %s: %d", tt.host, tt.origin, resp.StatusCode)
		}
	}
}

func TestGETStream(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	get := func(hdr ...string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		if c.sid != "" {
			req.Header.Set("Mcp-Session-Id", c.sid)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Without a session (and without auth): 400, never 401.
	if resp := get(); resp.StatusCode != 400 {
		t.Errorf("GET without session: %d", resp.StatusCode)
	} else {
		readAll(t, resp)
	}
	c.initialize("2025-11-25")
	first := get()
	if first.StatusCode != 200 || first.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", first.StatusCode, first.Header.Get("Content-Type"))
	}
	// The priming event (2025-11-25) opens it.
	if ev := readEvents(t, first.Body, 1); ev[0].id == "" || ev[0].data != "" || ev[0].retry == "" {
		t.Errorf("priming event %+v", ev)
	}
	if second := get(); second.StatusCode != 409 {
		t.Errorf("second GET: %d", second.StatusCode)
	} else {
		readAll(t, second)
	}
	if resp := get("Accept", "application/json"); resp.StatusCode != 406 {
		t.Errorf("GET without text/event-stream: %d", resp.StatusCode)
	} else {
		readAll(t, resp)
	}
	if resp := get("Last-Event-ID", "garbage"); resp.StatusCode != 400 {
		t.Errorf("malformed Last-Event-ID: %d", resp.StatusCode)
	} else {
		readAll(t, resp)
	}
	first.Body.Close()
}

func TestStateless(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{Stateless: true})
	c := newClient(t, srv)
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("stateless initialize: %d %q %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	c.version = "2025-06-18"
	if st, body := c.call(2, "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`); st != 200 || !strings.Contains(body, `"text":"hi"`) {
		t.Errorf("stateless call: %d %s", st, body)
	}
	if st, body := c.call(3, "tools/call", `{"name":"progress"}`); st != 200 || !strings.Contains(body, `"done"`) {
		t.Errorf("stateless progress call: %d %s", st, body)
	}
	// Server-to-client requests cannot work without a session.
	if _, body := c.call(4, "tools/call", `{"name":"sample"}`); !strings.Contains(body, "isError") {
		t.Errorf("stateless sampling: %s", body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		req, _ := http.NewRequest(m, c.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, _ := c.hc.Do(req)
		readAll(t, resp)
		if resp.StatusCode != 405 {
			t.Errorf("stateless %s: %d", m, resp.StatusCode)
		}
	}
}

func TestBatchIn20250326Session(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	c.initialize("2025-03-26")
	resp := c.post(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"b"}}}]`)
	body := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "[") || strings.Count(body, `"jsonrpc"`) != 2 {
		t.Errorf("batch: %d %s", resp.StatusCode, body)
	}
	resp = c.post(`[{"jsonrpc":"2.0","method":"notifications/x"}]`)
	if readAll(t, resp); resp.StatusCode != 202 {
		t.Errorf("notification batch: %d", resp.StatusCode)
	}
}

func TestCORS(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{CORS: true, AllowedOrigins: []string{"https://app.example.com"}})
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/mcp", nil)
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Mcp-Session-Id") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	c := newClient(t, srv)
	resp = c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "Origin", "https://app.example.com")
	readAll(t, resp)
	if !strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("expose headers: %v", resp.Header)
	}
}
