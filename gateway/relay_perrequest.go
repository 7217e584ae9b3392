package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// A 2026-07-28 client is asked for input by the result of its request
// (input_required) and answers with a new request, while the upstream
// waits on a request of its own. So for such a client an upstream tool
// call, prompts/get or resources/read (the methods that may answer
// input_required) runs apart from the downstream request that started
// it. When the upstream asks, the call is parked: the client gets the
// question, and a requestState naming the parked call (the library signs
// it and binds it to the caller, the method and its params; the gateway
// checks them again against the parked call, so that its id alone
// resumes nothing). The client's next request hands the answer to the
// waiting upstream and waits for what it does next: the result, or
// another question. A call not resumed within the input window is
// cancelled upstream.

// DefaultInputWindow is how long a parked call waits for its client.
const DefaultInputWindow = 5 * time.Minute

// maxParkedPerCaller bounds the parked calls of one caller: each holds
// one of its upstream's concurrency slots while it waits.
const maxParkedPerCaller = 16

const relayStatePrefix = "mcpgate-relay:"

var (
	errInputWindow   = errors.New("the client did not answer within the input window")
	errParkedTooMany = errors.New("the caller has too many calls waiting for input")
)

// relays are the calls of 2026-07-28 clients whose upstream may ask for
// input.
type relays struct {
	window time.Duration
	logger *slog.Logger

	mu      sync.Mutex
	byID    map[string]*relayCall
	byReq   map[*mcp.Request]*relayCall // by the request the upstream call is tracked under
	waiting map[string]int              // parked calls by caller
}

func newRelays(window, stateTTL time.Duration, logger *slog.Logger) *relays {
	if window <= 0 {
		window = DefaultInputWindow
	}
	if stateTTL > 0 && stateTTL < window {
		window = stateTTL // a retry after that is refused by the library anyway
	}
	return &relays{window: window, logger: logger, byID: map[string]*relayCall{}, byReq: map[*mcp.Request]*relayCall{}, waiting: map[string]int{}}
}

// relayCall is one upstream call of a 2026-07-28 client.
type relayCall struct {
	rs       *relays
	id       string
	caller   string
	method   string
	target   string // the published tool or prompt name, or resource URI
	args     [32]byte
	server   string
	first    *mcp.Request
	events   chan relayEvent
	gone     chan struct{} // closed when the call is given up
	goneOnce sync.Once
	cancel   context.CancelCauseFunc
	clock    *callClock

	mu      sync.Mutex
	cur     *mcp.Request // the downstream request waiting on it; nil while parked
	pending *relayAsk    // the question the client has yet to answer
	round   int
	timer   *time.Timer
	ended   bool
}

// relayEvent is what the upstream call does next: ask, or end.
type relayEvent struct {
	ask *relayAsk
	res any
	err error
}

type relayAsk struct {
	in    *mcp.InputRequest
	reply chan any // the decoded answer; buffered, as the asker may have gone
}

func callerOf(ctx context.Context) string {
	tenant, _ := TenantFrom(ctx)
	return mcp.PrincipalFrom(ctx) + "\x00" + tenant
}

func argsDigest(args []byte) [32]byte { return sha256.Sum256(args) }

// relayPerRequest serves a request of a 2026-07-28 client that its upstream
// may answer by asking for input: a first request starts the upstream
// call (run), a retry with a relay state resumes one.
func relayPerRequest[T any](ctx context.Context, g *Gateway, rc routedCall, run func(context.Context, *mcp.ClientSession) (*T, error)) (*T, error) {
	var c *relayCall
	if id, round, ok := parseRelayState(rc.req.State()); ok {
		var err error
		if c, err = g.relays.resume(ctx, rc, id, round); err != nil {
			return nil, err
		}
	} else {
		c = g.relays.start(ctx, rc, func(ctx context.Context, cs *mcp.ClientSession) (any, error) {
			return run(ctx, cs)
		})
	}
	v, err := c.await(ctx, rc.req)
	if err != nil {
		return nil, err
	}
	res, ok := v.(*T)
	if !ok || res == nil {
		return nil, jsonrpc.Errorf(CodeUpstreamFailed, "mcpgate: upstream %q returned no result", rc.rt.server)
	}
	return res, nil
}

