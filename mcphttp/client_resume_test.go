package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// A POST stream closed before its answer is resumed with GET and
// Last-Event-ID after exactly the server's retry delay: the conformance
// suite's sse-retry scenario (retry 500, a reconnection between 450 and
// 700 ms).
func TestClientResumeHonoursRetry(t *testing.T) {
	f := newFake(t)
	var mu sync.Mutex
	var closedAt time.Time
	var callID string
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		sseStart(w)
		sseWrite(w, "id: e1\nretry: 500\ndata: \n\n")
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		callID, closedAt = id, time.Now()
		mu.Unlock()
	}
	type resumption struct {
		lastID string
		after  time.Duration
	}
	got := make(chan resumption, 1)
	f.onGET = func(w http.ResponseWriter, r *http.Request) {
		last := r.Header.Get("Last-Event-ID")
		if last == "" {
			http.Error(w, "no standalone stream", http.StatusMethodNotAllowed)
			return
		}
		mu.Lock()
		got <- resumption{last, time.Since(closedAt)}
		id := callID
		mu.Unlock()
		sseStart(w)
		sseWrite(w, "id: e2\nevent: message\ndata: "+textResult(id, "resumed")+"\n\n")
	}
	cs := connectClient(t, f.url(), nil, nil)
	if text := callText(t, cs, "test_reconnection", nil); text != "resumed" {
		t.Errorf("result %q", text)
	}
	r := <-got
	if r.lastID != "e1" {
		t.Errorf("Last-Event-ID %q, want e1", r.lastID)
	}
	// The retry is a floor; the ceiling is loose so that a loaded
	// machine cannot fail the test (the conformance suite checks 700 ms).
	if r.after < 450*time.Millisecond || r.after > 5*time.Second {
		t.Errorf("reconnected %v after the stream closed; want 500ms (the server's retry), not much later", r.after)
	}
}

// When a stream cannot be resumed, the call fails with a clear error
// instead of waiting for its deadline.
func TestClientResumeFailures(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		stream     string // what the POST stream sends before it ends
		get        func(w http.ResponseWriter, r *http.Request)
		want       string
		resumes    int // GETs with Last-Event-ID expected
	}{
		{
			name:   "no event id",
			stream: "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n",
			want:   "carried no event id",
		},
		{
			name:    "GET not allowed",
			stream:  "id: e1\nretry: 10\ndata: \n\n",
			want:    "405 Method Not Allowed",
			resumes: 0,
		},
		{
			name:   "retries run out",
			stream: "id: e1\nretry: 10\ndata: \n\n",
			get: func(w http.ResponseWriter, r *http.Request) {
				sseStart(w) // and nothing
			},
			want:    "2 attempts in a row brought nothing",
			resumes: 2,
		},
		{
			name:       "more retries",
			maxRetries: 4,
			stream:     "id: e1\nretry: 10\ndata: \n\n",
			get: func(w http.ResponseWriter, r *http.Request) {
				sseStart(w)
			},
			want:    "4 attempts in a row brought nothing",
			resumes: 4,
		},
		{
			name:       "resumption off",
			maxRetries: -1,
			stream:     "id: e1\nretry: 10\ndata: \n\n",
			want:       "resumption is off",
		},
		{
			name:   "server errors",
			stream: "id: e1\nretry: 10\ndata: \n\n",
			get: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "down", http.StatusBadGateway)
			},
			want:    "502 Bad Gateway",
			resumes: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
				sseStart(w)
				sseWrite(w, tt.stream)
			}
			f.onGET = func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Last-Event-ID") == "" || tt.get == nil {
					http.Error(w, "no", http.StatusMethodNotAllowed)
					return
				}
				tt.get(w, r)
			}
			cs := connectClient(t, f.url(), &ClientTransport{MaxRetries: tt.maxRetries}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			_, err := cs.CallTool(ctx, "any", nil)
			var ce *mcp.CallError
			if !errors.As(err, &ce) || ce.Err.Code != codeTransportError {
				t.Fatalf("got %v; want a transport error response", err)
			}
			if !strings.Contains(err.Error(), "could not be resumed") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q lacks %q", err, tt.want)
			}
			n := 0
			for _, r := range f.rec.all() {
				if r.method == http.MethodGet && r.header.Get("Last-Event-ID") != "" {
					n++
				}
			}
			if tt.get != nil && n != tt.resumes {
				t.Errorf("%d resumptions, want %d", n, tt.resumes)
			}
			// The session goes on.
			if err := cs.Ping(ctx); err != nil {
				t.Errorf("ping after the failure: %v", err)
			}
		})
	}
}

// Against our server: a tool that closes its stream mid-call (the
// 2025-11-25 polling pattern) still answers, with its progress.
func TestClientResumeAgainstServer(t *testing.T) {
	_, srv, rec := startRecorded(t, testServer(), &Options{RetryInterval: 50 * time.Millisecond})
	cs := connectClient(t, srv.URL+"/mcp", nil, nil)
	var mu sync.Mutex
	var msgs []string
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ctx = mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		msgs = append(msgs, p.Message)
		mu.Unlock()
	})
	res, err := cs.CallTool(ctx, "detach", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); text != "after detach" {
		t.Errorf("result %q", text)
	}
	mu.Lock()
	if strings.Join(msgs, ",") != "before,after" {
		t.Errorf("progress %v", msgs)
	}
	mu.Unlock()
	resumed := false
	for _, r := range rec.all() {
		resumed = resumed || r.method == http.MethodGet && strings.HasPrefix(r.header.Get("Last-Event-ID"), "p")
	}
	if !resumed {
		t.Error("the POST stream was not resumed with GET")
	}
}

// The standalone stream is open before the first request goes out: a
// server that sends an elicitation on it during the first call (and, like
// the TypeScript SDK's, drops what it has no stream for) reaches the
// client. The conformance suite's elicitation scenario is such a server.
func TestClientOpensGETBeforeFirstRequest(t *testing.T) {
	f := newFake(t)
	var mu sync.Mutex
	var stream http.ResponseWriter
	getDone := make(chan struct{})
	defer close(getDone)
	answered := make(chan string, 1)
	f.onGET = func(w http.ResponseWriter, r *http.Request) {
		// Headers first, a little late, as a busy server might.
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		sseStart(w)
		stream = w
		mu.Unlock()
		select {
		case <-getDone:
		case <-r.Context().Done():
		}
	}
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		mu.Lock()
		s := stream
		if s != nil {
			sseWrite(s, `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":"el-1","method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}`+"\n\n")
		}
		mu.Unlock()
		if s == nil {
			writeJSON(w, textResult(id, "dropped: no GET stream yet"))
			return
		}
		select {
		case a := <-answered:
			writeJSON(w, textResult(id, a))
		case <-time.After(waitFor):
			writeJSON(w, textResult(id, "no answer"))
		}
	}
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Action string `json:"action"`
				} `json:"result"`
			}
			json.Unmarshal(b, &m)
			if string(m.ID) == `"el-1"` {
				answered <- m.Result.Action
				w.WriteHeader(http.StatusAccepted)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		inner.ServeHTTP(w, r)
	})
	cs := connectClient(t, f.url(), nil, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ClientSession, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	if text := callText(t, cs, "ask", nil); text != "accept" {
		t.Errorf("result %q, want the elicitation answered", text)
	}
}
