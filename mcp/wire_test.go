package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

func TestIDsEchoedExactly(t *testing.T) {
	p := startPeer(t, echoServer(nil), nil)
	p.initialize(LatestNegotiatedVersion, "")
	for _, id := range []string{`1`, `"1"`, `0`, `-5`, `18446744073709551617`, `"\ud800"`, `"\u0041"`, `"` + strings.Repeat("x", 100<<10) + `"`} {
		p.send(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id)
		m := p.recv()
		if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; m.Raw != want {
			t.Errorf("reply to id %.40s = %.80s", id, m.Raw)
		}
		p.send(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, id)
		if m := p.recv(); !strings.HasPrefix(m.Raw, `{"jsonrpc":"2.0","id":`+id+`,"result":`) {
			t.Errorf("tools/call reply to id %.40s = %.80s", id, m.Raw)
		}
	}
}

func TestMalformedMessagesGetErrorsAndTheSessionGoesOn(t *testing.T) {
	p := startPeer(t, echoServer(nil), nil)
	p.initialize(LatestNegotiatedVersion, "")
	for _, tt := range []struct {
		in   string
		code int64
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"nope/nope"}`, -32601, `1`},
		{`not json`, -32700, `null`},
		// Text that is not JSON has no id, even one visible in it.
		{`{"jsonrpc":"2.0","id":2,"method":"ping"`, -32700, `null`},
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, `null`},
		{`{"jsonrpc":"2.0","id":2,"method":"ping"} {}`, -32700, `null`},
		{"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"p\xffing\"}", -32700, `null`},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, `null`},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, -32600, `null`},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, `null`},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, `null`},
		{`{"jsonrpc":"2.0","id":[4],"method":"ping"}`, -32600, `null`},
		{`{"id":5,"method":"ping"}`, -32600, `5`},
		{`{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, `6`},
		{`{"jsonrpc":"2.0","id":7}`, -32600, `7`},
		// Objects that are no request, notification or response.
		{`{}`, -32600, `null`},
		{`{"jsonrpc":"2.0"}`, -32600, `null`},
		{`{"id":1}`, -32600, `1`},
		{`{"jsonrpc":"2.0","id":true}`, -32600, `null`},
		{`{"jsonrpc":"2.0","method":1,"params":"bar"}`, -32600, `null`},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[1]}`, -32600, `8`},
		{`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":"x"}`, -32600, `9`},
		{`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":5}}`, -32602, `10`},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"echo","arguments":[1]}}`, -32602, `11`},
		{`[1,2`, -32700, `null`},
		{`"just a string"`, -32600, `null`},
	} {
		p.send("%s", tt.in)
		m := p.recv()
		if m.Error == nil || m.Error.Code != tt.code || string(m.ID) != tt.id {
			t.Errorf("%.60s: got %s, want code %d id %s", tt.in, m.Raw, tt.code, tt.id)
			continue
		}
		if len(m.Error.Message) < 20 {
			t.Errorf("%.60s: message %q says too little", tt.in, m.Error.Message)
		}
	}
	// After all that the session still works.
	var res CallToolResult
	p.result("tools/call", `{"name":"echo","arguments":{"text":"still here"}}`, &res)
	if res.Content[0].(*TextContent).Text != "still here" {
		t.Errorf("echo after errors: %+v", res)
	}
}

func TestNotificationsAreNeverAnswered(t *testing.T) {
	p := startPeer(t, echoServer(nil), nil)
	p.initialize(LatestNegotiatedVersion, "")
	for _, n := range []string{
		`{"jsonrpc":"2.0","method":"notifications/unknown"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"bad":1}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":"bad"}`,
		`{"jsonrpc":"1.0","method":"notifications/initialized"}`,
		`{"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"tools/list"}`, // a request method sent as a notification
		// Responses to requests we never sent are dropped.
		`{"jsonrpc":"2.0","id":12345,"result":{}}`,
		`{"jsonrpc":"2.0","id":"zz","error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`,
	} {
		p.send("%s", n)
	}
	p.expectQuiet()
}

func TestBeforeInitializeNotificationsIgnored(t *testing.T) {
	p := startPeer(t, echoServer(nil), nil)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.expectQuiet()
	p.initialize(LatestNegotiatedVersion, "")
}

