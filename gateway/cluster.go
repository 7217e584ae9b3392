package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Replicas of a gateway share their sessions through package cluster
// (see mcphttp.Options.Cluster). What one replica alone holds is an
// upstream process of a session's own (instances: session): a session's
// calls to such a server must all reach the one replica that started its
// process, whichever replica the load balancer gave them to. Route names
// that replica, and the request is handed to it with the caller's
// identity and tenant (ContextCarrier).

// homeTTL bounds how long a session's server stays bound to the replica
// that started its process, unused; an instance idles out long before.
const homeTTL = 24 * time.Hour

// Route is mcphttp.Options.Route for a gateway whose replicas share c: a
// request to a server with an instance per session runs on the replica
// that runs the session's instance (the first replica to need one, or,
// if that one stopped, the next). Other requests run where they land and
// cost nothing here.
func (g *Gateway) Route(c *cluster.Cluster) func(ctx context.Context, sessionID string, msg *jsonrpc.Message) string {
	var mu sync.Mutex
	homes := map[string]string{} // session and server → tag
	return func(ctx context.Context, sessionID string, msg *jsonrpc.Message) string {
		server := g.perSessionServer(msg)
		if server == "" {
			return ""
		}
		key := sessionID + "/" + server
		mu.Lock()
		tag, ok := homes[key]
		mu.Unlock()
		if ok && (tag == c.Tag() || c.Alive(ctx, tag)) {
			return tag
		}
		tag, err := c.Claim(ctx, "home:"+key, homeTTL)
		if err != nil {
			// Redis is down: run it here, as a replica alone would.
			return ""
		}
		mu.Lock()
		if len(homes) >= 100000 {
			clear(homes) // a cache: what it forgets is asked again
		}
		homes[key] = tag
		mu.Unlock()
		return tag
	}
}

// perSessionServer names the server that a request reaches when that
// server runs an instance per session; "" otherwise.
func (g *Gateway) perSessionServer(msg *jsonrpc.Message) string {
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	switch msg.Method {
	case "tools/call", "prompts/get", "resources/read", "resources/subscribe", "resources/unsubscribe":
	default:
		return ""
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return ""
	}
	if msg.Method == "tools/call" {
		// A call through call_tool runs the tool it names.
		call, _ := calledTool(msg.Params)
		p.Name = call.Name
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var u *upstream
	switch msg.Method {
	case "tools/call":
		if u = g.toolOwner[p.Name]; u == nil {
			u = g.byPrefixLocked(p.Name)
		}
	case "prompts/get":
		if u = g.promptOwner[p.Name]; u == nil {
			u = g.byPrefixLocked(p.Name)
		}
	default:
		if server, _, ok := splitURI(p.URI); ok {
			u = g.upstreams[server]
		}
	}
	if u == nil || u.cfg.Instances != "session" {
		return ""
	}
	return u.cfg.Name
}

// carried is what a request's context holds for the gateway beyond the
// principal key: who the caller is and the tenant it acts for.
type carried struct {
	Principal *auth.Principal `json:"p,omitempty"`
	Tenant    *string         `json:"t,omitempty"`
}

// ContextCarrier is mcphttp.Options.CarryContext for a gateway: a request
// handed to another replica runs there as the same caller, for the same
// tenant. Claims and scopes travel through the cluster's Redis, which
// the replicas trust; tokens never do (the principal holds none).
func ContextCarrier() *mcphttp.ContextCarrier {
	return &mcphttp.ContextCarrier{
		Save: func(ctx context.Context) ([]byte, error) {
			var c carried
			c.Principal = auth.FromContext(ctx)
			if tn, ok := TenantFrom(ctx); ok {
				c.Tenant = &tn
			}
			return json.Marshal(c)
		},
		Restore: func(ctx context.Context, saved []byte) context.Context {
			var c carried
			if json.Unmarshal(saved, &c) != nil {
				return ctx
			}
			if c.Principal != nil {
				ctx = auth.WithPrincipal(ctx, c.Principal)
			}
			if c.Tenant != nil {
				ctx = WithTenant(ctx, *c.Tenant)
			}
			return ctx
		},
	}
}

// byPrefixLocked finds the server a published name belongs to by its
// prefix, for a name the catalog does not hold yet: a session's first
// call may come while its server is still being listed, and must go where
// its later calls will (g.mu held).
func (g *Gateway) byPrefixLocked(name string) *upstream {
	for server, u := range g.upstreams {
		if strings.HasPrefix(name, server+g.sep) {
			return u
		}
	}
	return nil
}
