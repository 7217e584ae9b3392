package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// vaultAPI is a REST API on loopback that takes an OAuth access token
// (from its own token endpoint, client_credentials only) or an API key
// in the query, as its description declares, and a token endpoint that
// counts the tokens it issues and can revoke them.
type vaultAPI struct {
	srv *httptest.Server

	mu      sync.Mutex
	issued  int
	live    map[string]bool
	secret  string   // the client secret the endpoint accepts
	auths   []string // the Authorization of each API request
	queries []string // the raw query of each API request
	grants  []string // each token request's grant_type and scope
}

const vaultSpec = `openapi: 3.0.3
info: {title: Vault, version: "1"}
servers: [{url: "TOKEN_BASE/v1"}]
paths:
  /secrets/{name}:
    get:
      operationId: readSecret
      security: [{oauth: [secrets.read]}]
      parameters: [{name: name, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /status:
    get:
      operationId: status
      security: [{query_key: []}]
      responses: {"200": {description: ok}}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: "TOKEN_BASE/oauth/token", scopes: {secrets.read: read secrets}}
    query_key: {type: apiKey, in: query, name: api_key}
`

func newVaultAPI(t *testing.T) *vaultAPI {
	v := &vaultAPI{live: map[string]bool{}, secret: "vault-client-s3cret"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /oauth/token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
		}
		v.mu.Lock()
		defer v.mu.Unlock()
		v.grants = append(v.grants, r.PostForm.Get("grant_type")+" "+r.PostForm.Get("scope"))
		w.Header().Set("Content-Type", "application/json")
		if id != "mcpgate" || secret != v.secret || r.PostForm.Get("grant_type") != "client_credentials" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"invalid_client","error_description":"unknown client or bad secret"}`))
			return
		}
		v.issued++
		tok := "at-" + string(rune('0'+v.issued))
		v.live[tok] = true
		json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	mux.HandleFunc("GET /v1/", func(w http.ResponseWriter, r *http.Request) {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.auths = append(v.auths, r.Header.Get("Authorization"))
		v.queries = append(v.queries, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/status" {
			if r.URL.Query().Get("api_key") == "" {
				w.WriteHeader(http.StatusUnauthorized)
			}
			w.Write([]byte(`{"ok":true}`))
			return
		}
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || !v.live[tok] {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"token expired or revoked"}`))
			return
		}
		w.Write([]byte(`{"name":"` + strings.TrimPrefix(r.URL.Path, "/v1/secrets/") + `"}`))
	})
	v.srv = httptest.NewServer(mux)
	t.Cleanup(v.srv.Close)
	return v
}

func (v *vaultAPI) revokeAll() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.live)
}

func (v *vaultAPI) seen() (issued int, auths, queries, grants []string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.issued, append([]string(nil), v.auths...), append([]string(nil), v.queries...), append([]string(nil), v.grants...)
}

func (v *vaultAPI) spec(t *testing.T) string {
	f := filepath.Join(t.TempDir(), "vault.yaml")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(vaultSpec, "TOKEN_BASE", v.srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func vaultServer(v *vaultAPI, spec string) *configServer {
	return &configServer{Name: "vault",
		OpenAPI: &config.OpenAPI{Spec: spec, SecuritySchemes: map[string]string{"query_key": "server-k3y"}},
		OAuth:   &config.OAuth{Grant: "client_credentials", ClientID: "mcpgate", ClientSecret: v.secret, Scopes: []string{"secrets.read"}},
	}
}

// TestARESTAPIsOAuthTokenComesFromItsDescribedTokenEndpoint: with the
// client_credentials grant and no tokenUrl, the token comes from the
// description's clientCredentials flow, once for many calls; a token the
// API refuses is replaced and the call made again; the API key of another
// operation goes in the query its scheme names.
func TestARESTAPIsOAuthTokenComesFromItsDescribedTokenEndpoint(t *testing.T) {
	v := newVaultAPI(t)
	logs := &logBuffer{}
	g := runConfigured(t, &config.Config{Servers: map[string]*config.Server{"vault": vaultServer(v, v.spec(t))}}, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady)
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(context.Background(), tool, args)
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", tool, err, r)
		}
		return r
	}
	call("vault_readSecret", map[string]any{"name": "a"})
	call("vault_readSecret", map[string]any{"name": "b"})
	issued, auths, _, grants := v.seen()
	if issued != 1 || len(auths) != 2 || auths[0] != "Bearer at-1" || auths[1] != "Bearer at-1" {
		t.Errorf("after two calls: %d tokens issued, the API saw %q; want one token, used twice", issued, auths)
	}
	if len(grants) != 1 || grants[0] != "client_credentials secrets.read" {
		t.Errorf("token requests %q", grants)
	}

	v.revokeAll()
	call("vault_readSecret", map[string]any{"name": "c"})
	issued, auths, _, _ = v.seen()
	if issued != 2 || auths[len(auths)-2] != "Bearer at-1" || auths[len(auths)-1] != "Bearer at-2" {
		t.Errorf("after a revocation: %d issued, the API saw %q; want the call made again with a new token", issued, auths)
	}

	call("vault_status", nil)
	_, auths, queries, _ := v.seen()
	if q := queries[len(queries)-1]; q != "api_key=server-k3y" || auths[len(auths)-1] != "" {
		t.Errorf("status: query %q, Authorization %q; want the key in the query and no token (its operation asks for the key only)", q, auths[len(auths)-1])
	}
	if strings.Contains(logs.String(), "server-k3y") || strings.Contains(logs.String(), v.secret) || strings.Contains(logs.String(), "at-1") {
		t.Errorf("a credential is in the log:\n%s", logs)
	}
}

