package mcphttp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Options configure a Handler. The zero value is a good default for a
// server on a loopback address.
type Options struct {
	// Endpoint is the path of the Streamable HTTP endpoint. Default "/mcp".
	Endpoint string

	// Stateless answers every POST on its own, with no session: for
	// deployments behind load balancers that do not pin clients to a
	// replica. GET and DELETE are then 405, and server-to-client requests
	// (sampling, elicitation, roots) are not available.
	Stateless bool

	// AllowedHosts are the host names (without port) accepted in the Host
	// header, to defeat DNS rebinding. The loopback names localhost,
	// 127.0.0.1 and ::1 are always accepted; a server reachable by other
	// names must list them. "*" accepts any host (not recommended).
	AllowedHosts []string

	// AllowedOrigins are the origins (scheme://host[:port]) accepted in
	// the Origin header. Requests without Origin (non-browser clients) are
	// accepted; an Origin on an allowed host is accepted too. "*" accepts
	// any origin.
	AllowedOrigins []string

	// CORS, when true, answers browser preflights and adds CORS headers
	// for allowed origins, exposing Mcp-Session-Id to scripts.
	CORS bool

	// MaxBodySize bounds a POST body; a larger one gets 413. Default 4 MiB.
	MaxBodySize int64

	// SessionIdleTimeout ends a session that has had no request and no
	// open stream for this long. Default 30 minutes.
	SessionIdleTimeout time.Duration

	// MaxSessions bounds the sessions held at once; past it the caller's
	// own least recently used idle session is ended, else the idle one of
	// a caller holding more sessions than it, and if there is none new
	// sessions are refused with 503. Default 10000.
	MaxSessions int

	// MaxSessionsPerPrincipal bounds the sessions one principal holds at
	// once, anonymous callers counted by IP address; past it the
	// principal's own least recently used idle session is ended, and if
	// none is idle its new sessions are refused with 429. Default 64.
	MaxSessionsPerPrincipal int

	// EventStore keeps SSE events so that a client can resume a stream
	// with Last-Event-ID. Default: an in-memory store bounded per session.
	EventStore EventStore

	// Cluster, when set, shares sessions with the other replicas of this
	// server behind a load balancer, so that any of them serves any
	// request: no sticky routing is needed. See [Cluster]. The legacy
	// HTTP+SSE transport's sessions stay on the replica that holds their
	// stream, and need sticky routing.
	Cluster Cluster

	// Route, with Cluster, names (by its tag, see Cluster.Tag) the
	// replica that must run a request of a shared session; "" or this
	// replica's own tag runs it here. It is for requests that need what
	// only one replica holds, such as an upstream process of the
	// session's own: the request is handed to that replica, which runs it
	// in its copy of the session, and its messages and reply come back
	// through the cluster's events. Route is called for every request of
	// a shared session, so it must be cheap.
	Route func(ctx context.Context, sessionID string, msg *jsonrpc.Message) string

	// CarryContext, with Cluster, carries what a request's handlers read
	// from its context besides the principal (the authenticated caller
	// and its scopes, a tenant) to the replica that runs it for another.
	CarryContext *ContextCarrier

	// StreamResponses answers every request with an SSE stream, even when
	// the result is all there is to send, as the TypeScript SDK does by
	// default. Off, a request whose result comes first is answered with
	// plain JSON (cheaper, and readable with curl); either way progress,
	// logs and server-to-client requests sent before the result switch the
	// response to SSE.
	StreamResponses bool

	// KeepAlive is the interval of SSE comments on idle streams, which
	// keep proxies from closing them. A request still running after this
	// long is switched to an SSE response for the same reason. Default 25s.
	KeepAlive time.Duration

	// RetryInterval is the reconnection delay advertised in SSE retry
	// fields (to 2025-11-25 clients). Default 1s.
	RetryInterval time.Duration

	// BodyReadTimeout bounds reading a request body, so that an abandoned
	// half-sent request does not hold a connection. Default 30s.
	BodyReadTimeout time.Duration

	// Principal names the authenticated caller of a request ("" for
	// anonymous). Sessions and stored events are bound to it: another
	// principal's request with the same session id gets 404.
	Principal func(*http.Request) string

	// Authorize, when set, is called for each request and notification of
	// a POST body before it is handled (in a batch, for each element); an
	// error rejects the whole body, with the status of a *StatusError or
	// 403. Authentication itself is HTTP middleware around the Handler;
	// this hook is for decisions that need the JSON-RPC method, such as
	// OAuth scopes.
	Authorize func(r *http.Request, msg *jsonrpc.Message) error

	// LegacySSE serves the 2024-11-05 HTTP+SSE transport next to the
	// endpoint: GET SSEPath opens a stream, and POSTs go to MessagePath.
	// Not available in stateless mode.
	LegacySSE bool
	// SSEPath and MessagePath default to "/sse" and "/message".
	SSEPath, MessagePath string

	// Logger receives transport diagnostics. Default slog.Default().
	Logger *slog.Logger
}

func (o *Options) fill() {
	if o.Endpoint == "" {
		o.Endpoint = "/mcp"
	}
	if o.MaxBodySize <= 0 {
		o.MaxBodySize = 4 << 20
	}
	if o.SessionIdleTimeout <= 0 {
		o.SessionIdleTimeout = 30 * time.Minute
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 10000
	}
	if o.MaxSessionsPerPrincipal <= 0 {
		o.MaxSessionsPerPrincipal = 64
	}
	if o.EventStore == nil {
		o.EventStore = NewMemoryEventStore(0, 0)
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 25 * time.Second
	}
	if o.RetryInterval <= 0 {
		o.RetryInterval = time.Second
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = 30 * time.Second
	}
	if o.Principal == nil {
		o.Principal = func(*http.Request) string { return "" }
	}
	if o.SSEPath == "" {
		o.SSEPath = "/sse"
	}
	if o.MessagePath == "" {
		o.MessagePath = "/message"
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// ContextCarrier saves values of a request's context on the replica that
// received it and restores them on the replica that runs it
// ([Options.CarryContext]). What it saves travels through the cluster's
// store, which the replicas trust; it must hold no secret that the
// store may not see.
type ContextCarrier struct {
	Save    func(ctx context.Context) ([]byte, error)
	Restore func(ctx context.Context, saved []byte) context.Context
}

// StatusError is an error with an HTTP status (and headers) that a hook
// such as Options.Authorize returns to reject a request.
type StatusError struct {
	Status  int
	Header  http.Header
	Code    int64 // JSON-RPC error code of the body
	Message string
}

func (e *StatusError) Error() string { return e.Message }
