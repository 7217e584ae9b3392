package gateway

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
)

// Tenants partition the gateway over HTTP: each caller acts for one
// tenant, which decides the servers and tools it sees and its limits.
// Over stdio there is one local user, who acts for no tenant (and sees
// everything) unless the serve command names one.

type tenantKey struct{}

// WithTenant records in ctx the tenant the caller acts for ("" for none).
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant recorded by WithTenant; ok is false where
// tenants do not apply (stdio).
func TenantFrom(ctx context.Context) (tenant string, ok bool) {
	tenant, ok = ctx.Value(tenantKey{}).(string)
	return tenant, ok
}

// resolveTenant chooses the tenant of a principal: the one X-Tenant-ID
// names, when the principal belongs to it or is its delegate (else
// refused), or else the only one it belongs to; "" when none.
func resolveTenant(tenants map[string]*config.Tenant, p *auth.Principal, header string) (string, bool) {
	id := p.ID()
	claim, _ := claimString(p, "tenant")
	member := func(name string, t *config.Tenant) bool {
		return slices.Contains(t.Principals, id) || slices.Contains(t.Principals, "*") || (claim != "" && claim == name)
	}
	if header != "" {
		t := tenants[header]
		if t == nil || !(member(header, t) || slices.Contains(t.Delegates, id)) {
			return "", false
		}
		return header, true
	}
	found := ""
	for _, name := range sortedKeys(tenants) {
		if member(name, tenants[name]) {
			if found != "" {
				return "", true // several: the caller must say which
			}
			found = name
		}
	}
	return found, true
}

