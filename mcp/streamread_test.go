package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// Requests of one pipelined write run at once, each on a goroutine of its
// own: two tools that each wait for the other both finish. Run one after
// the other on the reader, the first would wait forever.
func TestPipelinedRequestsRunInParallel(t *testing.T) {
	s := NewServer(nil, nil)
	aHere, bHere := make(chan struct{}), make(chan struct{})
	meet := func(mine, theirs chan struct{}) ToolHandlerFor[struct{}, any] {
		return func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
			close(mine)
			select {
			case <-theirs:
				return TextResult("met"), nil, nil
			case <-time.After(waitFor):
				return nil, nil, fmt.Errorf("the other request never ran")
			}
		}
	}
	AddTool(s, &Tool{Name: "a"}, meet(aHere, bHere))
	AddTool(s, &Tool{Name: "b"}, meet(bHere, aHere))
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send("%s\n%s",
		`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"b"}}`)
	for range 2 {
		if m := p.recv(); m.Error != nil || !strings.Contains(m.Raw, `"met"`) || strings.Contains(m.Raw, `"isError":true`) {
			t.Errorf("answer %s", m.Raw)
		}
	}
}

// A session whose every slot holds a handler waiting for the client's
// answer still reads: a request past the bound is refused at once, and
// the answers and a cancellation that follow it reach their handlers. A
// reader that waited for a free slot would never read them.
func TestFullSessionStillReadsAnswersAndCancellations(t *testing.T) {
	const slots = 4
	s := NewServer(nil, &ServerOptions{MaxConcurrentRequests: slots, ClientRequestTimeout: time.Hour})
	AddTool(s, &Tool{Name: "ask"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		res, err := req.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return TextResult("hello " + res.Content["name"].(string)), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, `{"elicitation":{}}`)
	for i := range slots {
		p.send(`{"jsonrpc":"2.0","id":"ask%d","method":"tools/call","params":{"name":"ask"}}`, i)
	}
	// Each handler asks; the questions come in any order.
	var questions []string
	for range slots {
		m := p.recv()
		if m.Method != "elicitation/create" {
			t.Fatalf("want an elicitation, got %s", m.Raw)
		}
		questions = append(questions, string(m.ID))
	}
	// Past the bound: refused, and the answers behind it are still read.
	p.send(`{"jsonrpc":"2.0","id":"over","method":"tools/call","params":{"name":"ask"}}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"ask0","reason":"enough"}}`)
	for _, id := range questions {
		p.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, id)
	}
	// A handler whose question was cancelled tells the client so: skip
	// notifications.
	if m := p.recvResponse(); string(m.ID) != `"over"` || m.Error == nil || !strings.Contains(m.Error.Message, fmt.Sprintf("%d requests", slots)) {
		t.Fatalf("the request past the bound: %s", m.Raw)
	}
	answered := map[string]bool{}
	for range slots - 1 { // ask0 was cancelled: no response
		m := p.recvResponse()
		if m.Error != nil || !strings.Contains(m.Raw, "hello Ada") {
			t.Fatalf("answer %s", m.Raw)
		}
		answered[string(m.ID)] = true
	}
	if answered[`"ask0"`] {
		t.Error("the cancelled request was answered")
	}
	// The slots are free again.
	p.send(`{"jsonrpc":"2.0","id":"again","method":"tools/call","params":{"name":"ask"}}`)
	m := p.recvResponse()
	if m.Method != "elicitation/create" {
		t.Fatalf("want an elicitation, got %s", m.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Bo"}}}`, m.ID)
	if m := p.recvResponse(); string(m.ID) != `"again"` || !strings.Contains(m.Raw, "hello Bo") {
		t.Fatalf("answer %s", m.Raw)
	}
}

type serveKey struct{}

// A request's context keeps the values of ServeConn's context, and is
// cancelled, with a cause, when ServeConn's shutdown grace ends with the
// request still running.
func TestRequestContextsOfServeConn(t *testing.T) {
	started := make(chan string, 1)
	causes := make(chan error, 1)
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "wait"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		v, _ := ctx.Value(serveKey{}).(string)
		started <- v
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, nil, ctx.Err()
	})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go io.Copy(io.Discard, cr)
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), serveKey{}, "from ServeConn"))
	served := make(chan error, 1)
	go func() {
		served <- s.ServeConn(ctx, NewStdioConn(sr, sw, 0), &ServeOptions{ShutdownTimeout: 20 * time.Millisecond})
	}()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`,
	} {
		if _, err := cw.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case v := <-started:
		if v != "from ServeConn" {
			t.Errorf("the request's context holds %q, want ServeConn's value", v)
		}
	case <-time.After(waitFor):
		t.Fatal("the tool did not start")
	}
	cancel()
	select {
	case cause := <-causes:
		if cause == nil {
			t.Error("cancelled without a cause")
		}
	case <-time.After(waitFor):
		t.Fatal("the request was not cancelled at the end of the shutdown grace")
	}
	select {
	case <-served:
	case <-time.After(waitFor):
		t.Fatal("ServeConn did not return")
	}
	cw.Close()
}
