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
// library keeps each session's subscriptions and filters). The upstream
// subscription lasts as long as the upstream session and is made again
// after a reconnection. It is not withdrawn when the last client
// unsubscribes: sessions end without a word to the gateway, and an
// extra subscription costs only notifications that nobody is sent.

func (g *Gateway) subscribeMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		switch req.Method {
		case "resources/subscribe":
			var p mcp.ReadResourceParams
			if err := req.DecodeParams(&p); err != nil {
				return nil, err
			}
			if err := g.subscribe(ctx, req, p.URI); err != nil {
				return nil, err
			}
		case "subscriptions/listen":
			var p struct {
				Notifications *mcp.SubscriptionFilter `json:"notifications"`
			}
			if req.DecodeParams(&p) == nil && p.Notifications != nil {
				// The listen request stays open; what cannot be
				// subscribed upstream is logged, the rest carries on.
				for _, uri := range p.Notifications.ResourceSubscriptions {
					if err := g.subscribe(ctx, req, uri); err != nil {
						g.logger.Info("gateway: a resource subscription could not be made upstream", "uri", uri, "error", err)
					}
				}
			}
		}
		return next(ctx, req)
	}
}

// subscribe makes sure the upstream of a published URI notifies the
// gateway of the resource's updates.
func (g *Gateway) subscribe(ctx context.Context, req *mcp.Request, uri string) error {
	if uri == "" {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: uri is required")
	}
	u, orig := g.upstreamByURI(uri)
	if u == nil || !g.visible(ctx, mcp.KindResource, uri) {
		return mcp.ResourceNotFoundError(uri)
	}
	u = g.forTenant(ctx, u)
	u.mu.Lock()
	done := u.subs[orig]
	u.mu.Unlock()
	if done {
		return nil
	}
	err := u.do(ctx, req, func(ctx context.Context, cs *mcp.ClientSession) error {
		return cs.Subscribe(ctx, orig)
	})
	if errors.Is(err, mcp.ErrNotSupported) {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: server %q does not offer resource subscriptions (it does not declare resources.subscribe); read %s again to see changes", u.cfg.Name, uri)
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
	u.g.server.ResourceUpdated(publishURI(u.cfg.Name, uri))
}
