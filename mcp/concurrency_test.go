package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "work"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			if err := req.NotifyProgress(float64(i), 3, "step"); err != nil {
				return nil, nil, err
			}
		}
		if err := req.NotifyProgress(2, 3, ""); err == nil {
			return nil, nil, errors.New("decreasing progress was accepted")
		}
		return TextResult("done"), nil, nil
	})
	AddTool(s, &Tool{Name: "quiet"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		if err := req.NotifyProgress(1, 0, ""); !errors.Is(err, ErrNoProgressToken) {
			return nil, nil, errors.New("progress without a token")
		}
		return TextResult("done"), nil, nil
	})
	for _, tok := range []string{`"abc"`, `7`, `"7"`} {
		p := startPeer(t, s, nil)
		p.initialize(LatestNegotiatedVersion, "")
		p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":%s}}}`, tok)
		for i := 1; i <= 3; i++ {
			m := p.recv()
			if m.Method != "notifications/progress" {
				t.Fatalf("want progress, got %s", m.Raw)
			}
			if want := `{"progressToken":` + tok + `,"progress":` + string(rune('0'+i)) + `,"total":3,"message":"step"}`; string(m.Params) != want {
				t.Errorf("progress %s, want %s", m.Params, want)
			}
		}
		if m := p.recv(); string(m.ID) != "1" || strings.Contains(m.Raw, "isError") {
			t.Errorf("result: %s", m.Raw)
		}
		p.result("tools/call", `{"name":"quiet"}`, nil)
	}
	// No message field for 2024-11-05.
	p := startPeer(t, s, nil)
	p.initialize("2024-11-05", "")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work","_meta":{"progressToken":1}}}`)
	if m := p.recv(); strings.Contains(string(m.Params), "message") {
		t.Errorf("2024-11-05 progress has a message: %s", m.Params)
	}
}

func TestCancellation(t *testing.T) {
	s := NewServer(nil, nil)
	started := make(chan struct{})
	stopped := make(chan error, 1)
	AddTool(s, &Tool{Name: "wait"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		close(started)
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return TextResult("too late"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"w","method":"tools/call","params":{"name":"wait"}}`)
	<-started
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w","reason":"user hit stop"}}`)
	select {
	case cause := <-stopped:
		if !strings.Contains(cause.Error(), "user hit stop") {
			t.Errorf("cause %v", cause)
		}
	case <-time.After(waitFor):
		t.Fatal("handler not cancelled")
	}
	// No response is sent for the cancelled request.
	p.expectQuiet()
	// Cancelling initialize or a finished request is a no-op.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w"}}`)
	p.expectQuiet()
}

func TestSlowToolDoesNotBlock(t *testing.T) {
	s := NewServer(nil, nil)
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "slow"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		<-release
		return TextResult("slow"), nil, nil
	})
	AddTool(s, &Tool{Name: "fast"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		return TextResult("fast"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow"}}`)
	p.result("ping", "", nil)
	p.result("tools/call", `{"name":"fast"}`, nil)
	close(release)
	if m := p.recv(); string(m.ID) != `"slow"` {
		t.Errorf("got %s", m.Raw)
	}
}

func TestConcurrencyBound(t *testing.T) {
	s := NewServer(nil, &ServerOptions{MaxConcurrentRequests: 2})
	release := make(chan struct{})
	var running sync.WaitGroup
	running.Add(2)
	AddTool(s, &Tool{Name: "slow"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		running.Done()
		<-release
		return TextResult("slow"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`)
	running.Wait()
	p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow"}}`)
	m := p.recv()
	if string(m.ID) != "3" || m.Error == nil || !strings.Contains(m.Error.Message, "2 requests") {
		t.Fatalf("over the bound: %s", m.Raw)
	}
	p.result("ping", "", nil) // ping is never refused
	close(release)
	p.recv()
	p.recv()
}

// client answers server-to-client requests like a real client would.
func (p *peer) answer(result string) *msg {
	p.t.Helper()
	m := p.recv()
	if m.Method == "" || m.ID == nil {
		p.t.Fatalf("want a request from the server, got %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)
	return m
}

func TestServerToClientRequests(t *testing.T) {
	s := NewServer(nil, &ServerOptions{ClientRequestTimeout: time.Hour})
	AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return nil, nil, err
		}
		sample, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 10, Messages: []*SamplingMessage{NewSamplingMessage(RoleUser, &TextContent{Text: "hi"})}})
		if err != nil {
			return nil, nil, err
		}
		el, err := req.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return TextResult(roots.Roots[0].URI + " " + sample.Model + " " + el.Action + " " + el.Content["name"].(string)), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, `{"roots":{},"sampling":{},"elicitation":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"ask"}}`)
	if m := p.answer(`{"roots":[{"uri":"file:///home"}]}`); m.Method != "roots/list" {
		t.Errorf("first request %s", m.Raw)
	}
	if m := p.answer(`{"role":"assistant","content":{"type":"text","text":"hello"},"model":"m1"}`); m.Method != "sampling/createMessage" || !strings.Contains(string(m.Params), `"maxTokens":10`) {
		t.Errorf("sampling request %s", m.Raw)
	}
	if m := p.answer(`{"action":"accept","content":{"name":"Ada"}}`); m.Method != "elicitation/create" || !strings.Contains(string(m.Params), `"requestedSchema"`) {
		t.Errorf("elicitation request %s", m.Raw)
	}
	var res CallToolResult
	m := p.recv()
	json.Unmarshal(m.Result, &res)
	if res.IsError || res.Content[0].(*TextContent).Text != "file:///home m1 accept Ada" {
		t.Errorf("result %s", m.Raw)
	}
}

func TestServerToClientChecksCapabilities(t *testing.T) {
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{ What string }) (*CallToolResult, any, error) {
		var err error
		switch in.What {
		case "sampling":
			_, err = req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1})
		case "tools":
			_, err = req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 1, Tools: []*Tool{{Name: "x"}}})
		case "url":
			_, err = req.Elicit(ctx, &ElicitParams{Mode: "url", Message: "go", URL: "https://example.com", ElicitationID: "e1"})
		case "form":
			_, err = req.Elicit(ctx, &ElicitParams{Message: "go"})
		case "roots":
			_, err = req.ListRoots(ctx)
		}
		if !errors.Is(err, ErrCapabilityNotSupported) {
			return nil, nil, errors.New("no capability error")
		}
		return TextResult("refused"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, `{"sampling":{},"elicitation":{"url":{}}}`)
	for _, what := range []string{"tools", "form", "roots"} {
		var res CallToolResult
		p.result("tools/call", `{"name":"ask","arguments":{"What":"`+what+`"}}`, &res)
		if res.IsError {
			t.Errorf("%s: %+v", what, res.Content[0])
		}
	}
	p2 := startPeer(t, s, nil)
	p2.initialize("2025-06-18", `{"elicitation":{"url":{}}}`)
	for _, what := range []string{"sampling", "url"} {
		var res CallToolResult
		p2.result("tools/call", `{"name":"ask","arguments":{"What":"`+what+`"}}`, &res)
		if res.IsError {
			t.Errorf("%s at 2025-06-18: %+v", what, res.Content[0])
		}
	}
}

