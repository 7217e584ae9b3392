package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// A server that refuses the first POST with 400, 404 or 405 is spoken to
// with the 2024-11-05 HTTP+SSE transport: here our own legacy server,
// mounted so that its stream is at the endpoint's URL.
func TestClientLegacyFallback(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// refuse, when not 0, answers a POST to /mcp with it and serves
		// GET /mcp as the legacy stream (/sse).
		refuse int
	}{
		{"legacy server at the endpoint (POST 405)", Options{LegacySSE: true, Endpoint: "/streamable", SSEPath: "/mcp"}, 0},
		{"POST 404", Options{LegacySSE: true}, http.StatusNotFound},
		{"POST 400", Options{LegacySSE: true}, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := NewHandler(testServer(), &tt.opts)
			rec := &recorder{}
			var inner http.Handler = h
			if tt.refuse != 0 {
				inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path == "/mcp" {
						if r.Method == http.MethodPost {
							http.Error(w, "not here", tt.refuse)
							return
						}
						r.URL.Path = "/sse"
					}
					h.ServeHTTP(w, r)
				})
			}
			srv := newServer(t, h, rec.wrap(inner))
			cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{
				CreateMessageHandler: func(context.Context, *mcp.ClientSession, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					return &mcp.CreateMessageResult{Model: "old", Role: mcp.RoleAssistant, Content: []byte(`{"type":"text","text":"hi"}`)}, nil
				},
			})
			if got := callText(t, cs, "echo", map[string]any{"text": "legacy"}); got != "legacy" {
				t.Errorf("echo: %q", got)
			}
			// notifications/initialized is handled before its 202, so
			// the server may send requests at once.
			if got := callText(t, cs, "sample", nil); got != "model old" {
				t.Errorf("sample: %q", got)
			}
			if n := rec.count(http.MethodPost, `"initialize"`); n != 2 {
				t.Errorf("%d initialize POSTs, want 2 (the refused one, then the legacy one)", n)
			}
			cs.Close()
			eventually(t, "the legacy session ends", func() bool { return h.SessionCount() == 0 })
			if rec.count(http.MethodDelete, "") != 0 {
				t.Error("DELETE sent on the legacy transport")
			}
		})
	}
}

// The end of the legacy stream is the end of the session.
func TestClientLegacyStreamEnd(t *testing.T) {
	h := NewHandler(testServer(), &Options{LegacySSE: true, Endpoint: "/streamable", SSEPath: "/mcp"})
	srv := newServer(t, h, h)
	cs := connectClient(t, srv.URL+"/mcp", nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	h.Shutdown(ctx)
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case err := <-done:
		if !errors.Is(err, mcp.ErrConnectionClosed) || !strings.Contains(err.Error(), "legacy HTTP+SSE stream") {
			t.Errorf("session ended with %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("the session outlived its stream")
	}
}

func TestClientLegacyFailures(t *testing.T) {
	tests := []struct {
		name    string
		disable bool
		get     http.HandlerFunc
		want    []string
	}{
		{
			name: "endpoint on another origin",
			get: func(w http.ResponseWriter, r *http.Request) {
				sseStart(w)
				sseWrite(w, "event: endpoint\ndata: http://evil.example:1/message\n\n")
				<-r.Context().Done()
			},
			want: []string{"405 Method Not Allowed", "fallback to the legacy HTTP+SSE transport failed too", "another origin"},
		},
		{
			name: "no endpoint event",
			get: func(w http.ResponseWriter, r *http.Request) {
				sseStart(w)
				sseWrite(w, "event: message\ndata: {}\n\n")
			},
			want: []string{"no endpoint event came"},
		},
		{
			name: "GET refused too",
			want: []string{"does not accept POST", "does not accept GET"},
		},
		{
			name:    "fallback disabled",
			disable: true,
			get:     func(w http.ResponseWriter, r *http.Request) { t.Error("GET sent with the fallback disabled") },
			want:    []string{"does not accept POST at this URL (405 Method Not Allowed)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.onPOST = func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "use GET", http.StatusMethodNotAllowed)
			}
			f.onGET = tt.get
			_, err := tryConnect(f.url(), &ClientTransport{DisableLegacyFallback: tt.disable}, nil)
			if err == nil {
				t.Fatal("connected")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != http.StatusMethodNotAllowed || he.Method != http.MethodPost {
				t.Errorf("error %v is not the POST's HTTPError", err)
			}
			checkNoClientGoroutines(t)
		})
	}
}
