package gateway

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Instances. A stateful server (a browser, a shell, a REPL, a memory)
// shared by several clients lets one client's state become another's, so
// a server's `instances` says how many of its processes (for a URL, its
// upstream sessions) serve its callers:
//
//   - shared: the server's one upstream serves everyone (the default).
//   - tenant: each tenant has an instance of its own (tenantConfigs),
//     with its credentials where it has some; a caller of no tenant (the
//     local user over stdio) has the server's.
//   - session: each downstream session has one, started by its first
//     request that reaches the server (policy binds the request's routes
//     to it) and stopped when the session ends and its requests are done,
//     when it has been unused for the server's idleTimeout, or when a
//     reload replaces the server. The server's own upstream only lists
//     (as a lazy server does, it is stopped once listed) and publishes
//     the tools, prompts and resources that calls then reach the
//     caller's instance with. The instances are capped per server and
//     per caller; past a cap a request gets CodeInstanceLimit.
//
// Each instance of a command server whose args, env or cwd name
// ${MCPGATE_INSTANCE_DIR} or ${MCPGATE_INSTANCE_ID} has them expanded
// when its process starts: a private directory, made at its first start
// and removed when the instance ends, and a name of its own.

// instanceInfo is what an upstream knows of the instance it is.
type instanceInfo struct {
	// owner is the client session a session instance serves (nil for the
	// others): it publishes nothing, and what it logs outside a call goes
	// to that session alone.
	owner *mcp.ServerSession
	// dir and id expand the per-instance variables, made when first
	// needed; only the upstream's run goroutine uses them.
	dir, id string
}

// instanceConfig is the server's configuration for this instance's
// process: the per-instance variables expanded, the directory made.
func (u *upstream) instanceConfig() (*config.Server, error) {
	c := u.cfg
	if c.Command == "" || !c.UsesInstance() {
		return c, nil
	}
	if u.inst.id == "" {
		u.inst.id = newInstanceID()
	}
	if u.inst.dir == "" && c.UsesInstanceDir() {
		dir, err := os.MkdirTemp("", "mcpgate-"+c.Name+"-")
		if err != nil {
			return nil, fmt.Errorf("making the instance's directory (${%s}): %w", config.InstanceDirVar, err)
		}
		u.inst.dir = dir
	}
	return c.ForInstance(u.inst.dir, u.inst.id), nil
}

// dropInstanceDir removes the instance's directory once its upstream has
// ended (run has returned, and its process with it).
func (u *upstream) dropInstanceDir() {
	if u.inst.dir == "" {
		return
	}
	if err := os.RemoveAll(u.inst.dir); err != nil {
		u.logger.Warn("gateway: could not remove the instance's directory", "dir", u.inst.dir, "error", err)
	}
	u.inst.dir = ""
}

func newInstanceID() string { return rand.Text()[:16] }

// sessionInstances are the running session instances.
type sessionInstances struct {
	mu        sync.Mutex
	bySession map[*mcp.ServerSession]map[string]*instance
	byServer  map[string][]*instance
}

// instance is one session's instance of a server.
type instance struct {
	u         *upstream
	base      *upstream // the server's own upstream when it started: a reload that replaces that ends this
	server    string
	principal string
	ss        *mcp.ServerSession
	// refs counts the requests bound to it and not yet done, and used is
	// when it was last bound or released (sessionInstances.mu).
	refs    int
	used    time.Time
	removed bool // out of the tables: stopped once no request holds it
}

// sessionServer returns the server's upstream when it runs an instance
// per session, or nil.
func (g *Gateway) sessionServer(name string) *upstream {
	g.mu.Lock()
	defer g.mu.Unlock()
	u := g.upstreams[name]
	if u == nil || u.local != nil || u.cfg.Instances != config.InstancesSession {
		return nil
	}
	return u
}

