package gateway

import (
	"context"
	"errors"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Resource subscriptions. A client subscribes to a published URI
// (resources/subscribe, or a 2026-07-28 subscriptions/listen naming it);
// the gateway subscribes once upstream, per upstream instance, in the
// upstream's own era, and an upstream's notifications/resources/updated
// goes out under the published URI to the sessions subscribed to it (the
// library keeps each session's subscriptions, bounded per session, and
// filters). The upstream subscription is made again after a
// reconnection, and dropped once no client session holds the URI: after
// an unsubscription, the end of a listen request or of a session, the
// pruner unsubscribes upstream from what nobody holds.

func (g *Gateway) subscribeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		switch req.Method {
		case "resources/unsubscribe":
			defer g.prunePending()
		case "resources/subscribe":
			var p mcp.ReadResourceParams
			if err := req.DecodeParams(&p); err != nil {
				return nil, err
			}
			// Held until the library has recorded the session's
			// subscription (next), so the pruner cannot drop the
			// upstream one in between.
			defer g.hold(ctx, p.URI)()
			if err := g.subscribe(ctx, req, p.URI); err != nil {
				return nil, err
			}
		case "subscriptions/listen":
			var p struct {
				Notifications *mcp.SubscriptionFilter `json:"notifications"`
			}
			defer g.prunePending()
			if req.DecodeParams(&p) == nil && p.Notifications != nil {
				// The listen request stays open, holding its URIs; what
				// cannot be subscribed upstream is logged, the rest
				// carries on.
				uris := p.Notifications.ResourceSubscriptions
				uris = uris[:min(len(uris), g.maxSubscriptions)]
				for _, uri := range uris {
					defer g.hold(ctx, uri)()
					if err := g.subscribe(ctx, req, uri); err != nil {
						g.logger.Info("gateway: a resource subscription could not be made upstream", "uri", uri, "error", err)
					}
				}
			}
		}
		return next(ctx, req)
	}
}

// hold marks a published URI as wanted by a request in flight, which the
// pruner leaves alone; the function returned lets go.
func (g *Gateway) hold(ctx context.Context, uri string) func() {
	rt := routeFor(ctx, mcp.KindResource, uri)
	if rt == nil {
		return func() {}
	}
	u, orig := rt.up, rt.orig
	u.mu.Lock()
	if u.holds == nil {
		u.holds = map[string]int{}
	}
	u.holds[orig]++
	u.mu.Unlock()
	return func() {
		u.mu.Lock()
		if u.holds[orig]--; u.holds[orig] <= 0 {
			delete(u.holds, orig)
		}
		u.mu.Unlock()
	}
}

// subscribe makes sure the upstream of a published URI notifies the
// gateway of the resource's updates.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.Request, uri string) error {
	if uri == "" {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	rt := routeFor(ctx, mcp.KindResource, uri)
	if rt == nil {
		return mcp.ResourceNotFoundError(uri)
	}
	u, orig := rt.up, rt.orig
	// Subscriptions to one upstream change one at a time (and never
	// while the pruner unsubscribes there), so an unsubscription cannot
	// overtake a subscription on the way.
	u.subMu.Lock()
	defer u.subMu.Unlock()
	u.mu.Lock()
	done := u.subs[orig]
	u.mu.Unlock()
	if done {
		return nil
	}
	err := rt.do(ctx, req, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, orig)
	})
	if errors.Is(err, mcp.ErrNotSupported) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: server %q does not offer resource subscriptions (it does not declare resources.subscribe); read %s again to see changes", rt.server, uri)
	}
	if err != nil {
		return err
	}
	u.mu.Lock()
	if u.subs == nil {
		u.subs = map[string]bool{}
	}
	u.subs[orig] = true
	u.mu.Unlock()
	return nil
}

// resubscribe makes the upstream's subscriptions again on a new session.
func (u *upstream) resubscribe(ctx context.Context, cs *mcp.ClientSession) {
	u.mu.Lock()
	uris := make([]string, 0, len(u.subs))
	for uri := range u.subs {
		uris = append(uris, uri)
	}
	u.mu.Unlock()
	for _, uri := range uris {
		if err := cs.Subscribe(ctx, uri); err != nil {
			u.logger.Warn("gateway: a resource subscription could not be made again after reconnecting", "uri", uri, "error", err)
		}
	}
}

// resourceUpdated publishes an upstream's update under the published URI.
func (u *upstream) resourceUpdated(_ context.Context, _ *mcp.ClientSession, uri string) {
	if owner := u.inst.owner; owner != nil {
		// A session's own instance: its resources are that session's,
		// and so is the news that one changed.
		owner.ResourceUpdated(publishURI(u.cfg.Name, uri))
		return
	}
	u.g.server.ResourceUpdated(publishURI(u.cfg.Name, uri))
}

// prunePending asks the pruner to look for upstream subscriptions that
// no client holds any more.
func (g *Gateway) prunePending() {
	select {
	case g.prune <- struct{}{}:
	default: // asked already
	}
}

// pruneLoop runs the pruner until ctx ends.
func (g *Gateway) pruneLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.prune:
			g.pruneSubscriptions(ctx)
		}
	}
}

// pruneSubscriptions unsubscribes upstream from every resource no client
// session or listen request holds any more.
func (g *Gateway) pruneSubscriptions(ctx context.Context) {
	g.mu.Lock()
	ups := make([]*upstream, 0, len(g.upstreams)+len(g.tenantUps))
	for _, u := range g.upstreams {
		ups = append(ups, u)
	}
	for _, u := range g.tenantUps {
		ups = append(ups, u)
	}
	g.mu.Unlock()
	for _, u := range ups {
		u.pruneSubscriptions(ctx, g.server)
	}
}

func (u *upstream) pruneSubscriptions(ctx context.Context, s *mcp.Server) {
	u.subMu.Lock()
	defer u.subMu.Unlock()
	u.mu.Lock()
	var gone []string
	for orig := range u.subs {
		if u.holds[orig] == 0 && !s.Subscribed(publishURI(u.cfg.Name, orig)) {
			gone = append(gone, orig)
			delete(u.subs, orig)
		}
	}
	cs := u.cs
	u.mu.Unlock()
	if cs == nil {
		return // a new connection subscribes only to what is held then
	}
	for _, orig := range gone {
		uctx, cancel := context.WithTimeout(ctx, u.timeout())
		if err := cs.Unsubscribe(uctx, orig); err != nil {
			u.logger.Debug("gateway: could not unsubscribe upstream from a resource nobody holds", "uri", orig, "error", err)
		}
		cancel()
	}
}
