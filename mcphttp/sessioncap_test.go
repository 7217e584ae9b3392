package mcphttp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// Tests of the session caps: one caller, named or anonymous, must never
// push out another's sessions, nor keep others from opening theirs.

// principalHeader names a test request's caller; byHeader is the
// Options.Principal that reads it ("" when absent: anonymous).
const principalHeader = "X-Test-Principal"

func byHeader(r *http.Request) string { return r.Header.Get(principalHeader) }

const initBody = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// caller is a client acting for principal ("" for anonymous), connecting
// from the loopback address of tr (Linux routes all of 127/8 to lo).
func caller(t *testing.T, srv *httptest.Server, tr *http.Transport, principal string) *client {
	c := newClient(t, srv)
	if tr != nil {
		c.hc = &http.Client{Transport: tr}
	}
	if principal != "" {
		c.headers[principalHeader] = principal
	}
	return c
}

// transportFrom dials from the local address ip, so that the server sees
// requests from that remote address.
func transportFrom(t *testing.T, ip string) *http.Transport {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// openGET opens c's session's GET stream, which keeps the session busy
// until the stream is closed (at the end of the test).
func openGET(t *testing.T, c *client) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", c.version)
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %d %s", resp.StatusCode, readAll(t, resp))
	}
	readEvents(t, resp.Body, 1) // the priming event: the stream is open
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// openLegacy opens a 2024-11-05 SSE stream, which is a session of its own,
// busy while the stream is open.
func openLegacy(t *testing.T, srv *httptest.Server, principal string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(principalHeader, principal)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("legacy stream: %d %s", resp.StatusCode, readAll(t, resp))
	}
	readEvents(t, resp.Body, 1) // the endpoint event
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// checkRefusal checks a refused initialize: the status, a Retry-After and
// a JSON-RPC error whose message says what to do.
func checkRefusal(t *testing.T, resp *http.Response, body string, status int, says ...string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("got %d (Retry-After %q, session %q) %s, want %d with Retry-After and no session",
			resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id"), body, status)
	}
	errorCode(t, body)
	for _, s := range says {
		if !strings.Contains(body, s) {
			t.Errorf("error %s does not say %q", body, s)
		}
	}
}

// step is one initialize of a session-cap scenario.
type step struct {
	who  string // the principal; "" is anonymous
	from string // the caller's loopback address; "" is 127.0.0.1
	busy bool   // keep the session busy with an open GET stream
	want int    // the initialize's status
}

// capScenario runs steps in order against a server with the given caps,
// then pings every session that was opened: those of the steps listed in
// gone must be ended (404), every other one must still answer.
type capScenario struct {
	name          string
	max, perOwner int
	steps         []step
	gone          []int
}

func runCapScenarios(t *testing.T, tests []capScenario) {
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, srv := startHTTP(t, testServer(), &Options{MaxSessions: tt.max, MaxSessionsPerPrincipal: tt.perOwner, Principal: byHeader})
			transports := map[string]*http.Transport{}
			opened := map[int]*client{}
			for i, s := range tt.steps {
				from := s.from
				if from == "" {
					from = "127.0.0.1"
				}
				if transports[from] == nil {
					transports[from] = transportFrom(t, from)
				}
				c := caller(t, srv, transports[from], s.who)
				resp := c.post(initBody)
				body := readAll(t, resp)
				switch {
				case s.want == http.StatusTooManyRequests:
					checkRefusal(t, resp, body, s.want, "Too many sessions", "DELETE")
					continue
				case s.want != http.StatusOK:
					checkRefusal(t, resp, body, s.want)
					continue
				case resp.StatusCode != http.StatusOK:
					t.Fatalf("step %d (%q from %s): initialize got %d %s, want 200", i, s.who, from, resp.StatusCode, body)
				}
				c.sid, c.version = resp.Header.Get("Mcp-Session-Id"), "2025-11-25"
				if st, _ := c.call(0, "ping", ""); st != http.StatusOK {
					t.Fatalf("step %d: its session answered %d", i, st)
				}
				if s.busy {
					openGET(t, c)
				}
				opened[i] = c
			}
			for i, c := range opened {
				want := http.StatusOK
				for _, g := range tt.gone {
					if g == i {
						want = http.StatusNotFound
					}
				}
				if st, body := c.call(1, "ping", ""); st != want {
					t.Errorf("session of step %d (%q from %s): ping got %d %s, want %d", i, tt.steps[i].who, tt.steps[i].from, st, body, want)
				}
			}
			if want := len(opened) - len(tt.gone); h.SessionCount() != want {
				t.Errorf("%d sessions held, want %d", h.SessionCount(), want)
			}
		})
	}
}

