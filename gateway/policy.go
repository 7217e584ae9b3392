package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The policy point. Every request a client sends passes through policy,
// the outermost of the gateway's middleware, before any handler runs:
//
//   - The method must have a rule in methodRules. A method without one
//     is answered "Method not found": a method added to the server later
//     (by the library, or with HandleMethod) reaches nothing until a rule
//     says what it names and whether it reaches an upstream.
//   - Everything the request names (a tool, prompt, resource URI or
//     template) is resolved through the caller's view (its tenant's
//     servers and tool lists) into a route. Handlers reach an upstream
//     only through a route (route.do), so what the caller cannot see has
//     none, and the handler answers exactly as for a name that does not
//     exist.
//   - A request that reaches upstreams counts against the caller's limits
//     and is written to the audit log; every request is logged and
//     measured.

// methodRule is the policy of one method.
type methodRule struct {
	// targets reads what a request names; nil when it names nothing (or
	// only what the gateway filters itself, as tools/getSchema does).
	targets func(req *mcp.Request) []target
	// forwards: the request may reach upstreams, so limits and the audit
	// log apply.
	forwards bool
}

// target is one thing a request names, as the caller knows it.
type target struct {
	kind mcp.ItemKind
	name string // a published tool or prompt name, or a URI
	via  string // the meta-tool a tools/call went through, if any
	args []byte // a tool call's arguments, for the log and the audit log
}

// methodRules decides every method the gateway's server answers
// (TestEveryMethodHasAPolicy holds the two lists together).
var methodRules = map[string]methodRule{
	// Served by the gateway alone; the lists are filtered by the same
	// view (ServerOptions.Filter), tasks are bound to their caller.
	"initialize":               {},
	"ping":                     {},
	"server/discover":          {},
	"tools/list":               {},
	"prompts/list":             {},
	"resources/list":           {},
	"resources/templates/list": {},
	"logging/setLevel":         {},
	"tasks/get":                {},
	"tasks/result":             {},
	"tasks/list":               {},
	"tasks/cancel":             {},
	"tasks/update":             {},
	MethodDiscover:             {},
	MethodGetSchema:            {},
	MethodGetFullSchema:        {},
	// Names a resource, and forgets it locally.
	"resources/unsubscribe": {targets: uriParam},

	// Reach upstreams.
	"tools/call":           {targets: toolCallTarget, forwards: true},
	"prompts/get":          {targets: nameParam(mcp.KindPrompt), forwards: true},
	"resources/read":       {targets: uriParam, forwards: true},
	"resources/subscribe":  {targets: uriParam, forwards: true},
	"completion/complete":  {targets: completionTarget, forwards: true},
	"subscriptions/listen": {targets: listenTargets, forwards: true},
}

func toolCallTarget(req *mcp.Request) []target {
	call, via := calledTool(req.RawParams)
	t := target{kind: mcp.KindTool, name: call.Name, args: call.Arguments}
	if via {
		t.via = MetaCallTool
	}
	return []target{t}
}

func nameParam(kind mcp.ItemKind) func(*mcp.Request) []target {
	return func(req *mcp.Request) []target {
		var p struct {
			Name string `json:"name"`
		}
		jsonv2.Unmarshal(req.RawParams, &p, jsonv2.RejectUnknownMembers(false))
		return []target{{kind: kind, name: p.Name}}
	}
}

func uriParam(req *mcp.Request) []target {
	var p struct {
		URI string `json:"uri"`
	}
	jsonv2.Unmarshal(req.RawParams, &p, jsonv2.RejectUnknownMembers(false))
	return []target{{kind: mcp.KindResource, name: p.URI}}
}

func completionTarget(req *mcp.Request) []target {
	var p struct {
		Ref *mcp.CompleteReference `json:"ref"`
	}
	jsonv2.Unmarshal(req.RawParams, &p, jsonv2.RejectUnknownMembers(false))
	switch {
	case p.Ref == nil:
		return nil
	case p.Ref.Type == "ref/prompt":
		return []target{{kind: mcp.KindPrompt, name: p.Ref.Name}}
	case p.Ref.Type == "ref/resource":
		return []target{{kind: mcp.KindResourceTemplate, name: p.Ref.URI}}
	}
	return nil
}

