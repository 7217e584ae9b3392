package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// What an upstream asks of the client (sampling, elicitation, roots) is
// asked of the downstream client whose call it is serving, and the answer
// goes back upstream; the ids of each hop are the hop's own. A session-era
// client is sent a real request on that call's stream. A 2026-07-28
// client cannot be asked in the middle of a request: its tool call,
// prompts/get or resources/read is parked and answered with
// input_required, and its next request brings the answer
// (relay_perrequest.go). Its other requests (completion) cannot take input,
// so what their upstream asks is refused with an error saying why.
//
// The user's client is not the upstream's to use freely. Each server has
// the client features the operator granted it (clientFeatures: sampling
// and roots off unless granted, elicitation on), per tenant too; only
// granted features are declared to the server, and a request for another
// is refused to the server and audited. A relayed elicitation names the
// server in what the user sees, and a URL-mode one may link only to
// https (or, from a server on this machine, to loopback). Relays are
// bounded: maxRelaysPerCall for one call, each within relayTimeout and
// ending at most withdrawGrace after the call it belongs to, and so per
// upstream by its
// concurrency bound (the library refuses the rest at once, unhandled);
// sampling is rate-limited per server and per caller (limits.sampling).

const (
	maxRelaysPerCall = 4
	relayTimeout     = 2 * time.Minute // a person may be answering
)

// The client features a server may be granted.
const (
	featureSampling    = "sampling"
	featureElicitation = "elicitation"
	featureRoots       = "roots"
)

// features are the client features in effect for server when it serves
// the caller of ctx: the tenant's setting for the server, over the
// server's own.
func (g *Gateway) features(ctx context.Context, sc *config.Server) (sampling, elicitation, roots bool) {
	f := sc.ClientFeatures.Over(g.cfgSnapshot().Defaults.ClientFeatures)
	if tn, ok := TenantFrom(ctx); ok && tn != "" {
		g.mu.Lock()
		if t := g.cfg.Tenants[tn]; t != nil && t.ClientFeatures[sc.Name] != nil {
			f = t.ClientFeatures[sc.Name].Over(f)
		}
		g.mu.Unlock()
	}
	return f.Granted()
}

// anyGrant reports whether server may use a feature for some caller: the
// feature is declared to it only then.
func (g *Gateway) anyGrant(sc *config.Server, feature string) bool {
	cfg := g.cfgSnapshot()
	grants := []config.ClientFeatures{sc.ClientFeatures.Over(cfg.Defaults.ClientFeatures)}
	for _, t := range cfg.Tenants {
		if f := t.ClientFeatures[sc.Name]; f != nil {
			grants = append(grants, f.Over(grants[0]))
		}
	}
	for _, f := range grants {
		s, e, r := f.Granted()
		if feature == featureSampling && s || feature == featureElicitation && e || feature == featureRoots && r {
			return true
		}
	}
	return false
}

func (g *Gateway) cfgSnapshot() *config.Config {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cfg
}

// declare is the upstream client's DeclareCapabilities: only what the
// operator granted the server is offered to it.
func (u *upstream) declare(c mcp.ClientCapabilities) mcp.ClientCapabilities {
	if !u.g.anyGrant(u.cfg, featureSampling) {
		c.Sampling = nil
	}
	if !u.g.anyGrant(u.cfg, featureElicitation) {
		c.Elicitation = nil
	}
	if !u.g.anyGrant(u.cfg, featureRoots) {
		c.Roots = nil
	}
	return c
}

// relay is one upstream request on its way to a downstream client.
type relay struct {
	u       *upstream
	method  string
	feature string
	call    *activeCall // the downstream call it is asked for
	parked  *relayCall  // the parked call of a 2026-07-28 client, if so
	ctx     context.Context
	release func()
}