func TestServerToClientTimeoutCancels(t *testing.T) {
	s := NewServer(nil, &ServerOptions{ClientRequestTimeout: 50 * time.Millisecond})
	AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		_, err := req.ListRoots(ctx)
		return nil, nil, err
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, `{"roots":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"ask"}}`)
	req := p.recv()
	if req.Method != "roots/list" {
		t.Fatalf("got %s", req.Raw)
	}
	// The client never answers; the server gives up and says so.
	m := p.recv()
	if m.Method != "notifications/cancelled" || !strings.Contains(string(m.Params), string(req.ID)) {
		t.Fatalf("want cancelled for %s, got %s", req.ID, m.Raw)
	}
	m = p.recv()
	if string(m.ID) != `"t"` || !strings.Contains(m.Raw, "deadline exceeded") {
		t.Errorf("result %s", m.Raw)
	}
	// A late answer is dropped.
	p.send(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[]}}`, req.ID)
	p.expectQuiet()
}

func TestMiddlewareSeesEveryMethod(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mw := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (any, error) {
			mu.Lock()
			seen = append(seen, req.Method)
			mu.Unlock()
			if req.Method == "tools/call" && strings.Contains(string(req.RawParams), "forbidden") {
				return nil, errors.New("denied by policy")
			}
			return next(ctx, req)
		}
	}
	s := echoServer(&ServerOptions{Middleware: []Middleware{mw}})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.result("tools/list", "", nil)
	code, msg := p.rpcError("tools/call", `{"name":"echo","arguments":{"text":"forbidden"}}`)
	if code != -32603 || msg != "denied by policy" {
		t.Errorf("middleware error: %d %q", code, msg)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/custom"}`)
	p.result("ping", "", nil)
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, " "); got != "initialize notifications/initialized tools/list tools/call notifications/custom ping" {
		t.Errorf("middleware saw %s", got)
	}
}

func TestElicitationComplete(t *testing.T) {
	s := echoServer(nil)
	sessions := make(chan *ServerSession, 1)
	s.opts.InitializedHandler = func(ctx context.Context, ss *ServerSession) { sessions <- ss }
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, `{"elicitation":{"url":{}}}`)
	ss := <-sessions
	if err := ss.NotifyElicitationComplete("e-1"); err != nil {
		t.Fatal(err)
	}
	if m := p.recv(); m.Method != "notifications/elicitation/complete" || string(m.Params) != `{"elicitationId":"e-1"}` {
		t.Errorf("got %s", m.Raw)
	}
	p2 := startPeer(t, s, nil)
	p2.initialize("2025-06-18", `{"elicitation":{}}`)
	if err := (<-sessions).NotifyElicitationComplete("e-2"); !errors.Is(err, ErrCapabilityNotSupported) {
		t.Errorf("2025-06-18: %v", err)
	}
}