func listenTargets(req *mcp.Request) []target {
	var p struct {
		Notifications *mcp.SubscriptionFilter `json:"notifications"`
	}
	jsonv2.Unmarshal(req.RawParams, &p, jsonv2.RejectUnknownMembers(false))
	if p.Notifications == nil {
		return nil
	}
	out := make([]target, 0, len(p.Notifications.ResourceSubscriptions))
	for _, uri := range p.Notifications.ResourceSubscriptions {
		out = append(out, target{kind: mcp.KindResource, name: uri})
	}
	return out
}

// route is the policy point's decision for one target: the upstream
// instance that serves it for this caller and the name the upstream
// knows it by. Only policy makes routes.
type route struct {
	up     *upstream // the caller's instance: its tenant's own, where it has credentials
	server string    // the configured server's name
	kind   mcp.ItemKind
	name   string // as published
	orig   string // as the upstream knows it
	tasks  string // for a tool, the upstream's task support
	// blocked: a tool whose changed definition waits for approval under
	// pins: block (pinning.go); calls are refused.
	blocked bool
	// down: a tool withdrawn while its upstream is down or restarting.
	down bool
	// resend: a tool whose calls may be sent again (catalog.resend).
	resend bool
}

type routesKey struct{}

// routeFor returns the route policy resolved for a target of the
// request, or nil: not visible to the caller, or not there at all (the
// handler answers both alike).
func routeFor(ctx context.Context, kind mcp.ItemKind, name string) *route {
	rs, _ := ctx.Value(routesKey{}).([]*route)
	for _, r := range rs {
		if r.name == name && (r.kind == kind || r.kind == mcp.KindResourceTemplate && kind == mcp.KindResource || r.kind == mcp.KindResource && kind == mcp.KindResourceTemplate) {
			return r
		}
	}
	return nil
}

// resolve finds the route of a target through the caller's view.
func (g *Gateway) resolve(ctx context.Context, t target) *route {
	if t.name == "" || !g.visible(ctx, t.kind, t.name) {
		return nil
	}
	r := &route{kind: t.kind, name: t.name}
	var u *upstream
	g.mu.Lock()
	switch t.kind {
	case mcp.KindTool:
		if u = g.toolOwner[t.name]; u != nil && u.catalog != nil {
			r.orig, r.tasks = u.catalog.tools[t.name], u.catalog.tasks[t.name]
			r.resend = u.catalog.resend[t.name]
			r.blocked = u.catalog.pins.blocked[t.name]
		} else if u = g.downTools[t.name]; u != nil {
			// Published, and back when its server is: the caller is told
			// to wait and retry, not that the tool does not exist.
			r.down, r.orig = true, t.name
		}
	case mcp.KindPrompt:
		if u = g.promptOwner[t.name]; u != nil && u.catalog != nil {
			r.orig = u.catalog.prompts[t.name]
		}
	default:
		if server, orig, ok := splitURI(t.name); ok {
			u, r.orig = g.upstreams[server], orig
		}
	}
	g.mu.Unlock()
	if u == nil || r.orig == "" {
		return nil
	}
	r.server = u.cfg.Name
	r.up = g.forTenant(ctx, u)
	return r
}

// do runs f against the route's upstream on behalf of a downstream
// request (see upstream.do): the only way a handler reaches an upstream.
// What is not a tool is read (a prompt, a resource, a completion) or
// idempotent (a subscription), so its request may be sent again; a tool's
// may when its upstream says so.
func (r *route) do(ctx context.Context, req *mcp.Request, f func(ctx context.Context, cs *mcp.ClientSession) error) error {
	return r.up.do(ctx, req, r.kind != mcp.KindTool || r.resend, f)
}

// errNoRule answers a method the policy has no rule for.
func errNoRule(method string) error {
	return jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %q is not a method this gateway serves", truncate(method, 64))
}

// policy is the policy point (see the top of this file).
func (g *Gateway) policy(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		if req.IsNotification() {
			return next(ctx, req)
		}
		t0 := time.Now()
		g.noteSession(ctx, req)
		rule, ok := methodRules[req.Method]
		var targets []target
		var res any
		var err error
		switch {
		case !ok:
			err = errNoRule(req.Method)
		default:
			if rule.targets != nil {
				targets = rule.targets(req)
			}
			routes := make([]*route, 0, len(targets))
			for _, t := range targets {
				r := g.resolve(ctx, t)
				if r == nil && g.discovering() {
					// Named before its server was first listed (a
					// one-shot call at start): wait for the first round.
					g.awaitDiscovery(ctx)
					r = g.resolve(ctx, t)
				}
				if r != nil {
					if r.down && err == nil {
						err = r.up.unavailable()
					}
					routes = append(routes, r)
				}
			}
			ctx = context.WithValue(ctx, routesKey{}, routes)
			release := func() {}
			if rule.forwards && err == nil {
				tenant, _ := TenantFrom(ctx)
				tool := ""
				if len(targets) > 0 && targets[0].kind == mcp.KindTool {
					tool = targets[0].name
				}
				release, err = g.limiter.admit(tenant, tenant+"\x00"+mcp.PrincipalFrom(ctx), tool)
			}
			if err == nil {
				// A server with an instance per session serves this
				// session's own (instances.go), started if it reaches it.
				var unbind func()
				if unbind, err = g.bindInstances(ctx, req, routes, rule.forwards); err == nil {
					res, err = next(ctx, req)
					unbind()
				}
				release()
			}
		}
		g.record(ctx, handled{req, rule, targets, t0, res, err})
		return res, err
	}
}