// bindInstances points the routes to servers with an instance per session
// at the request's session's instance of each: started now if start (the
// request reaches the server) and the session has none yet. The function
// returned lets the instances go when the request is done.
func (g *Gateway) bindInstances(ctx context.Context, req *mcp.Request, routes []*route, start bool) (func(), error) {
	var held []*instance
	release := func() { g.instances.release(held) }
	for _, r := range routes {
		base := g.sessionServer(r.server)
		if base == nil {
			continue
		}
		in, err := g.instanceFor(ctx, req, base, start)
		if err != nil {
			release()
			return func() {}, err
		}
		if in != nil {
			r.up = in.u
			held = append(held, in)
		}
	}
	return release, nil
}

// instanceFor finds (or, with start, starts) the request's session's
// instance of base's server and holds it for the request.
func (g *Gateway) instanceFor(ctx context.Context, req *mcp.Request, base *upstream, start bool) (*instance, error) {
	name := base.cfg.Name
	if req.Session == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: server %q runs one instance per client session (instances: session), and this request has no session", name)
	}
	g.mu.Lock()
	gctx := g.ctx
	g.mu.Unlock()
	if gctx == nil || gctx.Err() != nil {
		return nil, errUnavailable(name, errors.New("the gateway is not running"), StateDown, time.Second)
	}
	is := &g.instances
	is.mu.Lock()
	in := is.bySession[req.Session][name]
	if in != nil && in.base != base {
		is.removeLocked(in) // its server was reloaded: its watcher stops it
		in = nil
	}
	fresh := false
	if in == nil && start {
		principal := mcp.PrincipalFrom(ctx)
		if err := is.capLocked(base.cfg, principal); err != nil {
			is.mu.Unlock()
			base.logger.InfoContext(ctx, "gateway: a session was refused an instance of its own", "principal", displayPrincipal(ctx), "error", err.Message)
			return nil, err
		}
		in = &instance{base: base, server: name, principal: principal, ss: req.Session}
		in.u = g.newSessionUpstream(ctx, base, req.Session)
		is.addLocked(in)
		fresh = true
	}
	if in != nil {
		in.refs++
		in.used = time.Now()
	}
	is.mu.Unlock()
	if fresh {
		in.u.logger.InfoContext(ctx, "gateway: starting an instance for a client session", "principal", displayPrincipal(ctx))
		g.startUpstream(gctx, in.u)
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.watchInstance(gctx, in)
		}()
	}
	return in, nil
}

// newSessionUpstream is a session's instance of base's server: the
// server's settings, with the caller's tenant's credentials over them
// where it has some. It is started for a request waiting on it (no round
// that lists and stops it) and stopped by its watcher, never idled.
func (g *Gateway) newSessionUpstream(ctx context.Context, base *upstream, ss *mcp.ServerSession) *upstream {
	sc := base.cfg
	if tn, _ := TenantFrom(ctx); tn != "" {
		g.mu.Lock()
		if t := g.cfg.Tenants[tn]; t != nil && t.Credentials[sc.Name] != nil {
			sc = withCredentials(sc, sc.Name, t.Credentials[sc.Name])
		}
		g.mu.Unlock()
	}
	c := *sc
	c.Start, c.IdleTimeout = "eager", 0
	u := newUpstream(g, &c)
	u.inst = instanceInfo{owner: ss, id: newInstanceID()}
	u.logger = upstreamLogger(g.logger, c.Name, "instance", u.inst.id)
	return u
}

// capLocked refuses a new instance of the server past its caps: the
// server's instances, and the caller's (is.mu held).
func (is *sessionInstances) capLocked(sc *config.Server, principal string) *jsonrpc.Error {
	live := is.byServer[sc.Name]
	if limit := cmp.Or(sc.MaxInstances, config.DefaultMaxInstances); len(live) >= limit {
		return errInstanceLimit(sc.Name, "maxInstances", limit,
			fmt.Sprintf("all %d it may run (maxInstances) serve other sessions; retry once one of them ends or idles", limit))
	}
	mine := 0
	for _, in := range live {
		if in.principal == principal {
			mine++
		}
	}
	if limit := cmp.Or(sc.MaxInstancesPerPrincipal, config.DefaultMaxInstancesPerPrincipal); mine >= limit {
		return errInstanceLimit(sc.Name, "maxInstancesPerPrincipal", limit,
			fmt.Sprintf("your other sessions have %d already, as many as one caller may (maxInstancesPerPrincipal); end one of those sessions, or go on in it", limit))
	}
	return nil
}

