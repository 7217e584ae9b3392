package mcphttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// eventually polls cond, for effects that happen on timers; the bound is
// there to fail a hang, not to measure anything.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestIdleSessionsExpire(t *testing.T) {
	h, srv := startHTTP(t, testServer(), &Options{SessionIdleTimeout: 50 * time.Millisecond})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	if h.SessionCount() != 1 {
		t.Fatalf("%d sessions", h.SessionCount())
	}
	eventually(t, "expiry", func() bool { return h.SessionCount() == 0 })
	if st, _ := c.call(1, "ping", ""); st != 404 {
		t.Errorf("expired session: %d", st)
	}
}

func TestSessionCapEvictsIdle(t *testing.T) {
	h, srv := startHTTP(t, testServer(), &Options{MaxSessions: 3})
	var clients []*client
	for i := 0; i < 3; i++ {
		c := newClient(t, srv)
		c.initialize("2025-11-25")
		clients = append(clients, c)
	}
	// The oldest idle session gives way to a new one.
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	if h.SessionCount() != 3 {
		t.Errorf("%d sessions", h.SessionCount())
	}
	if st, _ := clients[0].call(1, "ping", ""); st != 404 {
		t.Errorf("evicted session answered %d", st)
	}
	if st, _ := clients[2].call(1, "ping", ""); st != 200 {
		t.Errorf("recent session answered %d", st)
	}
}

func TestSessionCapRefusesWhenAllBusy(t *testing.T) {
	s := testServer()
	started, release := make(chan struct{}), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "blocks"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		close(started)
		<-release
		return mcp.TextResult("ok"), nil, nil
	})
	_, srv := startHTTP(t, s, &Options{MaxSessions: 1})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.call(1, "tools/call", `{"name":"block"}`)
	}()
	<-started
	d := newClient(t, srv)
	resp := d.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if body := readAll(t, resp); resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Errorf("new session while the only one is busy: %d %s", resp.StatusCode, body)
	}
	close(release)
	<-done
}

func TestAbandonedSessionsLeaveNothing(t *testing.T) {
	base := runtime.NumGoroutine()
	h := NewHandler(testServer(), &Options{SessionIdleTimeout: 100 * time.Millisecond, KeepAlive: 20 * time.Millisecond})
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	url := "http://" + ln.Addr().String() + "/mcp"
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	for i := 0; i < 100; i++ {
		c := &client{t: t, url: url, hc: hc, headers: map[string]string{}}
		c.initialize("2025-11-25")
		c.call(1, "tools/call", `{"name":"progress","_meta":{"progressToken":1}}`)
		if i%2 == 0 {
			// Open a GET stream and walk away from it.
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", c.sid)
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readEvents(t, resp.Body, 1)
			resp.Body.Close()
		}
	}
	tr.CloseIdleConnections()
	eventually(t, "every session to expire", func() bool { return h.SessionCount() == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	srv.Shutdown(ctx)
	eventually(t, fmt.Sprintf("goroutines back to %d", base), func() bool { return runtime.NumGoroutine() <= base+2 })
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	if m.HeapInuse > 64<<20 {
		t.Errorf("heap in use %d MiB after all sessions ended", m.HeapInuse>>20)
	}
}

func TestConcurrentSessions(t *testing.T) {
	h, srv := startHTTP(t, testServer(), nil)
	var wg sync.WaitGroup
	errs := make(chan string, 1000)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(t, srv)
			c.initialize("2025-11-25")
			var inner sync.WaitGroup
			for j := 0; j < 8; j++ {
				inner.Add(1)
				go func() {
					defer inner.Done()
					for k := 0; k < 10; k++ {
						id := j*100 + k
						text := fmt.Sprintf("s%d-%d-%d", i, j, k)
						if st, body := c.call(id, "tools/call", `{"name":"echo","arguments":{"text":"`+text+`"}}`); st != 200 || !strings.Contains(body, `"text":"`+text+`"`) {
							errs <- fmt.Sprintf("%d %s", st, body)
						}
						if st, body := c.call(id+50, "tools/call", `{"name":"progress","_meta":{"progressToken":"x"}}`); st != 200 || !strings.Contains(body, "done") {
							errs <- fmt.Sprintf("%d %s", st, body)
						}
					}
				}()
			}
			inner.Wait()
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if h.SessionCount() != 16 {
		t.Errorf("%d sessions", h.SessionCount())
	}
}

func TestShutdownFinishesRequestsAndEndsStreams(t *testing.T) {
	s := testServer()
	started, release := make(chan struct{}), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "blocks"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		close(started)
		<-release
		return mcp.TextResult("finished"), nil, nil
	})
	h, srv := startHTTP(t, s, nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	get, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readEvents(t, get.Body, 1)
	result := make(chan string, 1)
	go func() {
		_, body := c.call(1, "tools/call", `{"name":"block"}`)
		result <- body
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		shut <- h.Shutdown(ctx)
	}()
	readEvents(t, get.Body, -1) // the GET stream ends
	get.Body.Close()
	if st, _ := newClient(t, srv).call(1, "ping", ""); st != 503 {
		t.Errorf("request during shutdown: %d", st)
	}
	close(release)
	if body := <-result; !strings.Contains(body, "finished") {
		t.Errorf("in-flight call: %s", body)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