// handled is a request the gateway has answered, as record reads it.
type handled struct {
	req     *mcp.Request
	rule    methodRule
	targets []target  // what it named, the first deciding its upstream
	start   time.Time // when it came in
	res     any
	err     error
}

// record writes one request's log line, metrics and (for requests that
// reach upstreams) audit record.
func (g *Gateway) record(ctx context.Context, h handled) {
	req, rule, targets, t0, res, err := h.req, h.rule, h.targets, h.start, h.res, h.err
	took := time.Since(t0)
	principal := displayPrincipal(ctx)
	tenant, _ := TenantFrom(ctx)
	var first target
	var upstream string
	if len(targets) > 0 {
		first = targets[0]
		if r := routeFor(ctx, first.kind, first.name); r != nil {
			upstream = r.server
		}
	}
	oc := outcome(res, err)
	if req.NeedsInput() {
		// A round of a call, not a failure: the client answers and
		// calls again.
		oc = []slog.Attr{slog.String("outcome", "input_required")}
	}
	ocName := oc[0].Value.String()
	var rpcErr *jsonrpc.Error
	errors.As(err, &rpcErr)
	// Tool labels take only names the gateway publishes, so a client
	// cannot grow the series without bound.
	label := ""
	if first.kind == mcp.KindTool {
		label = "unknown"
		if upstream != "" || isMetaTool(first.name) {
			label = first.name
		}
	}
	g.metrics.observe(req.Method, label, upstream, ocName, took)
	if g.metrics != nil && rpcErr != nil && rpcErr.Code == CodeRateLimited {
		g.metrics.rateLimited.WithLabelValues(label).Inc()
	}
	var args any
	logging := g.logger.Enabled(ctx, slog.LevelInfo)
	if req.Method == "tools/call" && (logging || g.audit != nil && rule.forwards) {
		args = sanitize(json.RawMessage(first.args)) // decoded once, by toolCallTarget
	}
	if g.audit != nil && rule.forwards {
		rec := AuditRecord{Time: t0, Principal: principal, Tenant: tenant, Method: req.Method, Tool: first.name, Upstream: upstream, Outcome: ocName, Duration: took}
		if args != nil {
			if b, err := json.Marshal(args); err == nil {
				rec.Arguments = string(b)
			}
		}
		if rpcErr != nil {
			rec.Code = rpcErr.Code
		}
		g.audit.Record(rec)
	}
	if req.Method == "tools/call" && upstream != "" && err == nil && ocName == "ok" {
		g.coCalls.called(g.search, callerKey(ctx, req), first.name, t0)
		g.clicked(ctx, req, first.name)
	}
	if !logging {
		return
	}
	attrs := []slog.Attr{
		slog.String("method", req.Method),
		slog.String("id", req.ID.String()),
		slog.String("principal", principal),
		slog.String("protocol", req.ProtocolVersion()),
		slog.Duration("duration", took),
	}
	if first.name != "" {
		if first.via != "" {
			attrs = append(attrs, slog.String("via", first.via))
		}
		attrs = append(attrs, slog.String(string(first.kind), first.name))
		if args != nil {
			// JSON, as the client sent it (redacted and cut), not Go's
			// map syntax.
			b, _ := json.Marshal(args)
			attrs = append(attrs, slog.String("arguments", truncate(string(b), 1000)))
		}
		if upstream != "" {
			attrs = append(attrs, slog.String("upstream", upstream))
		}
	}
	if tenant != "" {
		attrs = append(attrs, slog.String("tenant", tenant))
	}
	attrs = append(attrs, oc...)
	g.logger.LogAttrs(ctx, slog.LevelInfo, "gateway: request", attrs...)
}