func TestDuplicateInFlightID(t *testing.T) {
	s := echoServer(nil)
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "block"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		<-release
		return TextResult("done"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"block"}}`)
	p.send(`{"jsonrpc":"2.0","id":"dup","method":"ping"}`)
	m := p.recv()
	if m.Error == nil || m.Error.Code != -32600 || string(m.ID) != `"dup"` {
		t.Fatalf("duplicate id: %s", m.Raw)
	}
	contains(t, m.Error.Message, "already in use")
	close(release)
	m = p.recv()
	if string(m.ID) != `"dup"` || m.Error != nil {
		t.Fatalf("first request's answer: %s", m.Raw)
	}
	// Once answered, the id may be used again.
	p.send(`{"jsonrpc":"2.0","id":"dup","method":"ping"}`)
	if m := p.recv(); m.Error != nil {
		t.Errorf("reused id after completion: %s", m.Raw)
	}
}

func countingServer(calls *atomic.Int32) *Server {
	s := echoServer(nil)
	AddTool(s, &Tool{Name: "count"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		calls.Add(1)
		return TextResult("counted"), nil, nil
	})
	return s
}

func TestBatchesAt20250326(t *testing.T) {
	var calls atomic.Int32
	p := startPeer(t, countingServer(&calls), nil)
	p.initialize("2025-03-26", "")

	p.send(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/whatever"},{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"count"}},{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}},5,{"jsonrpc":"2.0","id":4,"method":"nope"}]`)
	m := p.recv()
	if !strings.HasPrefix(m.Raw, "[") {
		t.Fatalf("batch reply is not an array: %s", m.Raw)
	}
	for _, want := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"two","result":{"content":[{"type":"text","text":"counted"}]}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: initialize must not be sent inside a batch"}}`,
		`"id":null,"error":{"code":-32600`,
		`{"jsonrpc":"2.0","id":4,"error":{"code":-32601`,
	} {
		contains(t, m.Raw, want)
	}
	if strings.Count(m.Raw, `"jsonrpc"`) != 5 {
		t.Errorf("want 5 entries (none for the notification): %s", m.Raw)
	}
	// An all-notification batch produces no output at all.
	p.send(`[{"jsonrpc":"2.0","method":"notifications/a"},{"jsonrpc":"2.0","method":"notifications/b"}]`)
	p.expectQuiet()
	p.send(`[]`)
	if m := p.recv(); m.Error == nil || m.Error.Code != -32600 {
		t.Errorf("empty batch: %s", m.Raw)
	}
	if calls.Load() != 1 {
		t.Errorf("count ran %d times", calls.Load())
	}
	// Each element that is no message is answered in the array.
	p.send(`[{},{"jsonrpc":"2.0"},{"id":9},{"jsonrpc":"2.0","method":"notifications/c"}]`)
	m = p.recv()
	for _, want := range []string{`{"jsonrpc":"2.0","id":null,"error":{"code":-32600`, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600`} {
		contains(t, m.Raw, want)
	}
	if n := strings.Count(m.Raw, `"code":-32600`); n != 3 {
		t.Errorf("want 3 errors, one per element that is no message: %s", m.Raw)
	}
}

func TestBatchesRejectedWholeAtOtherRevisions(t *testing.T) {
	for _, v := range []string{"", "2024-11-05", "2025-06-18", "2025-11-25"} {
		var calls atomic.Int32
		p := startPeer(t, countingServer(&calls), nil)
		if v != "" {
			p.initialize(v, "")
		}
		p.send(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count"}},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
		m := p.recv()
		if strings.HasPrefix(m.Raw, "[") || m.Error == nil || m.Error.Code != -32600 || string(m.ID) != "null" {
			t.Errorf("%q: batch reply %s", v, m.Raw)
		}
		p.expectQuiet()
		if calls.Load() != 0 {
			t.Errorf("%q: a rejected batch ran a tool", v)
		}
	}
}

func TestOversizedMessage(t *testing.T) {
	p := startPeer(t, echoServer(nil), &ServeOptions{MaxMessageSize: 1000})
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"text":"%s"}}}`, strings.Repeat("a", 5000))
	m := p.recv()
	if m.Error == nil || m.Error.Code != -32600 || string(m.ID) != `"big"` {
		t.Fatalf("oversized: %s", m.Raw)
	}
	contains(t, m.Error.Message, "1000-byte limit")
	// Deeply nested input is refused without harm.
	p.send(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"echo","arguments":{"text":%s}}}`, strings.Repeat("[", 400)+strings.Repeat("]", 400))
	if m := p.recv(); m.Error != nil && m.Error.Code != -32700 {
		t.Fatalf("nested: %s", m.Raw)
	}
	p.result("ping", "", nil)
}
