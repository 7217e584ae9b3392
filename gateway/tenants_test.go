package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Tenants over HTTP: each sees its servers and tools, calls to the others
// are unknown tools, a principal in no tenant sees nothing, and
// X-Tenant-ID works only for members and delegates.
func TestGatewayTenants(t *testing.T) {
	var logs logBuffer
	cfg := &config.Config{
		Servers: map[string]*config.Server{"alpha": httpServer(t, "alpha"), "beta": httpServer(t, "beta")},
		Tenants: map[string]*config.Tenant{
			"acme":   {Principals: []string{"apikey:alice"}, Servers: []string{"alpha"}},
			"globex": {Principals: []string{"apikey:bob"}, Delegates: []string{"apikey:ops"}, Tools: config.ToolFilter{Deny: []string{"*_echo"}}},
		},
	}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady)
	srv := serveTenants(t, g)
	connect := func(user, tenant string) (*mcp.ClientSession, error) {
		hdr := http.Header{"X-User": {user}}
		if tenant != "" {
			hdr.Set("X-Tenant-ID", tenant)
		}
		cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: hdr, DisableLegacyFallback: true})
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	for _, tt := range []struct {
		user, tenant string
		sees, hidden []string
	}{
		{"alice", "", []string{"alpha_echo", "alpha_pid"}, []string{"beta_echo", "beta_pid"}},
		{"bob", "", []string{"alpha_pid", "beta_pid"}, []string{"alpha_echo", "beta_echo"}},
		{"ops", "globex", []string{"beta_pid"}, []string{"beta_echo"}},
		{"carol", "", nil, []string{"alpha_echo", "beta_pid"}},
	} {
		cs, err := connect(tt.user, tt.tenant)
		if err != nil {
			t.Fatalf("%s: %v", tt.user, err)
		}
		names := toolNames(t, cs)
		for _, n := range tt.sees {
			if !slices.Contains(names, n) {
				t.Errorf("%s does not see %s: %v", tt.user, n, names)
			}
		}
		for _, n := range tt.hidden {
			if slices.Contains(names, n) {
				t.Errorf("%s sees %s", tt.user, n)
			}
			if _, err := cs.CallTool(context.Background(), n, map[string]string{"text": "x"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("%s calling %s: %v, want -32602", tt.user, n, err)
			}
		}
		for _, n := range tt.sees {
			if strings.HasSuffix(n, "_pid") {
				callText(t, cs, n, nil)
			}
		}
	}
	for _, tt := range []struct{ user, tenant string }{{"ops", "acme"}, {"alice", "globex"}, {"alice", "nope"}} {
		if _, err := connect(tt.user, tt.tenant); err == nil || !strings.Contains(err.Error(), "403") {
			t.Errorf("%s acting for %s: %v, want 403", tt.user, tt.tenant, err)
		}
	}
}

// The upstream hop carries the configured credentials only: a client's
// own token never reaches an upstream.
func TestGatewayNeverForwardsClientToken(t *testing.T) {
	var logs logBuffer
	var mu sync.Mutex
	var seen []string
	up := mcphttp.NewHandler(testUpstream("alpha"), nil)
	upSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(upSrv.Close) // after the gateway, whose client holds a stream to it
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": {Name: "alpha", URL: upSrv.URL + "/mcp", BearerToken: "upstream-secret"}}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady)
	srv := httptest.NewServer(mcphttp.NewHandler(g.Server(), nil))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer client-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	callText(t, cs, "alpha_echo", map[string]string{"text": "x"})
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seen {
		if a != "Bearer upstream-secret" {
			t.Errorf("the upstream saw Authorization %q", a)
		}
	}
	if len(seen) == 0 {
		t.Error("the upstream saw no requests")
	}
	if strings.Contains(logs.String(), "upstream-secret") || strings.Contains(logs.String(), "client-secret") {
		t.Error("a token reached the log")
	}
}

// A tenant with credentials of its own for a server gets a process of
// that server of its own, started with them; the others share one.
func TestGatewayTenantCredentials(t *testing.T) {
	var logs logBuffer
	alpha := stdioServer("alpha")
	alpha.Start = "eager"
	alpha.Env["UPSTREAM_SECRET"] = "shared"
	cfg := &config.Config{
		Servers: map[string]*config.Server{"alpha": alpha},
		Tenants: map[string]*config.Tenant{
			"acme":   {Principals: []string{"apikey:alice"}, Credentials: map[string]*config.Credentials{"alpha": {Env: map[string]string{"UPSTREAM_SECRET": "acme-key"}}}},
			"globex": {Principals: []string{"apikey:bob"}},
		},
	}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady, StateIdle)
	srv := serveTenants(t, g)
	pids := map[string]string{}
	for user, want := range map[string]string{"alice": "acme-key", "bob": "shared"} {
		cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"X-User": {user}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if got := callText(t, cs, "alpha_whoami", nil); got != want {
			t.Errorf("%s's call ran with %q, want %q", user, got, want)
		}
		pids[user] = callText(t, cs, "alpha_pid", nil)
	}
	if pids["alice"] == pids["bob"] {
		t.Error("two tenants with different credentials share a process")
	}
	if strings.Contains(logs.String(), "acme-key") {
		t.Error("a tenant's credential reached the log")
	}
}

// serveTenants serves g over loopback HTTP behind a stand-in for auth's
// middleware (the principal is apikey:X-User) and the tenant middleware.
func serveTenants(t *testing.T, g *Gateway) *httptest.Server {
	h := mcphttp.NewHandler(g.Server(), &mcphttp.Options{Principal: PrincipalWithTenant})
	fakeAuth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Method: "apikey", Subject: r.Header.Get("X-User")})))
		})
	}
	srv := httptest.NewServer(fakeAuth(g.TenantMiddleware(h)))
	t.Cleanup(srv.Close) // after the clients' cleanups, which close their streams
	return srv
}

// connectUser connects to srv (serveTenants, or a handler that reads
// the principal from X-User) as user, closing the session when the test
// ends.
func connectUser(t *testing.T, srv *httptest.Server, user string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"X-User": {user}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// Sessions are bound to the principal and the tenant as one unambiguous
// key: a user named "alice#globex" is not alice acting for globex, and
// cannot use her session.
func TestGatewayPrincipalKeysDoNotCollide(t *testing.T) {
	if a, b := callerKeyOf(&auth.Principal{Method: "apikey", Subject: "alice#globex"}, ""), callerKeyOf(&auth.Principal{Method: "apikey", Subject: "alice"}, "globex"); a == b {
		t.Fatalf("both keys are %s", a)
	}
	var logs logBuffer
	cfg := &config.Config{
		Servers: map[string]*config.Server{"alpha": httpServer(t, "alpha")},
		Tenants: map[string]*config.Tenant{"globex": {Principals: []string{"apikey:alice"}}},
	}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady)
	srv := serveTenants(t, g)
	post := func(user, session, body string) *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-User", user)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := post("alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
	}
	if resp := post("alice", id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("alice's own session: %d", resp.StatusCode)
	}
	if resp := post("alice#globex", id, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("alice#globex with alice's session: %d, want 404", resp.StatusCode)
	}
}
