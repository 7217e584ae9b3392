package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// traceLogs is a slog.Handler that keeps, for each message, the trace id
// of the context it was logged with ("" for none).
type traceLogs struct {
	mu    *sync.Mutex
	trace map[string]string
}

func newTraceLogs() *traceLogs {
	return &traceLogs{mu: &sync.Mutex{}, trace: map[string]string{}}
}

func (h *traceLogs) Handle(ctx context.Context, r slog.Record) error {
	id := ""
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		id = sc.TraceID().String()
	}
	h.mu.Lock()
	h.trace[r.Message] = id
	h.mu.Unlock()
	return nil
}

func (h *traceLogs) Enabled(context.Context, slog.Level) bool { return true }
func (h *traceLogs) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *traceLogs) WithGroup(string) slog.Handler            { return h }

func (h *traceLogs) traceOf(msg string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	id, ok := h.trace[msg]
	return id, ok
}

// Issue 24: the lines the gateway logs while it serves a request (a
// resend after a dropped connection, a session's instance starting, a
// rate limit the upstream asked for) carry that request's trace.
func TestRequestLogLinesCarryTheRequestsTrace(t *testing.T) {
	tests := []struct {
		name   string
		server func(t *testing.T) *configServer
		tool   string
		line   string
		fails  bool // the call ends in an error
	}{
		{"a resend", func(t *testing.T) *configServer {
			return &configServer{Name: "shop", URL: newFlaky(t).srv.URL + "/mcp", Type: "http", ServerOptions: config.ServerOptions{HealthInterval: config.Duration(time.Hour)}}
		}, "shop_lookup", "gateway: the connection failed before an answer; sending the request again", false},
		{"a session's instance", func(*testing.T) *configServer { return notesServer(config.InstancesSession) },
			"notes_where", "gateway: starting an instance for a client session", false},
		{"a rate limit", func(t *testing.T) *configServer {
			return &configServer{Name: "busy", URL: newBusy(t) + "/mcp", Type: "http", ServerOptions: config.ServerOptions{HealthInterval: config.Duration(time.Hour)}}
		}, "busy_echo", "gateway: the upstream limits the rate of requests; holding its calls back", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			t.Cleanup(func() { tp.Shutdown(context.Background()) })
			logs := newTraceLogs()
			s := tt.server(t)
			cfg := &config.Config{Servers: map[string]*config.Server{s.Name: s}}
			g := runConfigured(t, cfg, &Options{Logger: slog.New(logs), TracerProvider: tp})
			g.Server().AddMiddleware(otelmcp.ServerMiddleware(&otelmcp.Options{TracerProvider: tp}))
			waitState(t, g, StateReady, StateIdle)
			cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
			if _, err := cs.CallTool(context.Background(), tt.tool, map[string]string{"text": "x"}); (err != nil) != tt.fails {
				t.Fatalf("call: %v, want an error: %v", err, tt.fails)
			}

			var want string
			for _, sp := range rec.Ended() {
				if sp.SpanKind() == trace.SpanKindServer && strings.HasSuffix(sp.Name(), " "+tt.tool) {
					want = sp.SpanContext().TraceID().String()
				}
			}
			got, ok := logs.traceOf(tt.line)
			switch {
			case want == "":
				t.Fatalf("no server span for %s", tt.tool)
			case !ok:
				t.Fatalf("the gateway did not log %q", tt.line)
			case got != want:
				t.Errorf("%q logged with trace %q, want the request's %q", tt.line, got, want)
			}
		})
	}
}

// newBusy serves testUpstream("busy") over HTTP, answering every
// tools/call with 429 and a Retry-After of a minute; it returns the
// server's URL.
func newBusy(t *testing.T) string {
	h := mcphttp.NewHandler(testUpstream("busy"), nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				w.Header().Set("Retry-After", "60")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return srv.URL
}
