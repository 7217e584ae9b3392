package mcphttp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// A Retry-After header is read as seconds or as an HTTP date; what
// cannot be read, or has passed, is no wait at all, and an absurd one is
// capped.
func TestHTTPErrorRetryAfter(t *testing.T) {
	tests := []struct {
		name     string
		header   string
		min, max time.Duration
	}{
		{"seconds", "120", 2 * time.Minute, 2 * time.Minute},
		{"none", "", 0, 0},
		{"zero", "0", 0, 0},
		{"negative", "-5", 0, 0},
		{"garbage", "soon", 0, 0},
		{"date ahead", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat), time.Minute, time.Hour},
		{"date passed", time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat), 0, 0},
		{"absurd", "99999999999999999", maxRetryAfter * time.Second, maxRetryAfter * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &HTTPError{Status: http.StatusTooManyRequests, Header: http.Header{}}
			if tt.header != "" {
				e.Header.Set("Retry-After", tt.header)
			}
			if got := e.RetryAfter(); got < tt.min || got > tt.max {
				t.Errorf("Retry-After %q: %v, want between %v and %v", tt.header, got, tt.min, tt.max)
			}
		})
	}
}

// A request that got no answer is a RequestError, which tells whether
// it certainly never reached the server (nothing listens: safe to send
// again) or may have (the server took it and closed the connection).
func TestRequestErrorSaysWhetherTheRequestWasSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()

	hangUp := newFake(t)
	hangUp.onPOST = func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}
	tests := []struct {
		name    string
		url     string
		notSent bool
	}{
		{"nothing listens", closedURL, true},
		{"the server hangs up", hangUp.url(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound on a hang
			defer cancel()
			conn, err := (&ClientTransport{Endpoint: tt.url, DisableLegacyFallback: true}).Connect(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			err = conn.(*clientConn).WriteMessageContext(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			var re *RequestError
			if !errors.As(err, &re) || re.NotSent != tt.notSent || re.Method != http.MethodPost {
				t.Fatalf("got %#v (%v); want a RequestError with NotSent %v", err, err, tt.notSent)
			}
			if re.Err == nil || errors.Unwrap(re) != re.Err {
				t.Errorf("the cause is not kept: %#v", re)
			}
		})
	}
}

// A 2026-07-28 server's 429 comes with a JSON-RPC error body for the
// request; the caller still gets the HTTPError, whose Retry-After says
// how long to leave the server alone.
func TestPerRequestRateLimitKeepsRetryAfter(t *testing.T) {
	s := testServer()
	h := NewHandler(s, nil)
	srv := newServer(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Method") != "tools/call" {
			h.ServeHTTP(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			t.Errorf("a tools/call that does not decode: %s", b)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: -32001, Message: "slow down"}))
	}))
	cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{ProtocolVersion: "auto"})
	if cs.ProtocolVersion() != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", cs.ProtocolVersion())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound on a hang
	defer cancel()
	_, err := cs.CallTool(ctx, "echo", nil)
	var he *HTTPError
	if !errors.As(err, &he) || he.RetryAfter() != 7*time.Second {
		t.Fatalf("got %v, want an HTTPError with Retry-After 7s", err)
	}
	if !strings.Contains(err.Error(), "slow down") {
		t.Errorf("the server's message is lost: %v", err)
	}
}
