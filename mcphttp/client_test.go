package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// The client tests do not run in parallel: each ends by checking that no
// goroutine of the client transport is left, which only works alone.

// clientGoroutines returns the stacks of the client transport's
// goroutines still running.
func clientGoroutines() []string {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "mcphttp.(*clientConn)") {
			out = append(out, g)
		}
	}
	return out
}

func checkNoClientGoroutines(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		gs := clientGoroutines()
		if len(gs) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d client goroutines left after Close:\n%s", len(gs), strings.Join(gs, "\n\n"))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// connectClient connects an mcp.Client over tr to url; the session is
// closed, and leaks checked, when the test ends.
func connectClient(t testing.TB, url string, tr *ClientTransport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := tryConnect(url, tr, opts)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		checkNoClientGoroutines(t)
	})
	return cs
}

func tryConnect(url string, tr *ClientTransport, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	if tr == nil {
		tr = &ClientTransport{}
	}
	tr.Endpoint = url
	// These tests are of the legacy transport (sessions, streams,
	// resumption): the client is pinned to 2025-11-25 unless a test asks
	// for another revision (perrequest_client_test.go covers 2026-07-28).
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	if opts.ProtocolVersion == "" {
		opts.ProtocolVersion = mcp.LatestNegotiatedVersion
	} else if opts.ProtocolVersion == "auto" {
		opts.ProtocolVersion = ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "client-test", Version: "1"}, opts).Connect(ctx, tr)
}

func callText(t testing.TB, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	res, err := cs.CallTool(ctx, tool, args)
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// recorder keeps the requests a handler saw.
type recorder struct {
	mu   sync.Mutex
	reqs []seenRequest
}

type seenRequest struct {
	method string
	header http.Header
	body   string
	at     time.Time
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, seenRequest{r.Method, r.Header.Clone(), string(b), time.Now()})
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) all() []seenRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]seenRequest(nil), rec.reqs...)
}

func (rec *recorder) count(method, bodyPart string) int {
	n := 0
	for _, r := range rec.all() {
		if r.method == method && strings.Contains(r.body, bodyPart) {
			n++
		}
	}
	return n
}

// startRecorded serves our handler behind a recorder.
func startRecorded(t testing.TB, s *mcp.Server, opts *Options) (*Handler, *httptest.Server, *recorder) {
	t.Helper()
	h := NewHandler(s, opts)
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(h))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return h, srv, rec
}

func TestClientAgainstServer(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"JSON responses", Options{}},
		{"SSE responses", Options{StreamResponses: true}},
		{"stateless", Options{Stateless: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, srv, _ := startRecorded(t, testServer(), &tt.opts)
			cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{
				CreateMessageHandler: func(context.Context, *mcp.ClientSession, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Model: "m1", Role: mcp.RoleAssistant, Content: []byte(`{"type":"text","text":"hi"}`)}, nil
				},
			})
			if got := callText(t, cs, "echo", map[string]any{"text": "hello"}); got != "hello" {
				t.Errorf("echo: %q", got)
			}
			var mu sync.Mutex
			var steps []float64
			ctx := mcp.WithProgress(context.Background(), func(p *mcp.ProgressNotificationParams) {
				mu.Lock()
				steps = append(steps, p.Progress)
				mu.Unlock()
			})
			if _, err := cs.CallTool(ctx, "progress", nil); err != nil {
				t.Fatalf("progress: %v", err)
			}
			mu.Lock()
			if len(steps) != 3 {
				t.Errorf("progress steps %v, want 3", steps)
			}
			mu.Unlock()
			if !tt.opts.Stateless {
				if got := callText(t, cs, "sample", nil); got != "model m1" {
					t.Errorf("sample: %q", got)
				}
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil || len(tools.Tools) == 0 {
				t.Fatalf("tools/list: %v %v", tools, err)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			eventually(t, "the session ends on the server", func() bool { return h.SessionCount() == 0 })
		})
	}
}

// Every request carries the caller's headers; POSTs carry both media
// types; the session id and revision follow initialize; Close sends
// DELETE.
func TestClientHeaders(t *testing.T) {
	_, srv, rec := startRecorded(t, testServer(), nil)
	hdr := http.Header{"Authorization": {"Bearer k1"}, "X-Extra": {"x"}}
	cs := connectClient(t, srv.URL+"/mcp", &ClientTransport{Header: hdr}, nil)
	callText(t, cs, "echo", map[string]any{"text": "x"})
	eventually(t, "the GET stream opens", func() bool { return rec.count(http.MethodGet, "") > 0 })
	cs.Close()
	reqs := rec.all()
	if len(reqs) < 5 {
		t.Fatalf("only %d requests", len(reqs))
	}
	var sid string
	sawDelete := false
	for i, r := range reqs {
		if r.header.Get("Authorization") != "Bearer k1" || r.header.Get("X-Extra") != "x" {
			t.Errorf("request %d (%s) lacks the extra headers: %v", i, r.method, r.header)
		}
		switch r.method {
		case http.MethodPost:
			if r.header.Get("Accept") != "application/json, text/event-stream" || r.header.Get("Content-Type") != "application/json" {
				t.Errorf("POST %d headers %v", i, r.header)
			}
		case http.MethodGet:
			if r.header.Get("Accept") != "text/event-stream" {
				t.Errorf("GET Accept %q", r.header.Get("Accept"))
			}
		case http.MethodDelete:
			sawDelete = true
		}
		if i == 0 {
			if !strings.Contains(r.body, `"initialize"`) || r.header.Get(headerSessionID) != "" || r.header.Get(headerProtocolVersion) != "" {
				t.Errorf("first request %s %q with %v", r.method, r.body, r.header)
			}
			continue
		}
		if sid == "" {
			sid = r.header.Get(headerSessionID)
		}
		if r.header.Get(headerSessionID) == "" || r.header.Get(headerSessionID) != sid {
			t.Errorf("request %d (%s) has session %q, want %q", i, r.method, r.header.Get(headerSessionID), sid)
		}
		if r.header.Get(headerProtocolVersion) != mcp.LatestNegotiatedVersion {
			t.Errorf("request %d (%s) has revision %q", i, r.method, r.header.Get(headerProtocolVersion))
		}
	}
	if !sawDelete {
		t.Error("Close sent no DELETE")
	}
}