// startRelay finds the downstream call an upstream request belongs to
// and checks it against the server's grants and the bounds. The caller
// must call rl.release when done.
func (u *upstream) startRelay(ctx context.Context, method, feature string) (*relay, error) {
	ac := u.downstream(ctx)
	if ac == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: %s outside any call has no client to go to", method)
	}
	rl := &relay{u: u, method: method, feature: feature, call: ac}
	s, e, r := u.g.features(ac.ctx, u.cfg)
	if granted := feature == featureSampling && s || feature == featureElicitation && e || feature == featureRoots && r; !granted {
		err := jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "mcpgate: server %q may not use the client's %s; the gateway's operator can grant it with clientFeatures.%s in the configuration", u.cfg.Name, feature, feature)
		rl.audit("refused", err, "the server has no grant for "+feature)
		return nil, err
	}
	if ac.req.ProtocolVersion() == mcp.Version20260728 {
		if rl.parked = u.g.relays.byRequest(ac.req); rl.parked == nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: the client of this request speaks 2026-07-28, and only its tools/call, prompts/get and resources/read can wait through the gateway for its answer to %s", method)
		}
	}
	u.mu.Lock()
	full := ac.relays >= maxRelaysPerCall
	if !full {
		ac.relays++
	}
	u.mu.Unlock()
	if full {
		err := jsonrpc.Errorf(jsonrpc.CodeInternalError, "mcpgate: %d of this call's requests to the client are already waiting, the most allowed; send %s again when one is answered", maxRelaysPerCall, method)
		rl.audit("refused", err, "too many requests to the client for one call")
		return nil, err
	}
	// Ends with the upstream's request, after relayTimeout, or a grace
	// after the call it belongs to ends, whichever comes first. The
	// grace lets the upstream withdraw its question first (its request
	// is cancelled with the call): an answer at once would race that
	// cancellation to the server, whose handler would carry on with the
	// error instead of stopping (see withdrawn).
	rctx, cancel := context.WithTimeout(ctx, relayTimeout)
	var grace *time.Timer
	var graceMu sync.Mutex
	stopAfter := context.AfterFunc(ac.ctx, func() {
		graceMu.Lock()
		grace = time.AfterFunc(withdrawGrace, cancel)
		graceMu.Unlock()
	})
	stop := func() {
		stopAfter()
		graceMu.Lock()
		if grace != nil {
			grace.Stop()
		}
		graceMu.Unlock()
	}
	rl.ctx = rctx
	rl.release = func() {
		stop()
		cancel()
		u.mu.Lock()
		ac.relays--
		u.mu.Unlock()
	}
	return rl, nil
}

// audit records a relay in the audit log, under the caller of its call.
func (rl *relay) audit(outcome string, err error, detail string) {
	g := rl.u.g
	if g.audit == nil {
		return
	}
	rec := AuditRecord{Time: time.Now(), Method: rl.method, Upstream: rl.u.cfg.Name, Outcome: outcome, Detail: detail}
	if rl.call != nil {
		rec.Principal = displayPrincipal(rl.call.ctx)
		rec.Tenant, _ = TenantFrom(rl.call.ctx)
		if r := routeOfCall(rl.call); r != "" {
			rec.Tool = r
		}
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		rec.Code = rpcErr.Code
	}
	g.audit.Record(rec)
}

// routeOfCall names what the call a relay belongs to asked for.
func routeOfCall(ac *activeCall) string {
	rs, _ := ac.ctx.Value(routesKey{}).([]*route)
	if len(rs) > 0 {
		return rs[0].name
	}
	return ""
}

func (u *upstream) relaySampling(ctx context.Context, _ *mcp.ClientSession, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	rl, err := u.startRelay(ctx, "sampling/createMessage", featureSampling)
	if err != nil {
		return nil, err
	}
	defer rl.release()
	tenant, _ := TenantFrom(rl.call.ctx)
	who := tenant + "\x00" + mcp.PrincipalFrom(rl.call.ctx)
	for _, key := range []string{"server\x00" + u.cfg.Name, "caller\x00" + who} {
		done, err := u.g.sampling.admit(tenant, key, "")
		if err != nil {
			rl.audit("rate_limited", err, "")
			return nil, err
		}
		defer done()
	}
	var res *mcp.CreateMessageResult
	if rl.parked != nil {
		res, err = askPerRequest[mcp.CreateMessageResult](rl.ctx, rl.call.req, rl.parked, mcp.SamplingInput(p))
	} else {
		res, err = rl.call.req.CreateMessage(rl.ctx, p)
	}
	if err != nil {
		rl.audit("error", err, truncate(err.Error(), 200))
		return nil, err
	}
	detail := "model=" + res.Model
	if res.StopReason != "" {
		detail += " stopReason=" + res.StopReason
	}
	if usage, ok := res.Meta["usage"]; ok {
		detail += fmt.Sprintf(" usage=%v", usage)
	}
	rl.audit("ok", nil, detail)
	return res, nil
}

