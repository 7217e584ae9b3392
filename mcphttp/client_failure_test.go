package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// A refused initialize is an HTTPError that says what went wrong, with
// the server's own explanation.
func TestClientHTTPErrors(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   []string
	}{
		{http.StatusUnauthorized, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"token missing"}}`,
			[]string{"requires authorization (401 Unauthorized)", "ClientTransport.Header", "token missing"}},
		{http.StatusForbidden, "scope tools:call needed\n", []string{"refused access (403 Forbidden)", "scope tools:call needed"}},
		{http.StatusNotFound, "", []string{"no MCP endpoint at this URL (404 Not Found)", "check ClientTransport.Endpoint"}},
		{http.StatusInternalServerError, "<html>oops</html>", []string{"the server failed (500 Internal Server Error)"}},
		{http.StatusServiceUnavailable, "", []string{"503 Service Unavailable", "retry later"}},
		{http.StatusRequestEntityTooLarge, "", []string{"larger than the server accepts (413"}},
		{http.StatusTeapot, "", []string{"the server answered 418 I'm a teapot"}},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			f := newFake(t)
			f.onPOST = func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(tt.body, "<html>") {
					w.Header().Set("Content-Type", "text/html")
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}
			_, err := tryConnect(f.url(), &ClientTransport{DisableLegacyFallback: true}, nil)
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != tt.status || he.Method != http.MethodPost {
				t.Fatalf("got %v; want an HTTPError %d", err, tt.status)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "<html>") {
				t.Errorf("error %q quotes HTML", err)
			}
			if errors.Is(err, mcp.ErrSessionNotFound) {
				t.Error("a 404 without a session is not a lost session")
			}
			checkNoClientGoroutines(t)
		})
	}
}

// An answer over MaxMessageSize fails its call only, with an
// mcp.MessageTooLargeError naming the limit and the option; the session
// goes on.
func TestClientOversizedAnswers(t *testing.T) {
	big := strings.Repeat("x", 2000)
	f := newFake(t)
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		switch tool {
		case "small":
			writeJSON(w, textResult(id, "ok"))
		case "big-json":
			writeJSON(w, textResult(id, big))
		case "big-event-leading-id":
			sseStart(w)
			sseWrite(w, "id: 1\ndata: "+textResult(id, big)+"\n\n")
		case "big-event-trailing-id":
			sseStart(w)
			sseWrite(w, `id: 2`+"\n"+`data: {"result":{"content":[{"type":"text","text":"`+big+`"}]},"jsonrpc":"2.0","id":`+id+"}\n\n")
		}
	}
	cs := connectClient(t, f.url(), &ClientTransport{MaxMessageSize: 1024}, nil)
	for _, tool := range []string{"big-json", "big-event-leading-id", "big-event-trailing-id"} {
		t.Run(tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			_, err := cs.CallTool(ctx, tool, nil)
			var tooLarge *mcp.MessageTooLargeError
			if !errors.Is(err, mcp.ErrMessageTooLarge) || !errors.As(err, &tooLarge) || tooLarge.Limit != 1024 ||
				!strings.Contains(err.Error(), "exceeds the 1024-byte limit") || !strings.Contains(err.Error(), "ClientTransport.MaxMessageSize") {
				t.Errorf("got %v; want an mcp.MessageTooLargeError naming the 1024-byte limit and ClientTransport.MaxMessageSize", err)
			}
			if got := callText(t, cs, "small", nil); got != "ok" {
				t.Errorf("next call: %q", got)
			}
		})
	}
}

// syncBuffer collects log output from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// SSE data that is not JSON is logged and skipped; the answer after it
// still arrives.
func TestClientSkipsGarbageEvents(t *testing.T) {
	f := newFake(t)
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		sseStart(w)
		sseWrite(w, "data: this is not json\n\n")
		sseWrite(w, "data: {\"jsonrpc\":\"2.0\",\n\n")
		sseWrite(w, "event: surprise\ndata: {}\n\n")
		sseWrite(w, ": comment\n\nid: 9\ndata: "+textResult(id, "fine")+"\n\n")
	}
	var logs syncBuffer
	cs := connectClient(t, f.url(), &ClientTransport{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, nil)
	if got := callText(t, cs, "any", nil); got != "fine" {
		t.Errorf("result %q", got)
	}
	if n := strings.Count(logs.String(), "not JSON"); n != 2 {
		t.Errorf("%d warnings about garbage, want 2:\n%s", n, logs.String())
	}
}

// A server that misbehaves mid-answer fails the call with an error that
// says how, and the session goes on.
func TestClientBrokenAnswers(t *testing.T) {
	tests := []struct {
		tool   string
		answer func(w http.ResponseWriter, id string)
		want   string
	}{
		{"hang-up", func(w http.ResponseWriter, id string) {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
		}, "closed the connection without answering"},
		{"cut-short", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "500")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`)
		}, "closed the connection before finishing its response"},
		{"plain-text", func(w http.ResponseWriter, id string) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, "hello")
		}, `Content-Type "text/plain", neither application/json nor text/event-stream`},
		{"no-answer-in-json", func(w http.ResponseWriter, id string) {
			writeJSON(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}`)
		}, "did not answer the request"},
		{"invalid-json", func(w http.ResponseWriter, id string) {
			writeJSON(w, `{"jsonrpc":"2.0","id":`+id+`,`)
		}, "not valid JSON"},
		{"server-error", func(w http.ResponseWriter, id string) {
			http.Error(w, "database down", http.StatusInternalServerError)
		}, "the server failed (500 Internal Server Error); retry later: database down"},
	}
	f := newFake(t)
	answers := map[string]func(http.ResponseWriter, string){}
	for _, tt := range tests {
		answers[tt.tool] = tt.answer
	}
	f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
		if a := answers[tool]; a != nil {
			a(w, id)
			return
		}
		writeJSON(w, textResult(id, "ok"))
	}
	cs := connectClient(t, f.url(), nil, nil)
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			start := time.Now()
			_, err := cs.CallTool(ctx, tt.tool, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want %q", err, tt.want)
			}
			if d := time.Since(start); d > waitFor/2 {
				t.Errorf("the failure took %v", d)
			}
			if got := callText(t, cs, "fine", nil); got != "ok" {
				t.Errorf("next call: %q", got)
			}
		})
	}
}

// With the server gone, calls fail at once and Close does not hang.
func TestClientServerGone(t *testing.T) {
	h, srv, _ := startRecorded(t, testServer(), nil)
	cs := connectClient(t, srv.URL+"/mcp", nil, nil)
	callText(t, cs, "echo", map[string]any{"text": "x"})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	h.Shutdown(ctx)
	srv.CloseClientConnections()
	srv.Close()
	start := time.Now()
	_, err := cs.CallTool(ctx, "echo", map[string]any{"text": "y"})
	// Which one depends on whether the client had noticed that the server
	// closed its idle connection; a POST is never sent twice.
	if err == nil || !strings.Contains(err.Error(), "could not be reached") && !strings.Contains(err.Error(), "closed the connection without answering") {
		t.Errorf("call to a server that is gone: %v", err)
	}
	cs.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call and Close took %v", d)
	}
}

// Close ends calls in flight, whether the server has answered with
// headers or not, and gives up on a DELETE the server never answers.
func TestClientCloseDoesNotHang(t *testing.T) {
	tests := []struct {
		tool   string
		answer func(w http.ResponseWriter, r *http.Request, started chan struct{})
	}{
		{"no-headers", func(w http.ResponseWriter, r *http.Request, started chan struct{}) {
			close(started)
			<-r.Context().Done()
		}},
		{"open-stream", func(w http.ResponseWriter, r *http.Request, started chan struct{}) {
			sseStart(w)
			sseWrite(w, "id: 1\ndata: \n\n")
			time.Sleep(50 * time.Millisecond) // for the client to read it
			close(started)
			<-r.Context().Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			f := newFake(t)
			started := make(chan struct{})
			f.onCall = func(w http.ResponseWriter, r *http.Request, id, tool string) {
				tt.answer(w, r, started)
			}
			f.onDELETE = func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }
			cs, err := tryConnect(f.url(), &ClientTransport{CloseTimeout: 200 * time.Millisecond}, nil)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(context.Background(), "slow", nil)
				done <- err
			}()
			<-started
			start := time.Now()
			cs.Close()
			select {
			case err := <-done:
				if !errors.Is(err, mcp.ErrSessionClosed) {
					t.Errorf("call ended with %v", err)
				}
			case <-time.After(waitFor):
				t.Fatal("the call outlived Close")
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Close took %v", d)
			}
			checkNoClientGoroutines(t)
		})
	}
}

// A request that got no answer says why in words a person can act on:
// a connection the server closed (at EOF, or idle before the request,
// as net/http reports it) is not a refused one, which alone is NotSent.
func TestRequestErrorsSayWhyThereWasNoAnswer(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		want    string
		notSent bool
	}{
		{"EOF", io.EOF, "closed the connection without answering", false},
		{"idle connection closed", &url.Error{Op: "Post", URL: "u", Err: errors.New("http: server closed idle connection")}, "closed the connection without answering", false},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, "could not be reached", true},
		{"other", errors.New("tls: bad certificate"), "the request failed", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := requestError("POST", "http://h/mcp", tt.err)
			var re *RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.want) || re.NotSent != tt.notSent {
				t.Errorf("%v (NotSent %v), want %q and NotSent %v", err, re != nil && re.NotSent, tt.want, tt.notSent)
			}
		})
	}
}
