package gateway

import (
	"cmp"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
)

// Reload applies a new configuration: upstreams added are started, those
// removed are stopped and their tools withdrawn, those whose settings
// changed are restarted, and the rest are not touched, so calls to them
// go on undisturbed. Sessions stay up; clients hear list_changed. A new
// separator renames every tool, so it restarts every upstream.
func (g *Gateway) Reload(cfg *config.Config) {
	sep := cfg.Separator
	if sep == "" {
		sep = "_"
	}
	g.mu.Lock()
	ctx := g.ctx
	renameAll := sep != g.sep
	g.sep, g.cfg = sep, cfg
	var stop []*upstream
	var start []*upstream
	keep := map[string]bool{}
	for name, sc := range cfg.Servers {
		if sc.Disabled {
			continue
		}
		if sc.Name == "" {
			sc.Name = name
		}
		keep[name] = true
		old := g.upstreams[name]
		if old != nil && !renameAll && reflect.DeepEqual(old.cfg, sc) {
			continue
		}
		if old != nil {
			stop = append(stop, old)
		}
		u := newUpstream(g, sc)
		g.upstreams[name] = u
		start = append(start, u)
	}
	for name, u := range g.upstreams {
		if !keep[name] && u.local == nil { // built-ins are not in the file
			stop = append(stop, u)
			delete(g.upstreams, name)
		}
	}
	for key, sc := range tenantConfigs(cfg) {
		keep["\x00"+key] = true
		old := g.tenantUps[key]
		if old != nil && reflect.DeepEqual(old.cfg, sc) {
			continue
		}
		if old != nil {
			stop = append(stop, old)
		}
		u := newTenantUpstream(g, key, sc)
		g.tenantUps[key] = u
		start = append(start, u)
	}
	for key, u := range g.tenantUps {
		if !keep["\x00"+key] {
			stop = append(stop, u)
			delete(g.tenantUps, key)
		}
	}
	g.mu.Unlock()
	if g.fileLimits {
		g.limiter.set(LimitsFromConfig(cfg.Limits))
		g.limiter.setTenants(tenantLimits(cfg))
	}
	g.sampling.set(Limits{Calls: LimitsFromConfig(cfg.Limits).Sampling})
	// Clients hear of the reload once per kind of list, when the servers
	// it started are listed (or the start window passes), not once a
	// server as each stops and starts.
	release := g.server.HoldListChanged()
	var round sync.WaitGroup
	for _, u := range start {
		if u.tenantKey == "" {
			round.Add(1)
			u.firstRound = sync.OnceFunc(round.Done)
		}
	}
	go func() {
		defer release()
		select {
		case <-roundListed(&round):
		case <-time.After(g.startWindow):
		}
	}()
	for _, u := range stop {
		// A server kept under its names restarts; its tools are only
		// unavailable meanwhile.
		g.stopUpstream(u, renameAll || !keep[u.cfg.Name])
	}
	slices.SortFunc(start, func(a, b *upstream) int { return cmp.Compare(a.cfg.Name, b.cfg.Name) })
	for _, u := range start {
		g.logger.Info("gateway: starting upstream", "upstream", u.cfg.Name)
		if ctx != nil {
			g.startUpstream(ctx, u)
		}
	}
	// The tenants' pin policies may have changed: what the kept
	// upstreams publish is decided again.
	g.republishAll()
}

// stopUpstream ends an upstream's supervision (and its process) and
// withdraws what it published: for good when the configuration no longer
// has the server (gone), until its successor publishes otherwise.
func (g *Gateway) stopUpstream(u *upstream, gone bool) {
	if gone {
		g.logger.Info("gateway: removing upstream: the configuration no longer has it", "upstream", u.cfg.Name)
	} else {
		g.logger.Info("gateway: restarting upstream: its settings changed", "upstream", u.cfg.Name)
	}
	if u.cancel != nil {
		u.cancel()
		<-u.done
	}
	g.withdraw(u, gone)
	u.announce() // a round waiting for it waits no more
}
