package mcp

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// longGrace makes the watcher hand reading off only after an hour, so
// that what a test sees comes from the reader's own choices.
func longGrace(t *testing.T) {
	inlineGraceTest.Store(int64(time.Hour))
	t.Cleanup(func() { inlineGraceTest.Store(0) })
}

func slowServer(release <-chan struct{}) *Server {
	s := NewServer(nil, &ServerOptions{ClientRequestTimeout: time.Hour})
	AddTool(s, &Tool{Name: "slow"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		<-release
		return TextResult("slow"), nil, nil
	})
	AddTool(s, &Tool{Name: "roots"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return nil, nil, err
		}
		return TextResult(roots.Roots[0].URI), nil, nil
	})
	return s
}

// A request read when no other input waits runs on the reading goroutine:
// with the watcher held off, a ping sent after it is read only once it
// has been answered.
func TestInlineRunsOnReader(t *testing.T) {
	longGrace(t)
	release := make(chan struct{})
	p := startPeer(t, slowServer(release), nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow"}}`)
	time.Sleep(20 * time.Millisecond) // let the reader take it alone
	p.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	select {
	case line := <-p.msgs:
		t.Fatalf("answered while the inline request runs: %s", line)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if m := p.recv(); string(m.ID) != `"s"` {
		t.Fatalf("first answer %s, want the slow request's", m.Raw)
	}
	if m := p.recv(); string(m.ID) != `"p"` {
		t.Fatalf("second answer %s, want the ping's", m.Raw)
	}
}

// A pipelined burst after a slow request is handed off, so the rest of
// the burst goes on without it; a burst of quick requests is answered
// whole.
func TestPipelinedRequestHandedOff(t *testing.T) {
	longGrace(t)
	release := make(chan struct{})
	s := slowServer(release)
	AddTool(s, &Tool{Name: "quick"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		return TextResult("quick"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	var burst []string
	for i := range 20 {
		burst = append(burst, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick"}}`, i))
	}
	p.send("%s", strings.Join(burst, "\n"))
	seen := map[string]bool{}
	for range 20 {
		m := p.recv()
		if seen[string(m.ID)] || !strings.Contains(m.Raw, `"quick"`) {
			t.Fatalf("answer %s", m.Raw)
		}
		seen[string(m.ID)] = true
	}
	// A slow request runs inline alone...
	p.send(`{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"slow"}}`)
	time.Sleep(20 * time.Millisecond)
	release <- struct{}{}
	if m := p.recv(); string(m.ID) != `"s1"` {
		t.Fatalf("answer %s, want s1's", m.Raw)
	}
	// ...and the burst after it is handed off.
	p.send("%s\n%s", `{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"slow"}}`, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := p.recv(); string(m.ID) != `"p"` {
		t.Fatalf("first answer %s, want the ping's", m.Raw)
	}
	release <- struct{}{}
	if m := p.recv(); string(m.ID) != `"s2"` {
		t.Fatalf("answer %s, want s2's", m.Raw)
	}
}

// One slow request in a long pipelined stream hands off only the next
// inlineProbeEvery requests: then one runs inline again, finds them quick,
// and the rest of the stream runs inline too.
func TestPipelinedStreamProbesAfterSlowRequest(t *testing.T) {
	longGrace(t)
	// Quick is under 5 ms even under the race detector on a busy machine.
	const burstMax = 5 * time.Millisecond
	inlineBurstMaxTest.Store(int64(burstMax))
	t.Cleanup(func() { inlineBurstMaxTest.Store(0) })
	var inline, handedOff atomic.Int32
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "sleep"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		time.Sleep(2 * burstMax)
		return TextResult("slept"), nil, nil
	})
	AddTool(s, &Tool{Name: "quick"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		if req.reader != nil {
			inline.Add(1)
		} else {
			handedOff.Add(1)
		}
		return TextResult("quick"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	const n = 200
	burst := []string{`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"sleep"}}`}
	for i := range n {
		burst = append(burst, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"quick"}}`, i))
	}
	// One write: the whole stream is waiting when the slow one ends.
	p.send("%s", strings.Join(burst, "\n"))
	for range n + 1 {
		p.recv()
	}
	// Without the probe every quick request after the slow one would be
	// handed off; a quick one that ran long (a GC pause, say) may make a
	// few more rounds of inlineProbeEvery (16).
	if handedOff.Load() > 64 || inline.Load()+handedOff.Load() != n {
		t.Errorf("%d of %d quick requests handed off, %d inline", handedOff.Load(), n, inline.Load())
	}
}

// A request running inline that asks the client something gives reading
// away at once: the answer arrives on the stream it would otherwise hold.
func TestInlineRequestAskingClientYields(t *testing.T) {
	longGrace(t)
	p := startPeer(t, slowServer(nil), nil)
	p.initialize(LatestNegotiatedVersion, `{"roots":{}}`)
	p.send(`{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"roots"}}`)
	if m := p.answer(`{"roots":[{"uri":"file:///home"}]}`); m.Method != "roots/list" {
		t.Fatalf("want roots/list, got %s", m.Raw)
	}
	if m := p.recv(); string(m.ID) != `"r"` || !strings.Contains(m.Raw, "file:///home") {
		t.Fatalf("result %s", m.Raw)
	}
	// Reading went on after the yield: the session still answers.
	p.result("ping", "", nil)
}

// With the watcher on, a request that runs long gives reading away: its
// cancellation is read and a later request is answered first.
func TestInlineRequestHandedOffByWatcher(t *testing.T) {
	release := make(chan struct{})
	p := startPeer(t, slowServer(release), nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"slow"}}`)
	time.Sleep(5 * time.Millisecond)
	if m := p.call("ping", ""); m.Error != nil {
		t.Fatalf("ping: %s", m.Raw)
	}
	close(release)
	if m := p.recv(); string(m.ID) != `"s"` {
		t.Fatalf("answer %s, want the slow request's", m.Raw)
	}
}

// A request still running when ServeConn's shutdown grace ends is
// cancelled: its context hangs from the session, which cancels it, not
// from the serving context (requestParent).
func TestShutdownCancelsRequestsInFlight(t *testing.T) {
	started := make(chan struct{})
	causes := make(chan error, 1)
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "wait"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		close(started)
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil, nil, ctx.Err()
	})
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go io.Copy(io.Discard, cr)
	ctx, cancel := context.WithCancel(context.Background())
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
	case <-started:
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