// start runs the upstream call under a context of its own, which the
// downstream request's end does not cancel: the call may outlive it.
func (rs *relays) start(ctx context.Context, rc routedCall, run func(context.Context, *mcp.ClientSession) (any, error)) *relayCall {
	rt, r := rc.rt, rc.req
	var id [18]byte
	rand.Read(id[:])
	c := &relayCall{
		rs: rs, id: base64.RawURLEncoding.EncodeToString(id[:]), caller: callerOf(ctx),
		method: r.Method, target: rt.name, args: argsDigest(rc.args), server: rt.server, first: r,
		events: make(chan relayEvent), gone: make(chan struct{}), clock: &callClock{}, cur: r,
	}
	upCtx, cancel := context.WithCancelCause(context.WithValue(context.WithoutCancel(ctx), clockKey{}, c.clock))
	c.cancel = cancel
	rs.mu.Lock()
	rs.byID[c.id], rs.byReq[c.first] = c, c
	rs.mu.Unlock()
	go func() {
		defer cancel(nil)
		var res any
		err := rt.do(upCtx, c.first, func(ctx context.Context, cs *mcp.ClientSession) error {
			ctx = mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
				if r := c.current(); r != nil {
					r.NotifyProgress(p.Progress, p.Total, p.Message)
				}
			})
			var err error
			res, err = run(ctx, cs)
			return err
		})
		// Kept until the result is taken, so that a client that resumes
		// a call whose upstream ended meanwhile learns how it ended.
		select {
		case c.events <- relayEvent{res: res, err: err}:
		case <-c.gone:
		}
		rs.mu.Lock()
		delete(rs.byID, c.id)
		delete(rs.byReq, c.first)
		rs.mu.Unlock()
	}()
	return c
}

// await waits for the upstream call's next event on behalf of r.
func (c *relayCall) await(ctx context.Context, r *mcp.Request) (any, error) {
	select {
	case ev := <-c.events:
		if ev.ask != nil {
			return nil, c.park(r, ev.ask)
		}
		c.mu.Lock()
		c.ended, c.cur = true, nil
		c.mu.Unlock()
		return ev.res, ev.err
	case <-ctx.Done():
		// The client gave up on the call, which goes upstream too, as
		// a session-era client's cancellation does.
		c.end(context.Cause(ctx))
		return nil, ctx.Err()
	}
}

// park answers r with the upstream's question and keeps the call until
// the client answers or the window passes.
func (c *relayCall) park(r *mcp.Request, a *relayAsk) error {
	rs := c.rs
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return errCallGone(a.in.Method)
	}
	rs.mu.Lock()
	full := rs.waiting[c.caller] >= maxParkedPerCaller
	if !full {
		rs.waiting[c.caller]++
	}
	rs.mu.Unlock()
	if full {
		c.mu.Unlock()
		c.end(errParkedTooMany)
		return jsonrpc.Errorf(CodeRateLimited, "Rate limit exceeded: %d of your calls already wait for your input, the most allowed; answer them, or let them expire (%s), then call again", maxParkedPerCaller, rs.window).
			WithData(map[string]any{"retryAfterMs": rs.window.Milliseconds()})
	}
	defer c.mu.Unlock()
	c.round++
	c.pending, c.cur = a, nil
	c.clock.pause()
	round := c.round
	c.timer = time.AfterFunc(rs.window, func() { c.expire(round) })
	return r.RequireInput(map[string]*mcp.InputRequest{relayKey(round): a.in}, relayState(c.id, round))
}

// resume hands the answer rc's request carries to the parked call id,
// in its round.
func (rs *relays) resume(ctx context.Context, rc routedCall, id string, round int) (*relayCall, error) {
	r := rc.req
	rs.mu.Lock()
	c := rs.byID[id]
	rs.mu.Unlock()
	if c == nil {
		return nil, errWindowPassed(rs.window)
	}
	if c.caller != callerOf(ctx) || c.method != r.Method || c.target != rc.rt.name || c.args != argsDigest(rc.args) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState belongs to another request; send it only with the request it came from, or send this one again without it")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ended:
		return nil, errWindowPassed(rs.window)
	case c.cur != nil:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: this call is already being resumed by another request; wait for that request's answer")
	case round != c.round:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: requestState is from an earlier round of this call; answer the latest input_required result and send its requestState")
	}
	key := relayKey(round)
	if _, ok := r.InputResponse(key); !ok {
		// Asked again; the window runs on.
		return nil, r.RequireInput(map[string]*mcp.InputRequest{key: c.pending.in}, relayState(id, round))
	}
	answer, ok := decodeAnswer(r, key, c.pending.in.Method)
	if !ok {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses[%q] is not a valid %s result", key, c.pending.in.Method)
	}
	c.timer.Stop()
	c.pending.reply <- answer
	c.pending, c.cur = nil, r
	c.clock.resume()
	rs.mu.Lock()
	rs.unpark(c.caller)
	rs.mu.Unlock()
	return c, nil
}

