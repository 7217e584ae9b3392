package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// When the server forgets the session (deleted, or expired), the next
// call still succeeds: the transport reports mcp.ErrSessionNotFound and
// the client starts a new session on the same connection.
func TestClientReinitializesAfterSessionLoss(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		// noGET answers GET with 405, so that no stream keeps the session
		// busy and it can expire.
		noGET bool
		lose  func(t *testing.T, h *Handler, s *mcp.Server)
	}{
		{
			name: "deleted",
			lose: func(t *testing.T, h *Handler, s *mcp.Server) {
				h.closeSession(h.sessions.get(s.Sessions()[0].ID()))
			},
		},
		{
			name:  "expired",
			opts:  Options{SessionIdleTimeout: 100 * time.Millisecond},
			noGET: true,
			lose: func(t *testing.T, h *Handler, s *mcp.Server) {
				eventually(t, "the session expires", func() bool { return h.SessionCount() == 0 })
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer()
			h := NewHandler(s, &tt.opts)
			rec := &recorder{}
			var inner http.Handler = h
			if tt.noGET {
				inner = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						http.Error(w, "no GET", http.StatusMethodNotAllowed)
						return
					}
					h.ServeHTTP(w, r)
				})
			}
			srv := newServer(t, h, rec.wrap(inner))
			cs := connectClient(t, srv.URL+"/mcp", nil, nil)
			callText(t, cs, "echo", map[string]any{"text": "first"})
			first := s.Sessions()[0].ID()
			tt.lose(t, h, s)
			if got := callText(t, cs, "echo", map[string]any{"text": "second"}); got != "second" {
				t.Errorf("after the session was lost: %q", got)
			}
			if n := rec.count(http.MethodPost, `"initialize"`); n != 2 {
				t.Errorf("%d initialize requests, want 2", n)
			}
			if ss := s.Sessions(); len(ss) != 1 || ss[0].ID() == first {
				t.Errorf("sessions after: %d", len(ss))
			}
		})
	}
}

// newServer serves handler, shutting h down with the test.
func newServer(t *testing.T, h *Handler, handler http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return srv
}

// On the raw connection: a 404 to a request with a session id is
// mcp.ErrSessionNotFound (and an HTTPError), and later writes other than
// initialize fail the same way without being sent.
func TestClientSessionNotFound(t *testing.T) {
	h, srv, rec := startRecorded(t, testServer(), nil)
	conn, err := (&ClientTransport{Endpoint: srv.URL + "/mcp"}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer checkNoClientGoroutines(t)
	defer conn.Close()
	write := func(msg string) error { return conn.WriteMessage([]byte(msg)) }
	if err := write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); err != nil {
		t.Fatal(err)
	}
	if msg, err := conn.ReadMessage(); err != nil || !strings.Contains(string(msg), `"protocolVersion"`) {
		t.Fatalf("initialize answer %s, %v", msg, err)
	}
	conn.(mcp.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
	if err := write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.server.Sessions() {
		h.closeSession(h.sessions.get(s.ID()))
	}
	err = write(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	var he *HTTPError
	if !errors.Is(err, mcp.ErrSessionNotFound) || !errors.As(err, &he) || he.Status != http.StatusNotFound || he.Method != http.MethodPost {
		t.Fatalf("got %v; want a 404 HTTPError that is ErrSessionNotFound", err)
	}
	if !strings.Contains(err.Error(), "no longer knows this session") {
		t.Errorf("error %q", err)
	}
	posts := rec.count(http.MethodPost, "")
	if err := write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); !errors.Is(err, mcp.ErrSessionNotFound) {
		t.Errorf("second write: %v", err)
	}
	if rec.count(http.MethodPost, "") != posts {
		t.Error("a write was sent without a session")
	}
	if err := write(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`); err != nil {
		t.Fatalf("initialize again: %v", err)
	}
	reqs := rec.all()
	if last := reqs[len(reqs)-1]; last.header.Get(headerSessionID) != "" {
		t.Errorf("the new initialize carried session %q", last.header.Get(headerSessionID))
	}
}
