package gateway

// Supervision of an upstream's failures by class. Each class has its own
// remedy, because the wrong one makes things worse: restarting a server
// that is only slow loses the work of its other calls, retrying a refused
// credential may lock the account, and calling a rate-limited server
// again only extends its limit.
//
//   - A stdio server that stops answering (a call times out, and so does
//     a ping sent after it) is killed, its whole process group, and
//     started again; the calls waiting on it fail at once with
//     CodeUpstreamTimeout instead of each waiting out its timeout.
//   - A request to an HTTP server whose connection fails before an
//     answer (refused, reset, closed) is sent again, at most maxSends
//     times in all and within the call's time, where that cannot run it
//     twice: the connection was never made, or the request is read-only
//     or idempotent (a tool says so with readOnlyHint or
//     idempotentHint). Another fails with CodeUpstreamFailed, saying that
//     it may have run.
//   - An HTTP server that limits the rate of requests (429, or a
//     Retry-After) is left alone for the time it asked: its calls fail
//     fast with CodeRateLimited and data.retryAfterMs, and its health
//     checks wait; it is not down for that.
//   - An upstream that refuses the gateway's credentials (HTTP 401 or
//     403, a refused OAuth grant) is auth-failed, with what the operator
//     must do, and is not tried again by itself (waitCredentials, in
//     upstream.go) until its settings change, an operator retries it, or
//     a person signs in again.
//
// The upstream's run goroutine (upstream.go) acts on what calls (do, in
// upstream_call.go) tell it here.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// probeTimeout bounds the ping that tells a server that is slow from one
// that stopped answering: a ping costs a live server nothing, so a few
// seconds without an answer mean it is not reading at all.
func (u *upstream) probeTimeout() time.Duration {
	return min(u.timeout(), 5*time.Second)
}

// restartable reports whether the gateway can end this upstream and
// start it again itself: a server it runs as a subprocess.
func (u *upstream) restartable() bool { return u.cfg.Command != "" && u.local == nil }

// noteTimeout tells the supervisor that a call ran out of the upstream's
// timeout, so that it checks whether the server still answers.
func (u *upstream) noteTimeout(err error) {
	if !u.restartable() {
		return
	}
	select {
	case u.timedOut <- err:
	default: // told already
	}
}

// stillAnswers checks, after a call timed out, that the session's server
// answers a ping. One that does is only slow on that call and stays up.
// One that does not has stopped answering: the session is closed, which
// fails its waiting calls at once (with CodeUpstreamTimeout, see
// callError) and ends the server's whole process group, and the upstream
// is marked starting again, its tools kept listed, for run to restart it.
func (u *upstream) stillAnswers(ctx context.Context, cs *mcp.ClientSession, timedOut error) bool {
	pctx, cancel := context.WithTimeout(ctx, u.probeTimeout())
	perr := cs.Ping(pctx)
	cancel()
	if perr == nil || ctx.Err() != nil {
		if perr == nil {
			u.logger.Info("gateway: a call timed out, but the upstream answers a ping; keeping it", "call", timedOut)
		}
		return true
	}
	err := fmt.Errorf("the server stopped answering (a call got no answer within %s, nor did a ping within %s); it was killed and is being restarted",
		u.timeout(), u.probeTimeout())
	u.logger.Warn("gateway: upstream stopped answering; killing it and starting it again", "call", timedOut, "ping", perr)
	u.mu.Lock()
	u.hung, u.cs, u.lastErr = cs, nil, err
	u.setStateLocked(StateStarting)
	u.mu.Unlock()
	// Close ends the session first, failing the calls that wait on it,
	// then runs the stop sequence on the process group: stdin closed,
	// SIGTERM, SIGKILL.
	cs.Close()
	return false
}

// killedHung reports whether cs is a session closed because its server
// stopped answering.
func (u *upstream) killedHung(cs *mcp.ClientSession) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return cs != nil && u.hung == cs
}

// errStoppedAnswering is the error of the calls that were waiting on a
// server killed for not answering.
func errStoppedAnswering(server string) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeUpstreamTimeout, "Upstream %q stopped answering (a call timed out and so did a ping); it was killed and is being restarted. Whether the call ran is unknown: retry it in a few seconds if that is safe",
		server).WithData(map[string]any{"server": server})
}