// Messages the server sends unprompted arrive on the GET stream, which
// is resumed with Last-Event-ID when the server drops it, losing nothing.
func TestClientStandaloneStream(t *testing.T) {
	s := testServer()
	h, srv, rec := startRecorded(t, s, &Options{RetryInterval: 200 * time.Millisecond})
	logs := make(chan string, 10)
	cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) {
			logs <- fmt.Sprint(p.Data)
		},
	})
	eventually(t, "the GET stream opens", func() bool { return rec.count(http.MethodGet, "") > 0 })
	ss := s.Sessions()[0]
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-logs:
			if got != want {
				t.Fatalf("log %s, want %s", got, want)
			}
		case <-time.After(waitFor):
			t.Fatalf("log %s did not arrive", want)
		}
	}
	ss.Log(context.Background(), mcp.LevelInfo, "t", "one")
	expect("one")
	// Drop the stream; what is sent meanwhile is stored and replayed.
	h.sessions.get(ss.ID()).standalone.detach()
	ss.Log(context.Background(), mcp.LevelInfo, "t", "two")
	expect("two")
	var resumed bool
	for _, r := range rec.all() {
		resumed = resumed || r.method == http.MethodGet && strings.HasPrefix(r.header.Get(headerLastEventID), "g-")
	}
	if !resumed {
		t.Error("the GET stream was not resumed with Last-Event-ID")
	}
	ss.Log(context.Background(), mcp.LevelInfo, "t", "three")
	expect("three")
	_ = cs
}

// A server without a GET stream (405 or 404) is asked once, and quietly
// left alone.
func TestClientNoStandaloneStream(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		noSession bool
	}{
		{"405", http.StatusMethodNotAllowed, false},
		{"404 without a session", http.StatusNotFound, true},
		// The session is not taken for lost on a GET's word: only a POST
		// tells (else a server without a GET route costs a new session
		// per call).
		{"404 with a session", http.StatusNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.noSession = tt.noSession
			f.onGET = func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", tt.status) }
			var logs syncBuffer
			cs := connectClient(t, f.url(), &ClientTransport{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
			eventually(t, "the GET", func() bool { return f.rec.count(http.MethodGet, "") == 1 })
			if err := cs.Ping(context.Background()); err != nil {
				t.Fatal(err)
			}
			if n := f.rec.count(http.MethodPost, `"initialize"`); n != 1 {
				t.Errorf("%d initialize requests, want 1", n)
			}
			time.Sleep(50 * time.Millisecond)
			if n := f.rec.count(http.MethodGet, ""); n != 1 {
				t.Errorf("%d GETs, want 1", n)
			}
			if logs.String() != "" {
				t.Errorf("logged: %s", logs.String())
			}
			cs.Close()
			if n := f.rec.count(http.MethodDelete, ""); n != 0 && tt.noSession {
				t.Errorf("DELETE without a session")
			}
		})
	}
}

// A JSON answer may be an array; each message in it is read.
func TestClientJSONArrayAnswer(t *testing.T) {
	f := newFake(t)
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"note"}},`+
			`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"batched"}]}}]`)
	}
	logs := make(chan string, 1)
	cs := connectClient(t, f.url(), nil, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) { logs <- fmt.Sprint(p.Data) },
	})
	if got := callText(t, cs, "any", nil); got != "batched" {
		t.Errorf("result %q", got)
	}
	select {
	case l := <-logs:
		if l != "note" {
			t.Errorf("log %s", l)
		}
	case <-time.After(waitFor):
		t.Error("the notification in the array was lost")
	}
}

func TestClientBadEndpoint(t *testing.T) {
	for _, u := range []string{"", "ftp://host/mcp", "http://", "::"} {
		if _, err := (&ClientTransport{Endpoint: u}).Connect(context.Background()); err == nil {
			t.Errorf("Connect(%q) succeeded", u)
		}
	}
}

// After Close, writes fail at once and reads end.
func TestClientConnAfterClose(t *testing.T) {
	_, srv, _ := startRecorded(t, testServer(), nil)
	conn, err := (&ClientTransport{Endpoint: srv.URL + "/mcp"}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if err := conn.WriteMessage([]byte(`{"jsonrpc":"2.0","method":"ping"}`)); !errors.Is(err, errClosed) {
		t.Errorf("write after close: %v", err)
	}
	if _, err := conn.ReadMessage(); !errors.Is(err, errClosed) {
		t.Errorf("read after close: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	checkNoClientGoroutines(t)
}
