package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Request is one inbound request or notification as handlers and
// middleware see it.
type Request struct {
	// Method is the JSON-RPC method.
	Method string
	// ID is the request id; it is zero for a notification.
	ID jsonrpc.ID
	// RawParams are the params exactly as received (nil when absent).
	RawParams json.RawMessage
	// Session is the client's session.
	Session *ServerSession

	rev        revision
	perRequest *perRequestRequest // nil for a session-era request

	// Multi-round-trip input (mrtr.go).
	principal  string // who asked, for binding requestState
	needInput  *InputRequiredError
	missingCap *jsonrpc.Error
	inputs     map[string]jsontext.Value
	state      []byte
	autoN      int
	w          MessageWriter      // the stream of this request
	respond    func([]byte) error // where the response goes; nil: writeReply to w
	inline     bool
	cancelFn   context.CancelCauseFunc

	cancelMu    sync.Mutex // guards cancelFn and earlyCancel
	earlyCancel error

	createdTask *task // the task this request created, announced once it is answered

	cancelled atomic.Bool // cancelled by the client: send no response
	done      atomic.Bool // answered: send nothing more about it

	metaOnce sync.Once
	token    ProgressToken
	progMu   sync.Mutex
	lastProg float64
	progSent bool

	ctx requestContext // run's context for the handlers
}

type requestKey struct{}

// requestContext is a request's context as its handler gets it: the
// parent's, with the request as the requestKey value. It lives in the
// Request, so a call allocates nothing for it (context.WithValue did,
// on every call of the hot path).
type requestContext struct {
	context.Context
	req *Request
}

func (c *requestContext) Value(key any) any {
	if _, ok := key.(requestKey); ok {
		return c.req
	}
	return c.Context.Value(key)
}

// requestFrom returns the request a handler's context belongs to.
func requestFrom(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// IsNotification reports whether the message expects no response.
func (r *Request) IsNotification() bool { return r.ID.IsZero() }

// ProtocolVersion returns the protocol revision this request is served at.
func (r *Request) ProtocolVersion() string { return r.rev.String() }

// ClientCapabilities returns what the client declared it supports.
func (r *Request) ClientCapabilities() *ClientCapabilities {
	if r.perRequest != nil {
		return &r.perRequest.caps
	}
	return r.Session.clientCaps()
}

// ClientInfo returns the client's self-description (self-reported: do not
// base security decisions on it).
func (r *Request) ClientInfo() Implementation {
	if r.perRequest != nil {
		return r.perRequest.clientInfo
	}
	if p := r.Session.InitializeParams(); p != nil {
		return p.ClientInfo
	}
	return Implementation{}
}

// cancel cancels the request's context; a cancellation that arrives
// before the request starts running is kept and applied when it does.
func (r *Request) cancel(cause error) {
	r.cancelMu.Lock()
	defer r.cancelMu.Unlock()
	if r.cancelFn != nil {
		r.cancelFn(cause)
		return
	}
	r.earlyCancel = cause
}

// startCancel gives the running request its cancel function.
func (r *Request) startCancel(cancel context.CancelCauseFunc) {
	r.cancelMu.Lock()
	defer r.cancelMu.Unlock()
	r.cancelFn = cancel
	if r.earlyCancel != nil {
		cancel(r.earlyCancel)
	}
}

// MethodHandler handles one method. The result is encoded as JSON; a
// returned *jsonrpc.Error is sent as it is, any other error as an internal
// error carrying its text.
type MethodHandler func(ctx context.Context, req *Request) (result any, err error)

// Middleware wraps a MethodHandler; it sees every inbound request and
// notification, with the method's result or error.
type Middleware func(MethodHandler) MethodHandler

// call runs the middleware chain, turning a panic into an internal error
// so that one bad handler never ends the session.
func (s *Server) call(ctx context.Context, req *Request) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("mcp: handler panicked", "method", req.Method, "panic", p, "stack", stack())
			res, err = nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server failed while handling %s; the details are in the server's log", req.Method)
		}
	}()
	return (*s.handler.Load())(ctx, req)
}

// progressToken returns params._meta.progressToken, read on first use:
// most requests never report progress, so most never pay for the lookup.
func (r *Request) progressToken() ProgressToken {
	r.metaOnce.Do(func() {
		r.token = findProgressToken(r.RawParams)
	})
	return r.token
}

// findProgressToken reads _meta.progressToken from raw params without
// decoding anything else. Only a string or an integer is a token.
func findProgressToken(params []byte) ProgressToken {
	if len(params) == 0 {
		return nil
	}
	meta := findMember(params, "_meta")
	if len(meta) == 0 || meta[0] != '{' {
		return nil
	}
	tok := findMember(meta, "progressToken")
	if len(tok) == 0 {
		return nil
	}
	var id jsonrpc.ID
	if id.UnmarshalJSON(tok) != nil {
		return nil
	}
	return tok
}