func TestCallerAtItsCapGivesUpItsOwnIdleSession(t *testing.T) {
	runCapScenarios(t, []capScenario{{
		name:     "alice's fourth session ends her oldest; bob's older ones stay",
		perOwner: 3,
		steps: []step{
			{who: "bob", want: 200}, {who: "bob", want: 200},
			{who: "alice", want: 200}, {who: "alice", want: 200}, {who: "alice", want: 200},
			{who: "alice", want: 200},
		},
		gone: []int{2},
	}, {
		name:     "a busy session is passed over for the oldest idle one",
		perOwner: 2,
		steps: []step{
			{who: "bob", want: 200},
			{who: "alice", busy: true, want: 200}, {who: "alice", want: 200},
			{who: "alice", want: 200},
		},
		gone: []int{2},
	}, {
		name:     "every session busy: 429, and bob still gets his",
		perOwner: 2,
		steps: []step{
			{who: "alice", busy: true, want: 200}, {who: "alice", busy: true, want: 200},
			{who: "alice", want: 429},
			{who: "bob", want: 200},
		},
	}})
}

func TestAnonymousCallersAreCappedByAddress(t *testing.T) {
	runCapScenarios(t, []capScenario{{
		name:     "each address gives up its own idle sessions",
		perOwner: 2,
		steps: []step{
			{from: "127.0.0.2", want: 200},
			{from: "127.0.0.1", want: 200}, {from: "127.0.0.1", want: 200}, {from: "127.0.0.1", want: 200},
			{from: "127.0.0.2", want: 200},
		},
		gone: []int{1},
	}, {
		name:     "one address at its cap, all busy, leaves another its own",
		perOwner: 2,
		steps: []step{
			{from: "127.0.0.1", busy: true, want: 200}, {from: "127.0.0.1", busy: true, want: 200},
			{from: "127.0.0.1", want: 429},
			{from: "127.0.0.2", want: 200}, {from: "127.0.0.2", want: 200},
		},
	}, {
		name:     "a principal named like an address is not that address",
		perOwner: 1,
		steps: []step{
			{from: "127.0.0.1", want: 200},
			{who: "127.0.0.1", want: 200},
		},
	}})
}

func TestFullTableNeverEndsASmallerHoldersSession(t *testing.T) {
	runCapScenarios(t, []capScenario{{
		name: "alice's oldest idle session goes, not bob's older one",
		max:  3,
		steps: []step{
			{who: "bob", want: 200},
			{who: "alice", want: 200}, {who: "alice", want: 200}, {who: "alice", want: 200},
		},
		gone: []int{1},
	}, {
		name: "alice's sessions all busy: 503, and bob's idle one stays",
		max:  3,
		steps: []step{
			{who: "bob", want: 200},
			{who: "alice", busy: true, want: 200}, {who: "alice", busy: true, want: 200},
			{who: "alice", want: 503},
		},
	}, {
		name: "carol, holding as many as bob, does not push him out",
		max:  2,
		steps: []step{
			{who: "bob", want: 200},
			{who: "carol", busy: true, want: 200},
			{who: "carol", want: 503},
		},
	}, {
		name: "a newcomer ends the idle session of the biggest holder",
		max:  4,
		steps: []step{
			{who: "bob", want: 200},
			{who: "alice", want: 200}, {who: "alice", want: 200}, {who: "alice", want: 200},
			{who: "carol", want: 200},
		},
		gone: []int{1},
	}})
}

// blockingServer is testServer with a tool, block, that sends on started
// once running and returns when release is closed.
func blockingServer() (s *mcp.Server, started chan struct{}, release chan struct{}) {
	s = testServer()
	started, release = make(chan struct{}, 16), make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "blocks"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		started <- struct{}{}
		<-release
		return mcp.TextResult("released"), nil, nil
	})
	return s, started, release
}

