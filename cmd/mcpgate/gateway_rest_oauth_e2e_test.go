package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// restAuthAPI is a REST API on loopback that takes the access tokens of
// an issuer: it records each Authorization it gets and refuses those it
// was told to treat as revoked.
type restAuthAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []string
	revoked map[string]bool
}

func newRESTAuthAPI(t *testing.T) *restAuthAPI {
	a := &restAuthAPI{revoked: map[string]bool{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		a.mu.Lock()
		a.seen = append(a.seen, auth)
		revoked := a.revoked[strings.TrimPrefix(auth, "Bearer ")]
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasPrefix(auth, "Bearer ") || revoked {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"bad token"}`))
			return
		}
		w.Write([]byte(`{"login":"ada"}`))
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *restAuthAPI) last() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.seen) == 0 {
		return ""
	}
	return a.seen[len(a.seen)-1]
}

func (a *restAuthAPI) revoke(tok string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.revoked[tok] = true
}

// TestGatewayRESTOAuthLogin: a REST API whose description declares an
// authorizationCode flow, with oauth grant authorization_code. Before a
// sign-in its calls fail with -32010 saying to run `mcpgate login`;
// `mcpgate login api` signs in with PKCE at the flow's endpoints (the
// browser played by the test) and keeps the token under the API's base
// URL; the running gateway then calls with it, without a restart. When
// the API refuses the token, the gateway refreshes it, saves the new one
// and makes the call again; when the refresh is refused, the call fails
// saying to log in again. No secret reaches the gateway's log.
func TestGatewayRESTOAuthLogin(t *testing.T) {
	is := newTestIssuer(t)
	api := newRESTAuthAPI(t)
	home, dir := t.TempDir(), t.TempDir()
	spec := filepath.Join(dir, "me.yaml")
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: Me, version: "1"}
servers: [{url: "`+api.srv.URL+`/v1"}]
security: [{oauth: [tasks]}]
paths:
  /me:
    get: {operationId: me, responses: {"200": {description: the signed-in user}}}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        authorizationCode: {authorizationUrl: "`+is.srv.URL+`/authorize", tokenUrl: "`+is.srv.URL+`/token", scopes: {tasks: tasks}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"api": map[string]any{"openapi": map[string]any{"spec": spec}, "oauth": map[string]any{"grant": "authorization_code", "clientId": "cli-1", "scopes": []string{"tasks"}}},
	}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	downKey := "mcpg_downstream-" + b64(randomBytes(12))
	sum := sha256.Sum256([]byte(downKey))
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("ci:sha256:"+hex.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_CONFIG_HOME=" + home, "HOME=" + home, "BROWSER=/nonexistent/browser", "GORACE=atexit_sleep_ms=0", "MCPGATE_LOG_LEVEL=info"}
	tokens := filepath.Join(home, "mcpgate", "oauth-tokens.json")
	kept := func() (access, refresh string) {
		t.Helper()
		b, err := os.ReadFile(tokens)
		if err != nil {
			t.Fatal(err)
		}
		var all map[string]map[string]any
		json.Unmarshal(b, &all)
		tok := all[api.srv.URL+"/v1"]
		if tok == nil {
			t.Fatalf("the token file holds nothing for %s/v1: %s", api.srv.URL, b)
		}
		access, _ = tok["access_token"].(string)
		refresh, _ = tok["refresh_token"].(string)
		return access, refresh
	}

	gw := startHTTPEnv(t, env, "--config", cfg, "--auth-keys", keys)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil).Connect(context.Background(),
		&mcphttp.ClientTransport{Endpoint: gw.url, Header: http.Header{"Authorization": {"Bearer " + downKey}}})
	if err != nil {
		t.Fatalf("%v\n%s", err, gw.log())
	}
	defer cs.Close()
	waitTools(t, cs, gw, func(n []string) bool { return len(n) > 0 && n[0] == "api_me" }, "the API's tool")
	call := func() (*mcp.CallToolResult, error) { return cs.CallTool(context.Background(), "api_me", nil) }
	needsLogin := func(what string) {
		t.Helper()
		_, err := call()
		var e *jsonrpc.Error
		if !errors.As(err, &e) || e.Code != gateway.CodeUpstreamUnavailable || !strings.Contains(e.Message, "mcpgate login api") {
			t.Fatalf("%s: %v; want code %d saying to run mcpgate login api\n%s", what, err, gateway.CodeUpstreamUnavailable, gw.log())
		}
	}
	needsLogin("before a sign-in")
	if api.last() != "" {
		t.Errorf("the API was called without a token: %q", api.last())
	}

	r := loginNoBrowser(t, cfg, env, "api")
	if r.code != 0 || !strings.Contains(r.stderr, "Signed in to api") {
		t.Fatalf("login: %+v", r)
	}
	loginAccess, loginRefresh := kept()
	if loginAccess == "" || loginRefresh == "" || is.granted("authorization_code") != 1 {
		t.Fatalf("login kept access %t refresh %t after %d authorizations", loginAccess != "", loginRefresh != "", is.granted("authorization_code"))
	}
	if res, err := call(); err != nil || res.IsError || api.last() != "Bearer "+loginAccess {
		t.Fatalf("after the sign-in: %v %+v, the API saw %.20q…\n%s", err, res, api.last(), gw.log())
	}

	// The API refuses the token: refreshed, saved back, the call made again.
	api.revoke(loginAccess)
	if res, err := call(); err != nil || res.IsError {
		t.Fatalf("after a revocation: %v %+v\n%s", err, res, gw.log())
	}
	access, refresh := kept()
	if is.granted("refresh_token") != 1 || access == loginAccess || refresh == loginRefresh || api.last() != "Bearer "+access {
		t.Errorf("after a revocation: %d refreshes, token saved anew %t, refresh token rotated %t, the API saw the new one %t",
			is.granted("refresh_token"), access != loginAccess, refresh != loginRefresh, api.last() == "Bearer "+access)
	}

	// The refresh is refused too (the person revoked the grant).
	is.set(func(is *testIssuer) { is.refuseRefresh = true })
	api.revoke(access)
	needsLogin("after a refused refresh")

	for _, s := range append(is.handedOut(), downKey) {
		if strings.Contains(gw.log(), s) || strings.Contains(r.stdout+r.stderr, s) {
			t.Errorf("a secret (%.12s…) is in the gateway's log or login's output", s)
		}
	}
}
