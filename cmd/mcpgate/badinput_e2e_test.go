package main

import (
	"bufio"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Bad input, as a client with a bug sends it, through the real binary on
// every transport: text that is not JSON has no id (JSON-RPC 2.0 section
// 5), even where one shows in it, and an object that is no request,
// notification or response is answered with -32600, never dropped.
var badInputs = []struct {
	in   string
	code int
	id   string
}{
	{`{"jsonrpc":"2.0","id":7,"method":`, -32700, `null`},
	{`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"a":}}`, -32700, `null`},
	{`{}`, -32600, `null`},
	{`{"jsonrpc":"2.0"}`, -32600, `null`},
	{`{"id":1}`, -32600, `1`},
}

func TestBadInputOverStdioE2E(t *testing.T) {
	p := start(t, serveArgs(filepath.Join(t.TempDir(), "tasks.db"))...)
	p.initialize()
	for _, tt := range badInputs {
		// The ping after each bad line proves that nothing was dropped:
		// its answer would come first.
		p.send(tt.in)
		p.send(`{"jsonrpc":"2.0","id":"next","method":"ping"}`)
		checkError(t, p.recv(), tt.id, tt.code, "")
		if r := p.recv(); r != `{"jsonrpc":"2.0","id":"next","result":{}}` {
			t.Errorf("after %s: %s, want the ping's answer", tt.in, r)
		}
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

func TestBadInputOverHTTPE2E(t *testing.T) {
	p := startHTTP(t)
	h := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	r := curl(t, "POST", p.url, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"8"}}}`)
	if r.status != 200 || r.session == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	h["Mcp-Session-Id"], h["MCP-Protocol-Version"] = r.session, "2025-11-25"
	curl(t, "POST", p.url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tt := range badInputs {
		r := curl(t, "POST", p.url, h, tt.in)
		if r.status != 400 {
			t.Errorf("%s: status %d, want 400", tt.in, r.status)
		}
		checkError(t, r.body, tt.id, tt.code, "")
	}
}

// The 2024-11-05 transport answers on its SSE stream.
func TestBadInputOverLegacySSEE2E(t *testing.T) {
	p := startHTTP(t)
	base := strings.TrimSuffix(p.url, "/mcp")
	req, _ := http.NewRequest("GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /sse: %v %v", err, resp)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 16)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, d}
			}
		}
		close(events)
	}()
	next := func() [2]string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the SSE stream ended:\n%s", p.log())
			}
			return ev
		case <-time.After(waitFor):
			t.Fatalf("no event on the SSE stream:\n%s", p.log())
			return [2]string{}
		}
	}
	ep := next()
	if ep[0] != "endpoint" {
		t.Fatalf("first event %v, want the endpoint", ep)
	}
	post := func(body string) {
		t.Helper()
		r := curl(t, "POST", base+ep[1], map[string]string{"Content-Type": "application/json"}, body)
		if r.status != 202 {
			t.Fatalf("POST %s: %d %s", body, r.status, r.body)
		}
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`)
	if ev := next(); !strings.Contains(ev[1], `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize: %v", ev)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, tt := range badInputs {
		post(tt.in)
		checkError(t, next()[1], tt.id, tt.code, "")
	}
}