// The 429 and its body, for each way a session is busy, and the way back
// in once one of the caller's sessions is idle or ended again.
func TestCallerWithEverySessionBusyGets429(t *testing.T) {
	const limit = 2
	tests := []struct {
		name string
		// busy opens one busy session of principal's, and returns what
		// ends its activity once release is closed.
		busy func(t *testing.T, srv *httptest.Server, principal string, started chan struct{}) (stop func())
	}{
		{"a tool call in flight", func(t *testing.T, srv *httptest.Server, principal string, started chan struct{}) func() {
			c := caller(t, srv, nil, principal)
			c.initialize("2025-11-25")
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.call(2, "tools/call", `{"name":"block"}`)
			}()
			select {
			case <-started:
			case <-time.After(waitFor):
				t.Fatal("the tool call did not start")
			}
			return func() { <-done }
		}},
		{"an open GET stream", func(t *testing.T, srv *httptest.Server, principal string, _ chan struct{}) func() {
			c := caller(t, srv, nil, principal)
			c.initialize("2025-11-25")
			resp := openGET(t, c)
			return func() { resp.Body.Close() }
		}},
		{"an open legacy SSE stream", func(t *testing.T, srv *httptest.Server, principal string, _ chan struct{}) func() {
			resp := openLegacy(t, srv, principal)
			return func() { resp.Body.Close() }
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, started, release := blockingServer()
			h, srv := startHTTP(t, s, &Options{MaxSessionsPerPrincipal: limit, Principal: byHeader, LegacySSE: true})
			released := false
			free := func() {
				if !released {
					released = true
					close(release)
				}
			}
			t.Cleanup(free) // before the handler's shutdown, which waits for calls
			var stops []func()
			for range limit {
				stops = append(stops, tt.busy(t, srv, "alice", started))
			}
			alice := caller(t, srv, nil, "alice")
			resp := alice.post(initBody)
			checkRefusal(t, resp, readAll(t, resp), http.StatusTooManyRequests,
				"Too many sessions: this caller holds 2 sessions, the most allowed", "DELETE")
			if n := h.SessionCount(); n != limit {
				t.Errorf("%d sessions after the refusal, want alice's %d", n, limit)
			}
			caller(t, srv, nil, "bob").initialize("2025-11-25")

			free()
			for _, stop := range stops {
				stop()
			}
			eventually(t, "alice's initialize to succeed once her sessions are idle or ended", func() bool {
				resp := alice.post(initBody)
				readAll(t, resp)
				return resp.StatusCode == http.StatusOK
			})
		})
	}
}

// ownersHeld is the number of callers the session table keeps a set for.
func ownersHeld(h *Handler) int {
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	return len(h.sessions.byOwner)
}

// Whatever ends a caller's last session, the table keeps nothing of the
// caller: an anonymous client coming from ever new addresses must not grow
// it.
func TestSessionTableForgetsCallersWithNoSession(t *testing.T) {
	opened := func(t *testing.T, h *Handler, want int) {
		t.Helper()
		if n := ownersHeld(h); n != want {
			t.Fatalf("%d callers held with sessions open, want %d", n, want)
		}
	}
	tests := []struct {
		name string
		opts Options
		run  func(t *testing.T, h *Handler, srv *httptest.Server)
	}{
		{"DELETE", Options{}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			a, b := caller(t, srv, nil, "alice"), caller(t, srv, transportFrom(t, "127.0.0.2"), "")
			a.initialize("2025-11-25")
			b.initialize("2025-11-25")
			opened(t, h, 2)
			for _, c := range []*client{a, b} {
				req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
				req.Header.Set("Mcp-Session-Id", c.sid)
				req.Header.Set(principalHeader, c.headers[principalHeader])
				resp, err := c.hc.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if readAll(t, resp); resp.StatusCode != http.StatusOK {
					t.Fatalf("DELETE: %d", resp.StatusCode)
				}
			}
		}},
		{"idle expiry", Options{SessionIdleTimeout: 50 * time.Millisecond}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			caller(t, srv, nil, "alice").initialize("2025-11-25")
			opened(t, h, 1)
		}},
		{"eviction at the caller's cap, then DELETE", Options{MaxSessionsPerPrincipal: 1}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			caller(t, srv, nil, "alice").initialize("2025-11-25")
			a := caller(t, srv, nil, "alice")
			a.initialize("2025-11-25")
			opened(t, h, 1)
			req, _ := http.NewRequest(http.MethodDelete, a.url, nil)
			req.Header.Set("Mcp-Session-Id", a.sid)
			req.Header.Set(principalHeader, "alice")
			resp, err := a.hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			readAll(t, resp)
		}},
		{"legacy stream closed", Options{}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			resp := openLegacy(t, srv, "alice")
			opened(t, h, 1)
			resp.Body.Close()
		}},
		{"failed initialize", Options{}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			resp := caller(t, srv, nil, "alice").post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":5}}`)
			if body := readAll(t, resp); errorCode(t, body) != -32602 {
				t.Fatalf("bad initialize: %s", body)
			}
		}},
		{"shutdown", Options{}, func(t *testing.T, h *Handler, srv *httptest.Server) {
			caller(t, srv, nil, "alice").initialize("2025-11-25")
			caller(t, srv, nil, "bob").initialize("2025-11-25")
			opened(t, h, 2)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			h.Shutdown(ctx)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			opts.Principal, opts.LegacySSE = byHeader, true
			h, srv := startHTTP(t, testServer(), &opts)
			tt.run(t, h, srv)
			eventually(t, "the table to forget every caller", func() bool { return ownersHeld(h) == 0 && h.SessionCount() == 0 })
		})
	}
}
