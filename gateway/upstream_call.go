package gateway

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type downstreamKey struct{}

// activeCall is a downstream request in flight to an upstream, with the
// context of its upstream call: what the upstream asks in return is
// asked on its behalf and ends with it.
type activeCall struct {
	req *mcp.Request
	ctx context.Context
	// relays counts the upstream's requests relayed for it now.
	relays int
}

// do runs f against the upstream on behalf of a downstream request: within
// the concurrency bound and the circuit breaker, bounded by the upstream's
// timeout, with the request recorded so that what the upstream asks in
// return (sampling, elicitation, roots) can be relayed to its client.
// With resend, the request is safe to send twice (read-only or
// idempotent), and is sent again when the connection fails before an
// answer (sendAgain).
func (u *upstream) do(ctx context.Context, req *mcp.Request, resend bool, f func(ctx context.Context, cs *mcp.ClientSession) error) error {
	if wait := u.limitLeft(); wait > 0 {
		spanEvent(ctx, eventRateLimited, attrUpstream.String(u.cfg.Name), attrWait.Int64(wait.Milliseconds()))
		return errUpstreamRateLimited(u.cfg.Name, wait)
	}
	if !u.breaker.allow() {
		spanEvent(ctx, eventBreakerOpen, attrUpstream.String(u.cfg.Name), attrWait.Int64(u.breaker.wait().Milliseconds()))
		return errUnavailable(u.cfg.Name, errors.New("too many calls failed in a row; calls resume after a pause"), u.currentState(), u.breaker.wait())
	}
	ctx, cancel := u.callContext(ctx)
	defer cancel()
	select {
	case u.slots <- struct{}{}:
	case <-ctx.Done():
		return upstreamError(ctx, u.cfg.Name, errors.New("no free slot"))
	}
	defer func() { <-u.slots }()
	cs, err := u.session(ctx)
	if err != nil {
		return err
	}
	ac := u.track(ctx, req)
	defer u.untrack(ac)
	t0 := time.Now()
	fctx := context.WithValue(ctx, downstreamKey{}, ac)
	err = f(fctx, cs)
	for sends := 1; sends < maxSends && u.sendAgain(ctx, err, resend, sends); sends++ {
		spanEvent(ctx, eventResend, attrUpstream.String(u.cfg.Name), attrSends.Int(sends+1))
		if cs, err = u.session(ctx); err != nil {
			break
		}
		err = f(fctx, cs)
	}
	out := u.callError(ctx, cs, resend, err)
	u.stats.record(time.Since(t0), out != nil)
	var rpcErr *jsonrpc.Error
	failed := out != nil && errors.As(out, &rpcErr) && rpcErr.Code >= CodeUpstreamFailed && rpcErr.Code <= CodeUpstreamUnavailable
	// A REST API's calls count their answers themselves (restAPI.call):
	// a 503 is a result for the client and a failure for the breaker.
	if (failed || u.cfg.OpenAPI == nil) && u.breaker.record(!failed) {
		spanEvent(ctx, eventBreakerOpened, attrUpstream.String(u.cfg.Name))
	}
	if failed && rpcErr.Code == CodeUpstreamTimeout && errors.Is(context.Cause(ctx), errCallTimeout) {
		u.noteTimeout(out)
	}
	if failed && rpcErr.Code == CodeUpstreamFailed && ctx.Err() == nil {
		// The hop itself failed (refused, reset, closed): the supervisor
		// checks the upstream now rather than at its next health check.
		select {
		case u.hopFailed <- out:
		default: // told already
		}
	}
	return out
}

// callError is the error the downstream client gets for what a call
// through cs returned (upstreamError), but for the calls of a server
// killed for not answering (stillAnswers), which timed out in effect,
// and a request that may have reached the server and was not sent
// again, which says so.
func (u *upstream) callError(ctx context.Context, cs *mcp.ClientSession, resend bool, err error) error {
	var re *mcphttp.RequestError
	switch {
	case err == nil || ctx.Err() != nil:
	case u.killedHung(cs):
		return errStoppedAnswering(u.cfg.Name)
	case errors.As(err, &re) && !re.NotSent && !resend:
		return errMaybeSent(u.cfg.Name, re)
	}
	if wait, ok := u.noteRateLimit(ctx, err); ok {
		return errUpstreamRateLimited(u.cfg.Name, wait)
	}
	return upstreamError(ctx, u.cfg.Name, err)
}

// track records a downstream request in flight to this upstream.
func (u *upstream) track(ctx context.Context, req *mcp.Request) *activeCall {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lastUsed = time.Now()
	if req == nil {
		return nil
	}
	ac := &activeCall{req: req, ctx: ctx}
	u.active = append(u.active, ac)
	return ac
}

func (u *upstream) untrack(ac *activeCall) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.lastUsed = time.Now()
	if ac != nil {
		u.active = slices.DeleteFunc(u.active, func(a *activeCall) bool { return a == ac })
	}
}

// downstream finds the downstream call an upstream's request belongs
// to: the call it came in (a 2026-07-28 upstream's input rounds carry
// the call's context), or else the newest call in flight to this upstream
// (a session-era upstream's requests name no call) that is not parked: the
// handler of a parked call already waits on its own question.
func (u *upstream) downstream(ctx context.Context) *activeCall {
	if ac, ok := ctx.Value(downstreamKey{}).(*activeCall); ok && ac != nil {
		return ac
	}
	u.mu.Lock()
	active := slices.Clone(u.active)
	u.mu.Unlock()
	for _, ac := range slices.Backward(active) {
		if !u.g.relays.parked(ac.req) {
			return ac
		}
	}
	if n := len(active); n > 0 {
		return active[n-1]
	}
	return nil
}