// maxSends bounds how many times one request is sent when its
// connection fails before an answer.
const maxSends = 3

// resendWait is the wait before the first resend; it doubles after.
const resendWait = 100 * time.Millisecond

// sendAgain reports, after a wait, whether a request whose connection
// failed before an answer (err) is sent again: when that cannot run it
// twice (resend, or the connection was never made) and the wait leaves
// the call time. sends is how many times it was sent.
func (u *upstream) sendAgain(ctx context.Context, err error, resend bool, sends int) bool {
	var re *mcphttp.RequestError
	if !errors.As(err, &re) || !resend && !re.NotSent || ctx.Err() != nil {
		return false
	}
	wait := resendWait << (sends - 1)
	wait += rand.N(wait / 2) // calls that failed together do not come back together
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
		return false
	}
	u.logger.InfoContext(ctx, "gateway: the connection failed before an answer; sending the request again", "error", err, "sends", sends, "in", wait.Round(time.Millisecond))
	return sleep(ctx, wait)
}

// errMaybeSent is the error of a request whose connection failed after
// it may have reached the server, which was not sent again since it may
// not be safe to run twice.
func errMaybeSent(server string, re *mcphttp.RequestError) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeUpstreamFailed, "Upstream %q: the connection failed before an answer (%s). The request may have reached the server, so it was not sent again (the tool is not marked read-only or idempotent): check whether it took effect before calling it again",
		server, redact.String(re.Error())).WithData(map[string]any{"server": server})
}

// defaultRateWait is the pause after a 429 that says nothing of when to
// come back.
const defaultRateWait = time.Second

// maxRateWait caps the pause an upstream may ask for: past it, a call is
// let through to ask again, which costs one refused request.
const maxRateWait = maxBackoff

// rateLimitOf reports whether err is an upstream's HTTP answer asking
// for fewer requests (429, or another status but 401 and 403 with a
// Retry-After, such as a 503 while overloaded), and how long to wait.
func rateLimitOf(err error) (time.Duration, bool) {
	var he *mcphttp.HTTPError
	if !errors.As(err, &he) || he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden {
		return 0, false
	}
	wait := he.RetryAfter()
	switch {
	case wait > 0:
	case he.Status == http.StatusTooManyRequests:
		wait = defaultRateWait
	default:
		return 0, false
	}
	return min(wait, maxRateWait), true
}

// noteRateLimit records the pause that err asks for, if it is a rate
// limit (rateLimitOf), and returns it.
// ctx is the request's (for its trace on the log line) or the
// supervisor's.
func (u *upstream) noteRateLimit(ctx context.Context, err error) (time.Duration, bool) {
	wait, ok := rateLimitOf(err)
	if !ok {
		return 0, false
	}
	till := time.Now().Add(wait)
	u.mu.Lock()
	if till.After(u.limitedTill) {
		u.limitedTill = till
	}
	u.mu.Unlock()
	u.logger.InfoContext(ctx, "gateway: the upstream limits the rate of requests; holding its calls back", "for", wait.Round(time.Millisecond))
	return wait, true
}

// limitLeft is how long the upstream's rate limit still holds.
//
// Calls during it fail at once rather than wait in the gateway, even
// when the wait would fit in their time: a waiting call holds one of the
// upstream's slots and its client with no sign of progress, while the
// client, told retryAfterMs, can do something else meanwhile and knows
// when to come back.
func (u *upstream) limitLeft() time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	return time.Until(u.limitedTill)
}

// errUpstreamRateLimited is the error of a call to an upstream during
// the rate limit it asked for.
func errUpstreamRateLimited(server string, wait time.Duration) *jsonrpc.Error {
	ms := max(wait.Milliseconds(), 1)
	return jsonrpc.Errorf(CodeRateLimited, "Upstream %q is limiting the rate of requests; the gateway holds calls to it back for as long as it asked: retry in %d ms", server, ms).
		WithData(map[string]any{"server": server, "retryAfterMs": ms})
}
