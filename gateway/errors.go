package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The gateway's own JSON-RPC error codes, stable and documented in the
// README. They sit in JSON-RPC's implementation-defined range, clear of
// the codes MCP itself uses (-32002, -32020 to -32022, -32042).
const (
	CodeRateLimited         = -32001 // data.retryAfterMs: when to try again
	CodeUpstreamUnavailable = -32010 // the server is down, starting, or its circuit is open
	CodeUpstreamTimeout     = -32011 // no answer within the server's timeout; the call was cancelled upstream
	CodeUpstreamFailed      = -32012 // the connection broke during the call (the server died, say)
	CodeUpstreamTooLarge    = -32013 // the server's answer was over the gateway's message size limit; data.limit names it
	CodeDefinitionChanged   = -32014 // the tool's definition changed upstream (pins: block); calls wait for an operator's approval
	CodeInstanceLimit       = -32015 // a server with one process per session is at its cap (data.server, data.cap, data.limit)
)

func errUnavailable(server string, cause error, state State, retryAfter time.Duration) *jsonrpc.Error {
	msg := fmt.Sprintf("Upstream %q is unavailable", server)
	if cause != nil {
		msg += ": " + redact.String(cause.Error())
	}
	ms := max(retryAfter, 100*time.Millisecond).Milliseconds()
	return jsonrpc.Errorf(CodeUpstreamUnavailable, "%s; its tools return when it recovers (retry in %d ms), and the other servers keep serving", msg, ms).
		WithData(map[string]any{"server": server, "state": state, "retryAfterMs": ms})
}

// unavailable is the error of a request for this upstream while it is
// not connected: its state, what went wrong last, and when to retry (its
// next attempt to connect, or a second while it is starting).
func (u *upstream) unavailable() *jsonrpc.Error {
	u.mu.Lock()
	state, lastErr, retryAt := u.state, u.lastErr, u.retryAt
	u.mu.Unlock()
	wait := time.Second
	switch state {
	case StateDown:
		wait = time.Until(retryAt) + 500*time.Millisecond // a connection takes a moment
	case StateFailed, StateAuthFailed:
		wait = maxBackoff // until an operator acts
	}
	return errUnavailable(u.cfg.Name, lastErr, state, wait)
}

// upstreamError turns what a call to an upstream returned into the error
// the downstream client sees: the upstream's own JSON-RPC errors pass
// through unchanged; failures of the hop get the gateway's codes.
func upstreamError(ctx context.Context, server string, err error) error {
	var ce *mcp.CallError
	var tooLarge *mcp.MessageTooLargeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return redactError(ce.Err)
	case errors.Is(context.Cause(ctx), errCallTimeout):
		return jsonrpc.Errorf(CodeUpstreamTimeout, "Upstream %q did not answer within its timeout; the call was cancelled there", server).
			WithData(map[string]any{"server": server})
	case ctx.Err() != nil:
		return ctx.Err() // the downstream client cancelled
	case errors.As(err, &tooLarge):
		return jsonrpc.Errorf(CodeUpstreamTooLarge, "Upstream %q answered with %s, over the gateway's limit of %d bytes; the call failed, the server is still connected. Ask for less (a narrower query, a page), or raise the limit",
			server, sizeOf(tooLarge.Size), tooLarge.Limit).WithData(map[string]any{"server": server, "limit": tooLarge.Limit})
	case errors.Is(err, mcp.ErrConnectionClosed), errors.Is(err, mcp.ErrSessionClosed):
		return jsonrpc.Errorf(CodeUpstreamFailed, "Upstream %q failed during the call (%s); it is being restarted, and the call may be retried", server, redact.String(err.Error())).
			WithData(map[string]any{"server": server})
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return redactError(rpcErr)
	}
	return jsonrpc.Errorf(CodeUpstreamFailed, "Upstream %q: %s", server, redact.String(err.Error())).WithData(map[string]any{"server": server})
}

// redactError is an upstream's error as its client may see it: a message
// or data that carries a secret (a connection string, a token echoed
// back) has it redacted.
func redactError(e *jsonrpc.Error) *jsonrpc.Error {
	msg := redact.String(e.Message)
	data := e.Data
	if len(data) > 0 {
		if d, err := redact.JSON(data); err == nil {
			data = d
		}
	}
	if msg == e.Message && string(data) == string(e.Data) {
		return e
	}
	return &jsonrpc.Error{Code: e.Code, Message: msg, Data: data}
}

// errCallTimeout is the cause of a call's end past its upstream's
// timeout; it is a deadline, so that tracing calls it a timeout.
var errCallTimeout = fmt.Errorf("the upstream's timeout passed: %w", context.DeadlineExceeded)

func sizeOf(n int) string {
	if n <= 0 {
		return "a message"
	}
	return fmt.Sprintf("%d bytes", n)
}