// unpark counts a call of caller out of the parked ones; rs.mu is held.
func (rs *relays) unpark(caller string) {
	if rs.waiting[caller]--; rs.waiting[caller] <= 0 {
		delete(rs.waiting, caller)
	}
}

func errWindowPassed(window time.Duration) error {
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: this call no longer waits for input: the input window of this call has expired (it was %s) and the call was cancelled, or the call has ended; send the request again, without requestState", window)
}

// expire gives up a call still parked in round when its window passes.
func (c *relayCall) expire(round int) {
	c.mu.Lock()
	if c.ended || c.cur != nil || c.round != round {
		c.mu.Unlock()
		return
	}
	question := c.pending.in.Method
	c.mu.Unlock()
	c.rs.logger.Info("gateway: a call waiting for its client's input was not resumed in time; cancelling it upstream",
		"method", c.method, "target", c.target, "upstream", c.server, "window", c.rs.window, "question", question)
	c.end(errInputWindow)
}

// end gives the call up and cancels it upstream.
func (c *relayCall) end(cause error) {
	c.mu.Lock()
	wasParked := !c.ended && c.cur == nil
	c.ended, c.pending = true, nil
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	if wasParked {
		c.rs.mu.Lock()
		c.rs.unpark(c.caller)
		c.rs.mu.Unlock()
	}
	c.cancel(cause)
	c.goneOnce.Do(func() { close(c.gone) })
}

// closeAll gives up every call, when the gateway stops.
func (rs *relays) closeAll() {
	rs.mu.Lock()
	all := make([]*relayCall, 0, len(rs.byID))
	for _, c := range rs.byID {
		all = append(all, c)
	}
	rs.mu.Unlock()
	for _, c := range all {
		c.end(errors.New("the gateway is stopping"))
	}
}

// current is the downstream request the call reports to now, if any.
func (c *relayCall) current() *mcp.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// byRequest finds the call whose upstream call is tracked under r.
func (rs *relays) byRequest(r *mcp.Request) *relayCall {
	if rs == nil {
		return nil
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.byReq[r]
}

// parked reports whether the upstream call tracked under r is parked.
func (rs *relays) parked(r *mcp.Request) bool {
	c := rs.byRequest(r)
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.ended && c.cur == nil
}

// ask puts an upstream's question to the client of the call and waits
// for the answer, which arrives with the client's next call.
func (c *relayCall) ask(ctx context.Context, in *mcp.InputRequest) (any, error) {
	a := &relayAsk{in: in, reply: make(chan any, 1)}
	select {
	case c.events <- relayEvent{ask: a}:
	case <-c.gone:
		return nil, withdrawn(ctx, in.Method)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case v := <-a.reply:
		return v, nil
	case <-c.gone:
		return nil, withdrawn(ctx, in.Method)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// withdrawGrace is how long the question of a cancelled call waits for
// the server to withdraw it.
const withdrawGrace = 5 * time.Second

// withdrawn waits for the server to withdraw the question of a call just
// cancelled there: an answer sent at once would race the cancellation
// to the server, whose handler would then carry on with the error.
func withdrawn(ctx context.Context, method string) error {
	t := time.NewTimer(withdrawGrace)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errCallGone(method)
	}
}

func errCallGone(method string) error {
	return jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: the client did not answer %s in time; the call is cancelled", method)
}

// askPerRequest is the relay of one question to a 2026-07-28 client.
func askPerRequest[T any](ctx context.Context, r *mcp.Request, c *relayCall, in *mcp.InputRequest) (*T, error) {
	if err := r.CheckInput(in); err != nil {
		return nil, err
	}
	v, err := c.ask(ctx, in)
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}

func decodeAnswer(r *mcp.Request, key, method string) (any, bool) {
	switch method {
	case "elicitation/create":
		return mcp.InputAs[mcp.ElicitResult](r, key)
	case "sampling/createMessage":
		return mcp.InputAs[mcp.CreateMessageResult](r, key)
	case "roots/list":
		return mcp.InputAs[mcp.ListRootsResult](r, key)
	}
	return nil, false
}

func relayKey(round int) string { return "mcpgate/relay/" + strconv.Itoa(round) }

func relayState(id string, round int) []byte {
	return []byte(relayStatePrefix + id + ":" + strconv.Itoa(round))
}

func parseRelayState(b []byte) (id string, round int, ok bool) {
	rest, ok := strings.CutPrefix(string(b), relayStatePrefix)
	if !ok {
		return "", 0, false
	}
	id, n, ok := strings.Cut(rest, ":")
	round, err := strconv.Atoi(n)
	return id, round, ok && err == nil
}