// TestARESTAPIsRefusedClientCredentialsAreAClearError: a refused grant
// fails the call with the gateway's unavailable code, naming the token
// endpoint and the authorization server's error, never the secret; the
// API is not called.
func TestARESTAPIsRefusedClientCredentialsAreAClearError(t *testing.T) {
	v := newVaultAPI(t)
	s := vaultServer(v, v.spec(t))
	s.OAuth.ClientSecret = "wrong-s3cret"
	g := runConfigured(t, &config.Config{Servers: map[string]*config.Server{"vault": s}}, &Options{Logger: (&logBuffer{}).logger()})
	waitState(t, g, StateReady)
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	_, err := cs.CallTool(context.Background(), "vault_readSecret", map[string]any{"name": "a"})
	var e *jsonrpc.Error
	if !errors.As(err, &e) || e.Code != CodeUpstreamUnavailable || !strings.Contains(e.Message, v.srv.URL) ||
		!strings.Contains(e.Message, "invalid_client") || strings.Contains(e.Message, "wrong-s3cret") {
		t.Errorf("a refused grant: %v; want code %d naming the endpoint and invalid_client, without the secret", err, CodeUpstreamUnavailable)
	}
	if _, auths, _, _ := v.seen(); len(auths) != 0 {
		t.Errorf("the API was called %d times without a token", len(auths))
	}
}

// TestARESTAPIsTenantCredentialsReplaceTheServers: a tenant's value for a
// security scheme replaces the server's; a tenant's bearerToken replaces
// the OAuth token (Authorization is one credential).
func TestARESTAPIsTenantCredentialsReplaceTheServers(t *testing.T) {
	v := newVaultAPI(t)
	cfg := &config.Config{
		Servers: map[string]*config.Server{"vault": vaultServer(v, v.spec(t))},
		Tenants: map[string]*config.Tenant{
			"acme":   {Principals: []string{"apikey:alice"}, Credentials: map[string]*config.Credentials{"vault": {SecuritySchemes: map[string]string{"query_key": "acme-k3y"}}}},
			"globex": {Principals: []string{"apikey:bob"}, Credentials: map[string]*config.Credentials{"vault": {BearerToken: "globex-token"}}},
		},
	}
	g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger()})
	waitState(t, g, StateReady)
	srv := serveTenants(t, g)
	connect := func(user string) *mcp.ClientSession { return connectUser(t, srv, user) }
	var err error
	alice := connect("alice")
	waitUntil(t, func() bool { _, err = alice.CallTool(context.Background(), "vault_status", nil); return err == nil }, "alice's call (%v)", err)
	_, _, queries, _ := v.seen()
	if q := queries[len(queries)-1]; q != "api_key=acme-k3y" {
		t.Errorf("alice's call sent query %q, want her tenant's key", q)
	}
	bob := connect("bob")
	waitUntil(t, func() bool {
		_, err = bob.CallTool(context.Background(), "vault_readSecret", map[string]any{"name": "x"})
		return err == nil
	}, "bob's call (%v)", err)
	issued, auths, _, _ := v.seen()
	if a := auths[len(auths)-1]; a != "Bearer globex-token" || issued != 0 {
		t.Errorf("bob's call sent Authorization %q (%d tokens issued), want his tenant's bearerToken and no grant", a, issued)
	}
}

// TestARESTAPIsCredentialsMustFitItsDescription: a value for a security
// scheme the description does not declare, or the client_credentials
// grant without a token endpoint, keeps the server from starting with a
// message naming the cause.
func TestARESTAPIsCredentialsMustFitItsDescription(t *testing.T) {
	v := newVaultAPI(t)
	noFlow := filepath.Join(t.TempDir(), "noflow.yaml")
	if err := os.WriteFile(noFlow, []byte("openapi: 3.0.3\ninfo: {title: T, version: \"1\"}\nservers: [{url: \""+v.srv.URL+"\"}]\npaths:\n  /x: {get: {operationId: x, responses: {\"200\": {description: ok}}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		edit func(s *configServer)
		want string
	}{
		{"an undeclared scheme", func(s *configServer) { s.OpenAPI.SecuritySchemes = map[string]string{"api_key": "k"} },
			`declares no security scheme "api_key" (it declares oauth, query_key)`},
		{"no token endpoint", func(s *configServer) { s.OpenAPI.Spec, s.OpenAPI.SecuritySchemes = noFlow, nil },
			"names no token endpoint (in a clientCredentials flow): set oauth.tokenUrl"},
		{"a token endpoint over plain http elsewhere", func(s *configServer) { s.OAuth.TokenURL = "http://auth.example.com/token" },
			"not an https URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := vaultServer(v, v.spec(t))
			tt.edit(s)
			g := runConfigured(t, &config.Config{Servers: map[string]*config.Server{"vault": s}}, &Options{Logger: (&logBuffer{}).logger()})
			var got string
			waitUntil(t, func() bool {
				for _, st := range g.Status() {
					got = st.Error
				}
				return strings.Contains(got, tt.want)
			}, "the server's error to say %q (it says %q)", tt.want, got)
		})
	}
}