// errInstanceLimit is the error of a request refused an instance.
func errInstanceLimit(server, capName string, limit int, why string) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeInstanceLimit, "Server %q runs a process of its own for each client session (instances: session), and this session cannot have one: %s", server, why).
		WithData(map[string]any{"server": server, "cap": capName, "limit": limit})
}

func (is *sessionInstances) addLocked(in *instance) {
	if is.bySession == nil {
		is.bySession = map[*mcp.ServerSession]map[string]*instance{}
		is.byServer = map[string][]*instance{}
	}
	if is.bySession[in.ss] == nil {
		is.bySession[in.ss] = map[string]*instance{}
	}
	is.bySession[in.ss][in.server] = in
	is.byServer[in.server] = append(is.byServer[in.server], in)
}

func (is *sessionInstances) removeLocked(in *instance) {
	if in.removed {
		return
	}
	in.removed = true
	if m := is.bySession[in.ss]; m[in.server] == in {
		delete(m, in.server)
		if len(m) == 0 {
			delete(is.bySession, in.ss)
		}
	}
	live := is.byServer[in.server]
	for i, x := range live {
		if x == in {
			is.byServer[in.server] = append(live[:i:i], live[i+1:]...)
			break
		}
	}
	if len(is.byServer[in.server]) == 0 {
		delete(is.byServer, in.server)
	}
}

// release lets go of the instances a request held.
func (is *sessionInstances) release(held []*instance) {
	if len(held) == 0 {
		return
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	now := time.Now()
	for _, in := range held {
		in.refs--
		in.used = now
	}
}

// running counts the server's session instances, for tests and status.
func (is *sessionInstances) running(server string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return len(is.byServer[server])
}

// watchInstance stops a session instance once its session has ended, it
// has idled for the server's idleTimeout (DefaultInstanceIdleTimeout if
// unset), or a reload replaced its server; never while a request is on
// it. It returns at once when the gateway stops (its upstream ends then
// too).
func (g *Gateway) watchInstance(ctx context.Context, in *instance) {
	idle := cmp.Or(in.base.cfg.IdleTimeout.D(), config.DefaultInstanceIdleTimeout.D())
	// Checked every second, or more often for a shorter idleTimeout.
	tick := time.NewTicker(min(max(idle, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	ended := in.ss.Done()
	over := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-ended:
			ended, over = nil, true
		case <-tick.C:
		}
		g.mu.Lock()
		stale := g.upstreams[in.server] != in.base
		g.mu.Unlock()
		if why := g.instances.retire(in, over, stale, idle); why != "" {
			in.u.logger.Info("gateway: stopping a client session's instance", "why", why)
			in.u.cancel()
			<-in.u.done
			return
		}
	}
}

// retire decides whether a session instance stops now, and if so takes
// it out of the tables and says why.
func (is *sessionInstances) retire(in *instance, sessionOver, stale bool, idle time.Duration) string {
	u := in.u
	u.mu.Lock()
	busy, lastUsed := len(u.active) > 0 || len(u.slots) > 0, u.lastUsed
	u.mu.Unlock()
	is.mu.Lock()
	defer is.mu.Unlock()
	if busy || in.refs > 0 {
		return ""
	}
	why := ""
	switch {
	case sessionOver:
		why = "its session ended"
	case stale || in.removed:
		why = "its server's settings changed"
	case time.Since(later(lastUsed, in.used)) >= idle:
		why = fmt.Sprintf("unused for %v (idleTimeout)", idle)
	default:
		return ""
	}
	is.removeLocked(in)
	return why
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