func claimString(p *auth.Principal, name string) (string, bool) {
	if p == nil {
		return "", false
	}
	s, ok := p.Claims[name].(string)
	return s, ok
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TenantMiddleware resolves each HTTP request's tenant from its
// authenticated principal (auth's middleware runs first) and X-Tenant-ID.
// A request naming a tenant its principal may not act for gets 403.
// Without tenants configured it changes nothing.
func (g *Gateway) TenantMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		tenants := g.cfg.Tenants
		g.mu.Unlock()
		if len(tenants) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		tn, ok := resolveTenant(tenants, auth.FromContext(r.Context()), r.Header.Get("X-Tenant-ID"))
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32600,"message":"Forbidden: this principal may not act for the tenant X-Tenant-ID names"}}`))
			return
		}
		next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), tn)))
	})
}

// PrincipalWithTenant is mcphttp's Options.Principal for a gateway with
// tenants: sessions, tasks and request states are bound to the principal
// and the tenant it acts for, as one key that cannot be forged by a
// name: auth.Principal.Key's JSON array (method, issuer, subject) with
// the tenant after them, so that a user called "alice#globex" is never
// alice acting for globex. An anonymous caller of no tenant is "".
func PrincipalWithTenant(r *http.Request) string {
	tn, _ := TenantFrom(r.Context())
	return callerKeyOf(auth.FromContext(r.Context()), tn)
}

func callerKeyOf(p *auth.Principal, tenant string) string {
	if p == nil && tenant == "" {
		return ""
	}
	var k [4]string
	if p != nil {
		k = [4]string{p.Method, p.Issuer, p.Subject, tenant}
	}
	k[3] = tenant
	b, _ := json.Marshal(k)
	return string(b)
}

// displayPrincipal names the caller in logs and audit records: the
// authenticated principal ("apikey:alice"), or the key the transport
// bound the session to.
func displayPrincipal(ctx context.Context) string {
	if p := auth.FromContext(ctx); p != nil {
		return p.ID()
	}
	return mcp.PrincipalFrom(ctx)
}

// sessionTenants remembers the tenant each downstream session acts for,
// from its requests (a session is bound to one tenant), so that what an
// upstream sends outside any call goes only to sessions that can see it.
type sessionTenants struct {
	mu sync.Mutex
	m  map[*mcp.ServerSession]sessionTenant
}

type sessionTenant struct {
	tenant string
	ok     bool // tenants apply (false over stdio without --tenant)
}

// noteSession records the tenant of the request's session.
func (g *Gateway) noteSession(ctx context.Context, req *mcp.Request) {
	if req.Session == nil {
		return
	}
	tn, ok := TenantFrom(ctx)
	st := &g.sessionTenants
	st.mu.Lock()
	defer st.mu.Unlock()
	if _, seen := st.m[req.Session]; seen {
		return
	}
	select {
	case <-req.Session.Done():
		return // closed already: sessionClosed has been and gone
	default:
	}
	if st.m == nil {
		st.m = map[*mcp.ServerSession]sessionTenant{}
	}
	st.m[req.Session] = sessionTenant{tn, ok}
}

// sessionClosed is the server's SessionClosedHandler: the session's
// tenant is forgotten, and the upstream subscriptions it may have been
// the last to hold are checked.
func (g *Gateway) sessionClosed(ss *mcp.ServerSession) {
	st := &g.sessionTenants
	st.mu.Lock()
	delete(st.m, ss)
	st.mu.Unlock()
	g.prunePending()
}

// sessionSees reports whether a session may see server's items: a
// session the gateway has not seen a request of yet sees nothing.
func (g *Gateway) sessionSees(ss *mcp.ServerSession, server string) bool {
	st := &g.sessionTenants
	st.mu.Lock()
	t, seen := st.m[ss]
	st.mu.Unlock()
	if !seen {
		return false
	}
	ctx := context.Background()
	if t.ok {
		ctx = WithTenant(ctx, t.tenant)
	}
	return g.filter(ctx, mcp.KindResource, publishURI(server, ""))
}

// filter is the downstream server's Filter: a tenant sees the servers and
// tools its configuration allows; a caller with no tenant, where tenants
// exist, sees nothing.
func (g *Gateway) filter(ctx context.Context, kind mcp.ItemKind, name string) bool {
	tn, ok := TenantFrom(ctx)
	if !ok {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.cfg.Tenants) == 0 {
		return true
	}
	t := g.cfg.Tenants[tn]
	if t == nil {
		return false
	}
	server := ""
	switch kind {
	case mcp.KindTool:
		if u := g.toolOwner[name]; u != nil {
			server = u.cfg.Name
		} else if u := g.downTools[name]; u != nil {
			server = u.cfg.Name
		}
	case mcp.KindPrompt:
		if u := g.promptOwner[name]; u != nil {
			server = u.cfg.Name
		}
	default:
		server, _, _ = splitURI(name)
	}
	if len(t.Servers) > 0 && !slices.Contains(t.Servers, server) {
		return false
	}
	if kind == mcp.KindTool {
		return allowed(name, t.Tools.Allow, t.Tools.Deny) && !g.pinHidden(t, name)
	}
	return true
}

// tenantConfigs are the per-tenant instances the configuration asks for,
// keyed "tenant/server": for a server with instances: tenant, one for
// each tenant that may see it, and for a shared one, one for each tenant
// with credentials for it; the server's settings with the tenant's
// credentials over them. A session server's instances take their
// tenant's credentials as they start (newSessionUpstream).
func tenantConfigs(cfg *config.Config) map[string]*config.Server {
	out := map[string]*config.Server{}
	for tn, t := range cfg.Tenants {
		for name, sc := range cfg.Servers {
			if sc == nil || sc.Disabled {
				continue
			}
			cr := t.Credentials[name]
			switch sc.Instances {
			case config.InstancesSession:
				continue
			case config.InstancesTenant:
				if len(t.Servers) > 0 && !slices.Contains(t.Servers, name) {
					continue // it cannot call the server
				}
			default:
				if cr == nil {
					continue
				}
			}
			out[tn+"/"+name] = withCredentials(sc, name, cr)
		}
	}
	return out
}

// withCredentials is a copy of a server's settings with a tenant's
// credentials (if any) over them.
func withCredentials(sc *config.Server, name string, cr *config.Credentials) *config.Server {
	c := *sc
	c.Name = name
	if cr == nil {
		return &c
	}
	c.Env = maps.Clone(sc.Env)
	if c.Env == nil && len(cr.Env) > 0 {
		c.Env = map[string]string{}
	}
	maps.Copy(c.Env, cr.Env)
	c.Headers = maps.Clone(sc.Headers)
	if c.Headers == nil && len(cr.Headers) > 0 {
		c.Headers = map[string]string{}
	}
	maps.Copy(c.Headers, cr.Headers)
	// Authorization is one credential whichever way it is given: the
	// tenant's, as a header or as bearerToken, replaces the server's
	// given either way (bearerToken is set after the headers, so the
	// server's would win over the tenant's header).
	for k := range cr.Headers {
		if strings.EqualFold(k, "Authorization") {
			c.BearerToken = ""
		}
	}
	if cr.BearerToken != "" {
		c.BearerToken = cr.BearerToken
		for k := range c.Headers {
			if strings.EqualFold(k, "Authorization") {
				delete(c.Headers, k)
			}
		}
	}
	if sc.OpenAPI != nil && len(cr.SecuritySchemes) > 0 {
		o := *sc.OpenAPI
		o.SecuritySchemes = maps.Clone(sc.OpenAPI.SecuritySchemes)
		if o.SecuritySchemes == nil {
			o.SecuritySchemes = map[string]string{}
		}
		maps.Copy(o.SecuritySchemes, cr.SecuritySchemes)
		c.OpenAPI = &o
	}
	return &c
}

// newTenantUpstream is an instance of a server for one tenant: it serves
// that tenant's calls with the tenant's credentials and publishes nothing
// (the server's shared instance publishes its tools).
func newTenantUpstream(g *Gateway, key string, sc *config.Server) *upstream {
	u := newUpstream(g, sc)
	u.tenantKey = key
	u.logger = upstreamLogger(g.logger, sc.Name, "tenant", key[:strings.IndexByte(key, '/')])
	return u
}

// forTenant swaps an upstream for the caller's tenant's own instance of
// it, when the tenant has one (credentials for the server, or the server
// has instances: tenant).
func (g *Gateway) forTenant(ctx context.Context, u *upstream) *upstream {
	tn, ok := TenantFrom(ctx)
	if !ok || tn == "" {
		return u
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if tu := g.tenantUps[tn+"/"+u.cfg.Name]; tu != nil {
		return tu
	}
	return u
}