func (u *upstream) relayElicitation(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	rl, err := u.startRelay(ctx, "elicitation/create", featureElicitation)
	if err != nil {
		return nil, err
	}
	defer rl.release()
	if p.Mode == "url" {
		if err := u.checkElicitationURL(p.URL); err != nil {
			rl.audit("refused", err, "URL-mode link refused")
			return nil, err
		}
	}
	// The user sees which server asks, whatever the server says.
	q := *p
	q.Message = "[" + u.cfg.Name + "] " + p.Message
	if rl.parked != nil {
		return askPerRequest[mcp.ElicitResult](rl.ctx, rl.call.req, rl.parked, mcp.ElicitInput(&q))
	}
	return rl.call.req.Elicit(rl.ctx, &q)
}

// checkElicitationURL lets a URL-mode elicitation link only to https, or
// to loopback when the server itself runs on this machine.
func (u *upstream) checkElicitationURL(raw string) error {
	l, err := url.Parse(raw)
	if err == nil && l.Host != "" && l.User == nil {
		switch {
		case l.Scheme == "https":
			return nil
		case l.Scheme == "http" && u.onThisMachine() && isLoopbackHost(l.Hostname()):
			return nil
		}
	}
	shown := "it"
	if err == nil && l.Scheme != "" {
		shown = l.Scheme + "://" + l.Host
	}
	return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "mcpgate: server %q asked the user to open a link to %s; URL-mode elicitations through the gateway must use https (or loopback, from a server on this machine)", u.cfg.Name, shown)
}

// onThisMachine reports whether the server runs on this machine: a
// command, a built-in, or a URL on loopback.
func (u *upstream) onThisMachine() bool {
	if u.cfg.Command != "" || u.local != nil {
		return true
	}
	l, err := url.Parse(u.cfg.URL)
	return err == nil && isLoopbackHost(l.Hostname())
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func (u *upstream) relayRoots(ctx context.Context, _ *mcp.ClientSession) (*mcp.ListRootsResult, error) {
	if u.downstream(ctx) == nil {
		// Asked outside any call (servers ask right after initialize):
		// no client's roots apply, so none.
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	rl, err := u.startRelay(ctx, "roots/list", featureRoots)
	if err != nil {
		return nil, err
	}
	defer rl.release()
	var res *mcp.ListRootsResult
	if rl.parked != nil {
		res, err = askPerRequest[mcp.ListRootsResult](rl.ctx, rl.call.req, rl.parked, mcp.RootsInput())
	} else {
		res, err = rl.call.req.ListRoots(rl.ctx)
	}
	if errors.Is(err, mcp.ErrCapabilityNotSupported) {
		// A client without roots has none to share.
		return &mcp.ListRootsResult{Roots: []*mcp.Root{}}, nil
	}
	if err == nil {
		rl.audit("ok", nil, fmt.Sprintf("%d roots", len(res.Roots)))
	}
	return res, err
}

// relayLog passes an upstream's log message to the client of the call in
// flight, or, with none, to the sessions that can see the upstream and
// asked for messages of that level.
func (u *upstream) relayLog(ctx context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) {
	logger := u.cfg.Name
	if p.Logger != "" {
		logger += "/" + p.Logger
	}
	if ac := u.downstream(ctx); ac != nil {
		r := ac.req
		if c := u.g.relays.byRequest(r); c != nil {
			// A 2026-07-28 client's call: its request of the moment,
			// none while it is parked.
			if r = c.current(); r == nil {
				return
			}
		}
		r.Log(p.Level, logger, p.Data)
		return
	}
	for _, ss := range u.g.server.Sessions() {
		if level := ss.LoggingLevel(); level == "" || !atLeast(p.Level, level) {
			continue
		}
		if !u.g.sessionSees(ss, u.cfg.Name) || u.inst.owner != nil && ss != u.inst.owner {
			continue
		}
		ss.Log(ctx, p.Level, logger, p.Data)
	}
}

// atLeast reports whether level is as severe as min.
func atLeast(level, min mcp.LoggingLevel) bool {
	for _, l := range []mcp.LoggingLevel{mcp.LevelDebug, mcp.LevelInfo, mcp.LevelNotice, mcp.LevelWarning, mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency} {
		if l == min {
			return true // min comes first, or level is min
		}
		if l == level {
			return false
		}
	}
	return false
}
