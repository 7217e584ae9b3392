package oauthclient_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

const redirectURL = "http://127.0.0.1:9/callback" // never served: FollowRedirect stops before it

// testLogger collects log output, so tests can check no secret is logged.
func testLogger(t *testing.T) (*slog.Logger, *syncBuffer) {
	buf := &syncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// baseConfig is what a headless conformance client would set.
func baseConfig(t *testing.T) oauthclient.Config {
	log, _ := testLogger(t)
	return oauthclient.Config{
		RedirectURL: redirectURL,
		Authorize:   oauthclient.FollowRedirect(nil),
		Logger:      log,
	}
}

// post sends body to url through the Transport and returns the answer.
func post(t *testing.T, tr http.RoundTripper, url, body string) (string, int, error) {
	t.Helper()
	hc := &http.Client{Transport: tr}
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode, nil
}

// TestConformanceScenarios runs the flows of the MCP conformance suite's
// client auth scenarios against loopback servers that behave like the
// suite's.
func TestConformanceScenarios(t *testing.T) {
	tests := []struct {
		name string
		as   asOptions
		rs   rsOptions
		cfg  func(c *oauthclient.Config, as *authServer)
		// checks after a successful call
		check func(t *testing.T, as *authServer, rs *resourceServer)
		// wantErr: the call fails with this error
		wantErr error
	}{
		{
			name: "metadata-default",
			as:   asOptions{},
			rs:   rsOptions{headerPRM: true},
			check: func(t *testing.T, as *authServer, rs *resourceServer) {
				a, tok, reg := as.counts()
				if a != 1 || tok != 1 || reg != 1 {
					t.Errorf("authorizes, token requests, registrations = %d, %d, %d; want 1, 1, 1", a, tok, reg)
				}
				// A loopback redirect: a native application (SEP-837).
				if reg == 1 && as.registrations[0]["application_type"] != "native" {
					t.Errorf("registration application_type = %v, want native", as.registrations[0]["application_type"])
				}
				if got := as.lastAuthorize().Get("resource"); got != rs.url() {
					t.Errorf("authorization resource = %q, want %q", got, rs.url())
				}
				if got := as.lastToken().form.Get("resource"); got != rs.url() {
					t.Errorf("token resource = %q, want %q", got, rs.url())
				}
				if as.lastAuthorize().Has("scope") {
					t.Errorf("scope sent though nothing names one: %q", as.lastAuthorize().Get("scope"))
				}
			},
		},
		{
			name: "metadata-var1 (well-known PRM, OpenID configuration)",
			as:   asOptions{metadataPath: "/.well-known/openid-configuration", openID: true},
			rs:   rsOptions{},
		},
		{
			name: "metadata-var2 (root PRM, issuer with a path)",
			as:   asOptions{metadataPath: "/.well-known/oauth-authorization-server/tenant1", issuerPath: "/tenant1", trap: []string{"/.well-known/oauth-authorization-server"}},
			rs:   rsOptions{prmPath: "/.well-known/oauth-protected-resource"},
			check: func(t *testing.T, as *authServer, rs *resourceServer) {
				// The resource parameter is the PRM's, exactly as published.
				if got := as.lastAuthorize().Get("resource"); got != rs.srv.URL {
					t.Errorf("resource = %q, want the PRM's %q", got, rs.srv.URL)
				}
			},
		},
		{
			name: "metadata-var3 (custom PRM URL, path-appended OpenID configuration)",
			as:   asOptions{metadataPath: "/tenant1/.well-known/openid-configuration", openID: true, issuerPath: "/tenant1"},
			rs:   rsOptions{prmPath: "/custom/metadata/location.json", headerPRM: true},
		},
		{
			name: "basic-cimd",
			as:   asOptions{cimd: true},
			rs:   rsOptions{headerPRM: true},
			cfg: func(c *oauthclient.Config, _ *authServer) {
				c.ClientMetadataURL = "https://conformance-test.local/client-metadata.json"
			},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if got := as.lastAuthorize().Get("client_id"); got != "https://conformance-test.local/client-metadata.json" {
					t.Errorf("client_id = %q, want the metadata document URL", got)
				}
				if _, _, reg := as.counts(); reg != 0 {
					t.Errorf("%d registrations; a client ID metadata document needs none", reg)
				}
			},
		},
		{
			name: "scope-from-www-authenticate",
			rs:   rsOptions{headerPRM: true, scope: "mcp:basic", prmScopes: []string{"mcp:basic", "mcp:other"}, need: func(string) []string { return []string{"mcp:basic"} }},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if got := as.lastAuthorize().Get("scope"); got != "mcp:basic" {
					t.Errorf("scope = %q, want the challenge's mcp:basic", got)
				}
			},
		},
		{
			name: "scope-from-scopes-supported",
			rs:   rsOptions{prmScopes: []string{"mcp:basic", "mcp:read", "mcp:write"}, need: func(string) []string { return []string{"mcp:read"} }},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if got := as.lastAuthorize().Get("scope"); got != "mcp:basic mcp:read mcp:write" {
					t.Errorf("scope = %q, want all of scopes_supported", got)
				}
			},
		},
		{
			name: "scope-omitted-when-undefined",
			rs:   rsOptions{},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if as.lastAuthorize().Has("scope") {
					t.Errorf("scope = %q, want none", as.lastAuthorize().Get("scope"))
				}
			},
		},
		{
			name: "token-endpoint-auth-basic",
			as:   asOptions{authMethods: []string{"client_secret_basic"}, regMethod: "client_secret_basic"},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				tc := as.lastToken()
				if !strings.HasPrefix(tc.basic, "Basic ") || tc.form.Has("client_secret") {
					t.Errorf("token request authorization %q, form %v; want Basic only", tc.basic, tc.form)
				}
			},
		},
		{
			name: "token-endpoint-auth-post",
			as:   asOptions{authMethods: []string{"client_secret_post"}, regMethod: "client_secret_post"},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				tc := as.lastToken()
				if tc.basic != "" || tc.form.Get("client_secret") == "" {
					t.Errorf("token request authorization %q, form %v; want client_secret in the form", tc.basic, tc.form)
				}
			},
		},
		{
			name: "token-endpoint-auth-none",
			as:   asOptions{authMethods: []string{"none"}, regMethod: "none"},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				tc := as.lastToken()
				if tc.basic != "" || tc.form.Has("client_secret") || tc.form.Get("client_id") == "" {
					t.Errorf("token request authorization %q, form %v; want client_id only", tc.basic, tc.form)
				}
			},
		},
		{
			name: "token-endpoint-auth-basic chosen from the metadata when registration does not say",
			as:   asOptions{authMethods: []string{"client_secret_basic"}},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if tc := as.lastToken(); !strings.HasPrefix(tc.basic, "Basic ") {
					t.Errorf("token request without Basic authentication: %v", tc.form)
				}
			},
		},
		{
			name: "pre-registration",
			as:   asOptions{noDCR: true, authMethods: []string{"client_secret_basic"}},
			cfg: func(c *oauthclient.Config, as *authServer) {
				as.preRegister("pre-registered-client", "pre-registered secret/+")
				c.ClientID, c.ClientSecret = "pre-registered-client", "pre-registered secret/+"
			},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if _, _, reg := as.counts(); reg != 0 {
					t.Errorf("%d registrations with a pre-registered client", reg)
				}
			},
		},
		{
			name: "pre-registered client is preferred to a metadata document",
			as:   asOptions{cimd: true, authMethods: []string{"none"}},
			cfg: func(c *oauthclient.Config, as *authServer) {
				as.preRegister("static", "")
				c.ClientID = "static"
				c.ClientMetadataURL = "https://client.example/meta.json"
			},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if got := as.lastAuthorize().Get("client_id"); got != "static" {
					t.Errorf("client_id = %q, want the pre-registered one", got)
				}
			},
		},
		{
			name: "2025-03-26 oauth-metadata-backcompat",
			// Legacy: the MCP server is its own authorization server, with
			// metadata at its root naming endpoints under /oauth (and an
			// issuer that does not match, as such servers publish).
			as: asOptions{endpointPrefix: "/oauth"},
			rs: rsOptions{noPRM: true},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if !as.requested("/.well-known/oauth-authorization-server") || !as.requested("/oauth/authorize") || as.requested("/authorize") {
					t.Errorf("the root metadata's endpoints were not used: %v", as.requests)
				}
			},
		},
		{
			name: "2025-03-26 oauth-endpoint-fallback",
			as:   asOptions{noMetadata: true, authMethods: []string{"none", "client_secret_basic", "client_secret_post"}},
			rs:   rsOptions{noPRM: true, noChallenge: true},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				for _, p := range []string{"/register", "/authorize", "/token"} {
					if !as.requested(p) {
						t.Errorf("the default endpoint %s was not used", p)
					}
				}
			},
		},
		{
			name:    "resource-mismatch",
			rs:      rsOptions{prmResource: "https://evil.example.com/mcp", headerPRM: true},
			wantErr: oauthclient.ErrResourceMismatch,
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if a, _, _ := as.counts(); a != 0 {
					t.Errorf("the client went on to authorize despite the mismatch")
				}
			},
		},
		{
			name:    "resource on another path of the same origin",
			rs:      rsOptions{prmResource: "PLACEHOLDER/other"},
			wantErr: oauthclient.ErrResourceMismatch,
		},
		{
			name: "offline-access-scope",
			as:   asOptions{scopes: []string{"mcp:basic", "offline_access"}, cimd: true, refresh: true},
			rs:   rsOptions{prmScopes: []string{"mcp:basic"}},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if got := as.lastAuthorize().Get("scope"); got != "mcp:basic offline_access" {
					t.Errorf("scope = %q, want mcp:basic offline_access", got)
				}
				as.mu.Lock()
				defer as.mu.Unlock()
				if len(as.registrations) != 1 || !slices.Contains(toStrings(as.registrations[0]["grant_types"]), "refresh_token") {
					t.Errorf("registration does not declare the refresh_token grant: %v", as.registrations)
				}
			},
		},
		{
			name: "offline-access-not-supported",
			as:   asOptions{scopes: []string{"mcp:basic", "mcp:read"}},
			rs:   rsOptions{prmScopes: []string{"mcp:basic", "mcp:read"}},
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if strings.Contains(as.lastAuthorize().Get("scope"), "offline_access") {
					t.Errorf("offline_access requested from a server that does not list it")
				}
			},
		},
		{
			name: "NoOfflineAccess",
			as:   asOptions{scopes: []string{"offline_access"}},
			cfg:  func(c *oauthclient.Config, _ *authServer) { c.NoOfflineAccess = true },
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if as.lastAuthorize().Has("scope") {
					t.Errorf("scope %q requested with NoOfflineAccess", as.lastAuthorize().Get("scope"))
				}
			},
		},
		{
			name:    "pkce-no-s256-support",
			as:      asOptions{pkce: []string{"plain"}},
			wantErr: oauthclient.ErrPKCEUnsupported,
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if a, _, _ := as.counts(); a != 0 {
					t.Errorf("the client authorized without S256")
				}
			},
		},
		{
			name:    "pkce empty list",
			as:      asOptions{pkce: []string{}},
			wantErr: oauthclient.ErrPKCEUnsupported,
		},
		{
			name:    "pkce not advertised: refused, as the specification says",
			as:      asOptions{omitPKCE: true},
			wantErr: oauthclient.ErrPKCEUnsupported,
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if a, _, _ := as.counts(); a != 0 {
					t.Errorf("the client authorized without advertised PKCE")
				}
			},
		},
		{
			name: "pkce not advertised, LenientPKCE: S256 anyway (as the TypeScript SDK)",
			as:   asOptions{omitPKCE: true},
			cfg:  func(c *oauthclient.Config, _ *authServer) { c.LenientPKCE = true },
		},
		{
			name:    "no way to identify the client",
			as:      asOptions{noDCR: true},
			wantErr: oauthclient.ErrNoClientIdentity,
		},
		{
			name:    "metadata document URL not supported by the server, no registration",
			as:      asOptions{noDCR: true},
			cfg:     func(c *oauthclient.Config, _ *authServer) { c.ClientMetadataURL = "https://client.example/meta.json" },
			wantErr: oauthclient.ErrNoClientIdentity,
		},
		{
			name:    "issuer mismatch",
			as:      asOptions{issuerOverride: "https://other-issuer.example"},
			rs:      rsOptions{asURL: "PLACEHOLDER-AS"},
			wantErr: oauthclient.ErrAuthorization,
		},
		{
			name:    "authorization refused by the user",
			as:      asOptions{authzError: "access_denied"},
			wantErr: oauthclient.ErrAuthorization,
		},
		{
			name:    "forged state",
			as:      asOptions{wrongState: true},
			wantErr: oauthclient.ErrAuthorization,
			check: func(t *testing.T, as *authServer, _ *resourceServer) {
				if _, tok, _ := as.counts(); tok != 0 {
					t.Errorf("a code with a forged state was exchanged")
				}
			},
		},
		{
			name: "RFC 9207 iss",
			as:   asOptions{issParam: true},
		},
		{
			// Compared exactly: a trailing-slash variant is another issuer.
			name:    "RFC 9207 iss with a trailing slash",
			as:      asOptions{issParam: true, issSuffix: "/"},
			wantErr: oauthclient.ErrAuthorization,
		},
		{
			name:    "authorization server on a non-https, non-loopback URL",
			rs:      rsOptions{asURL: "http://as.example.com"},
			wantErr: oauthclient.ErrAuthorization,
		},
		{
			name:    "authorization server with a javascript: URL",
			rs:      rsOptions{asURL: "javascript:alert(1)"},
			wantErr: oauthclient.ErrAuthorization,
		},
		{
			name: "granted scopes narrower than requested are recorded",
			as:   asOptions{grant: func([]string) []string { return []string{"mcp:basic"} }},
			rs:   rsOptions{scope: "mcp:basic mcp:extra"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t, tt.as)
			if tt.rs.asURL == "PLACEHOLDER-AS" {
				tt.rs.asURL = as.srv.URL // the PRM names the AS; its metadata names another issuer
			}
			rs := newResourceServer(t, as, tt.rs)
			if tt.rs.noPRM {
				// A 2025-03-26 server is its own authorization server:
				// serve the AS on the same origin.
				rs.opts.extraHandler = func(w http.ResponseWriter, r *http.Request) bool {
					if r.URL.Path == "/mcp" {
						return false
					}
					as.serve(w, r)
					return true
				}
				as.srv.Close()
				as.srv = rs.srv
			}
			if strings.HasPrefix(rs.opts.prmResource, "PLACEHOLDER") {
				rs.opts.prmResource = rs.srv.URL + strings.TrimPrefix(rs.opts.prmResource, "PLACEHOLDER")
			}
			cfg := baseConfig(t)
			log, logs := testLogger(t)
			cfg.Logger = log
			if tt.cfg != nil {
				tt.cfg(&cfg, as)
			}
			tr := oauthclient.NewTransport(cfg, nil)
			body, status, err := post(t, tr, rs.url(), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, oauthclient.ErrAuthorization) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "authorization required: ") {
					t.Errorf("error %q does not start its explanation with \"authorization required: \"", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if status != 200 || body != `ok:{"jsonrpc":"2.0","id":1,"method":"tools/list"}` {
					t.Fatalf("answer %d %q; want 200 and the body echoed (replayed after authorization)", status, body)
				}
				// The next request reuses the token.
				a1, _, _ := as.counts()
				if _, status, err := post(t, tr, rs.url(), "again"); err != nil || status != 200 {
					t.Fatalf("second request: %d %v", status, err)
				}
				if a2, _, _ := as.counts(); a2 != a1 {
					t.Errorf("the second request authorized again")
				}
			}
			if tt.check != nil {
				tt.check(t, as, rs)
			}
			assertNoSecretsLogged(t, logs.String(), as)
		})
	}
}

// assertNoSecretsLogged checks that no token, code, secret or verifier
// the servers issued or saw appears in the logs.
func assertNoSecretsLogged(t *testing.T, logs string, as *authServer) {
	t.Helper()
	as.mu.Lock()
	defer as.mu.Unlock()
	var secrets []string
	for tok := range as.tokens {
		secrets = append(secrets, tok)
	}
	for rt := range as.refreshTokens {
		secrets = append(secrets, rt)
	}
	for _, s := range as.clients {
		if s != "" {
			secrets = append(secrets, s)
		}
	}
	for _, tc := range as.tokenCalls {
		for _, k := range []string{"code", "code_verifier", "client_secret", "client_assertion", "assertion", "refresh_token"} {
			if v := tc.form.Get(k); v != "" {
				secrets = append(secrets, v)
			}
		}
	}
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the logs contain the secret %q:\n%s", s, logs)
		}
	}
}

func toStrings(v any) []string {
	var out []string
	if l, ok := v.([]any); ok {
		for _, s := range l {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

func TestStepUp(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	// tools/list needs mcp:basic, tools/call mcp:basic and mcp:write; the
	// 403 challenge names only mcp:write, so the client must keep
	// mcp:basic itself (the union).
	rs := newResourceServer(t, as, rsOptions{headerPRM: true, scope: "mcp:basic", need: func(body string) []string {
		if strings.Contains(body, "tools/call") {
			return []string{"mcp:write"}
		}
		return []string{"mcp:basic"}
	}})
	tr := oauthclient.NewTransport(baseConfig(t), nil)
	if _, status, err := post(t, tr, rs.url(), "tools/list"); err != nil || status != 200 {
		t.Fatalf("tools/list: %d %v", status, err)
	}
	if got := as.lastAuthorize().Get("scope"); got != "mcp:basic" {
		t.Errorf("first scope = %q, want mcp:basic", got)
	}
	body, status, err := post(t, tr, rs.url(), "tools/call")
	if err != nil || status != 200 || body != "ok:tools/call" {
		t.Fatalf("tools/call: %d %q %v", status, body, err)
	}
	if got := as.lastAuthorize().Get("scope"); got != "mcp:basic mcp:write" {
		t.Errorf("step-up scope = %q, want the union mcp:basic mcp:write", got)
	}
	if a, _, reg := as.counts(); a != 2 || reg != 1 {
		t.Errorf("authorizations, registrations = %d, %d; want 2 (step-up), 1 (the client is kept)", a, reg)
	}
	// With both scopes, tools/list still works without asking again.
	if _, status, err := post(t, tr, rs.url(), "tools/list"); err != nil || status != 200 {
		t.Fatalf("tools/list after step-up: %d %v", status, err)
	}
	if a, _, _ := as.counts(); a != 2 {
		t.Errorf("%d authorizations after step-up, want 2", a)
	}
}

// A server that moves to another authorization server refuses the old
// server's tokens; its resource metadata names the new one. The client
// registers there afresh and never shows it the old client id (SEP-2352).
func TestAuthorizationServerMigration(t *testing.T) {
	as1 := newAuthServer(t, asOptions{refresh: true})
	as2 := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as1, rsOptions{headerPRM: true})
	tr := oauthclient.NewTransport(baseConfig(t), nil)
	if _, status, err := post(t, tr, rs.url(), "tools/list"); err != nil || status != 200 {
		t.Fatalf("before the move: %d %v", status, err)
	}
	rs.moveTo(as2)
	if body, status, err := post(t, tr, rs.url(), "tools/call"); err != nil || status != 200 || body != "ok:tools/call" {
		t.Fatalf("after the move: %d %q %v", status, body, err)
	}
	if a, _, reg := as2.counts(); a != 1 || reg != 1 {
		t.Errorf("at the new server: %d authorizations, %d registrations; want 1, 1", a, reg)
	}
	if n := len(as1.tokenCalls); n != 1 {
		t.Errorf("%d token requests at the old server after the move, want 1 (no refresh there)", n)
	}
}

func TestScopeRetryLimit(t *testing.T) {
	tests := []struct {
		name  string
		grant func([]string) []string
		rs    rsOptions
		// most authorizations for two requests
		max int
	}{
		{
			// conformance auth/scope-retry-limit: the server refuses a
			// token that has the scope it asks for.
			name: "scope granted, still refused",
			rs: rsOptions{headerPRM: true, scope: "mcp:admin", alwaysDeny: true,
				need: func(string) []string { return []string{"mcp:admin"} }},
			max: 1,
		},
		{
			// The authorization server grants less than asked: one
			// step-up, then the client remembers it failed.
			name:  "scope never granted",
			grant: func([]string) []string { return nil },
			rs: rsOptions{headerPRM: true, need: func(body string) []string {
				return []string{"mcp:admin"}
			}},
			max: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t, asOptions{grant: tt.grant})
			rs := newResourceServer(t, as, tt.rs)
			tr := oauthclient.NewTransport(baseConfig(t), nil)
			for i := range 2 {
				_, _, err := post(t, tr, rs.url(), "tools/call")
				if !errors.Is(err, oauthclient.ErrStepUpRefused) {
					t.Fatalf("request %d: err = %v, want ErrStepUpRefused", i, err)
				}
			}
			if a, _, _ := as.counts(); a > tt.max {
				t.Errorf("%d authorizations, want at most %d", a, tt.max)
			}
			rs.mu.Lock()
			n := len(rs.requests)
			rs.mu.Unlock()
			if n > 6 {
				t.Errorf("%d requests to the server for two calls: the client loops", n)
			}
		})
	}
}

func TestClientCredentials(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	tests := []struct {
		name  string
		as    asOptions
		cfg   func(c *oauthclient.Config)
		check func(t *testing.T, tc tokenCall)
	}{
		{
			name: "client-credentials-basic",
			as:   asOptions{grantTypes: []string{"client_credentials"}, authMethods: []string{"client_secret_basic"}},
			cfg:  func(c *oauthclient.Config) { c.ClientSecret = "conformance-test-secret" },
			check: func(t *testing.T, tc tokenCall) {
				if !strings.HasPrefix(tc.basic, "Basic ") {
					t.Errorf("no Basic authentication")
				}
			},
		},
		{
			name: "client-credentials-jwt",
			as:   asOptions{grantTypes: []string{"client_credentials"}, authMethods: []string{"private_key_jwt"}, jwtKey: &key.PublicKey},
			cfg:  func(c *oauthclient.Config) { c.PrivateKeyPEM, c.SigningAlgorithm = keyPEM, "ES256" },
			check: func(t *testing.T, tc tokenCall) {
				if tc.form.Get("client_assertion") == "" || tc.basic != "" {
					t.Errorf("no client assertion: %v", tc.form)
				}
			},
		},
		{
			name: "client-credentials-jwt, algorithm from the key",
			as:   asOptions{grantTypes: []string{"client_credentials"}, authMethods: []string{"private_key_jwt"}, jwtKey: &key.PublicKey},
			cfg:  func(c *oauthclient.Config) { c.PrivateKeyPEM = keyPEM },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			as := newAuthServer(t, tt.as)
			as.preRegister("conformance-test-client", "conformance-test-secret")
			rs := newResourceServer(t, as, rsOptions{})
			cfg := oauthclient.Config{GrantType: oauthclient.GrantClientCredentials, ClientID: "conformance-test-client"}
			log, logs := testLogger(t)
			cfg.Logger = log
			tt.cfg(&cfg)
			tr := oauthclient.NewTransport(cfg, nil)
			if _, status, err := post(t, tr, rs.url(), "x"); err != nil || status != 200 {
				t.Fatalf("%d %v", status, err)
			}
			tc := as.lastToken()
			if tc.form.Get("grant_type") != "client_credentials" || tc.form.Get("resource") != rs.url() {
				t.Errorf("token request %v", tc.form)
			}
			if tt.check != nil {
				tt.check(t, tc)
			}
			assertNoSecretsLogged(t, logs.String(), as)
		})
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  oauthclient.Config
		want string
	}{
		{"client credentials without id", oauthclient.Config{GrantType: oauthclient.GrantClientCredentials}, "needs Config.ClientID"},
		{"client credentials without secret", oauthclient.Config{GrantType: oauthclient.GrantClientCredentials, ClientID: "x"}, "ClientSecret or Config.PrivateKeyPEM"},
		{"unknown grant", oauthclient.Config{GrantType: "password"}, "GrantType"},
		{"bad key", oauthclient.Config{PrivateKeyPEM: "not pem"}, "no PEM block"},
		{"http metadata document", oauthclient.Config{ClientMetadataURL: "http://client.example/m.json"}, "https URL with a path"},
		{"unknown auth method", oauthclient.Config{TokenEndpointAuthMethod: "tls_client_auth"}, "not supported"},
		{"jwt bearer without assertion", oauthclient.Config{GrantType: oauthclient.GrantJWTBearer, ClientID: "x", ClientSecret: "y"}, "the JWT bearer grant needs Config.Assertion"},
		{"jwt bearer without client id", oauthclient.Config{GrantType: oauthclient.GrantJWTBearer, Assertion: func(context.Context, oauthclient.AssertionRequest) (string, error) { return "a", nil }}, "the JWT bearer grant needs Config.ClientID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := oauthclient.NewTransport(tt.cfg, nil)
			req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:9/mcp", nil)
			_, err := tr.RoundTrip(req)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, oauthclient.ErrAuthorization) {
				t.Errorf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNoAuthorizeHook(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as, rsOptions{})
	_, _, err := post(t, oauthclient.NewTransport(oauthclient.Config{}, nil), rs.url(), "x")
	if !errors.Is(err, oauthclient.ErrAuthorization) || !strings.Contains(err.Error(), "Config.Authorize") {
		t.Errorf("err = %v", err)
	}
}

// clock is a settable time source.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestRefresh(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		clk := &clock{now: time.Now()}
		as := newAuthServer(t, asOptions{refresh: true, expiresIn: 600})
		as.now = clk.Now
		rs := newResourceServer(t, as, rsOptions{})
		cfg := baseConfig(t)
		cfg.Now = clk.Now
		tr := oauthclient.NewTransport(cfg, nil)
		if _, status, err := post(t, tr, rs.url(), "1"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		clk.advance(time.Hour)
		if _, status, err := post(t, tr, rs.url(), "2"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		a, _, _ := as.counts()
		tc := as.lastToken()
		if a != 1 || tc.form.Get("grant_type") != "refresh_token" || tc.form.Get("resource") != rs.url() {
			t.Errorf("authorizations %d, last token request %v; want one authorization and a refresh with the resource", a, tc.form)
		}
		// The server only saw valid tokens after the first 401.
		for i, h := range rs.authorizations()[1:] {
			if h == "" {
				t.Errorf("request %d went without a token", i+1)
			}
		}
	})
	t.Run("revoked: 401 with a token", func(t *testing.T) {
		as := newAuthServer(t, asOptions{refresh: true})
		rs := newResourceServer(t, as, rsOptions{headerPRM: true})
		tr := oauthclient.NewTransport(baseConfig(t), nil)
		if _, status, err := post(t, tr, rs.url(), "1"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		as.revokeAll()
		if _, status, err := post(t, tr, rs.url(), "2"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		if a, _, _ := as.counts(); a != 1 || as.lastToken().form.Get("grant_type") != "refresh_token" {
			t.Errorf("authorizations %d, last grant %q; want the refresh to suffice", a, as.lastToken().form.Get("grant_type"))
		}
	})
	t.Run("refresh token refused: authorize again", func(t *testing.T) {
		clk := &clock{now: time.Now()}
		as := newAuthServer(t, asOptions{refresh: true, expiresIn: 600})
		as.now = clk.Now
		rs := newResourceServer(t, as, rsOptions{})
		cfg := baseConfig(t)
		cfg.Now = clk.Now
		tr := oauthclient.NewTransport(cfg, nil)
		if _, status, err := post(t, tr, rs.url(), "1"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		as.mu.Lock()
		clear(as.refreshTokens)
		as.mu.Unlock()
		clk.advance(time.Hour)
		if _, status, err := post(t, tr, rs.url(), "2"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		if a, _, _ := as.counts(); a != 2 {
			t.Errorf("%d authorizations, want 2", a)
		}
	})
}

// TestConcurrentRequestsShareOneAcquisition: many requests that all need
// a token cause one authorization, and after expiry one refresh.
func TestConcurrentRequestsShareOneAcquisition(t *testing.T) {
	clk := &clock{now: time.Now()}
	as := newAuthServer(t, asOptions{refresh: true, expiresIn: 600})
	as.now = clk.Now
	rs := newResourceServer(t, as, rsOptions{headerPRM: true})
	cfg := baseConfig(t)
	cfg.Now = clk.Now
	var authorizeCalls atomic.Int32
	follow := oauthclient.FollowRedirect(nil)
	cfg.Authorize = func(ctx context.Context, u string) (string, error) {
		authorizeCalls.Add(1)
		time.Sleep(20 * time.Millisecond) // let the others pile up
		return follow(ctx, u)
	}
	tr := oauthclient.NewTransport(cfg, nil)
	run := func() {
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				if _, status, err := post(t, tr, rs.url(), strings.Repeat("x", i)); err != nil || status != 200 {
					t.Errorf("request %d: %d %v", i, status, err)
				}
			})
		}
		wg.Wait()
	}
	run()
	if n := authorizeCalls.Load(); n != 1 {
		t.Errorf("%d authorizations for 20 concurrent requests, want 1", n)
	}
	_, before, _ := as.counts()
	clk.advance(time.Hour)
	run()
	_, after, _ := as.counts()
	if after-before != 1 {
		t.Errorf("%d token requests after expiry, want 1 shared refresh", after-before)
	}
	if n := authorizeCalls.Load(); n != 1 {
		t.Errorf("%d authorizations in all, want 1", n)
	}
}

func TestBodyNotReplayable(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as, rsOptions{})
	tr := oauthclient.NewTransport(baseConfig(t), nil)
	req, _ := http.NewRequest(http.MethodPost, rs.url(), io.NopCloser(strings.NewReader("body")))
	if req.GetBody != nil {
		t.Fatal("test needs a request without GetBody")
	}
	_, err := (&http.Client{Transport: tr}).Do(req)
	if !errors.Is(err, oauthclient.ErrBodyNotReplayable) {
		t.Errorf("err = %v, want ErrBodyNotReplayable", err)
	}
	if a, _, _ := as.counts(); a != 0 {
		t.Errorf("authorized for a request that cannot be sent again")
	}
}

// TestTokenStaysWithItsOrigin: the token is never sent to another
// server, whether the request goes there directly or by redirect.
func TestTokenStaysWithItsOrigin(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := r.Header.Get("Authorization"); h != "" {
			leaked.Store(h)
		}
		io.WriteString(w, "other")
	}))
	defer other.Close()
	as := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as, rsOptions{extraHandler: func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/away" {
			http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
			return true
		}
		return false
	}})
	for _, pinned := range []bool{false, true} {
		cfg := baseConfig(t)
		if pinned {
			cfg.ServerURL = rs.url()
		}
		tr := oauthclient.NewTransport(cfg, nil)
		if _, status, err := post(t, tr, rs.url(), "x"); err != nil || status != 200 {
			t.Fatalf("%d %v", status, err)
		}
		if body, _, err := post(t, tr, rs.srv.URL+"/away", "y"); err != nil || body != "other" {
			t.Fatalf("redirect: %q %v", body, err)
		}
		if body, _, err := post(t, tr, other.URL+"/direct", "z"); err != nil || body != "other" {
			t.Fatalf("direct: %q %v", body, err)
		}
		if v := leaked.Load(); v != nil {
			t.Fatalf("pinned=%v: the token went to another origin: %v", pinned, v)
		}
	}
}

func TestFileStoreKeepsTokensAcrossRuns(t *testing.T) {
	as := newAuthServer(t, asOptions{refresh: true})
	rs := newResourceServer(t, as, rsOptions{})
	store := oauthclient.NewFileStore(t.TempDir() + "/state/tokens.json")
	cfg := baseConfig(t)
	cfg.Store = store
	if _, status, err := post(t, oauthclient.NewTransport(cfg, nil), rs.url(), "1"); err != nil || status != 200 {
		t.Fatalf("%d %v", status, err)
	}
	// A new Transport (a new run) uses the stored token.
	if _, status, err := post(t, oauthclient.NewTransport(cfg, nil), rs.url(), "2"); err != nil || status != 200 {
		t.Fatalf("%d %v", status, err)
	}
	if a, _, _ := as.counts(); a != 1 {
		t.Errorf("%d authorizations, want 1: the stored token was not used", a)
	}
	// After revocation the stored refresh token (and the registered
	// client's secret) still work without the user.
	as.revokeAll()
	if _, status, err := post(t, oauthclient.NewTransport(cfg, nil), rs.url(), "3"); err != nil || status != 200 {
		t.Fatalf("%d %v", status, err)
	}
	if a, _, _ := as.counts(); a != 1 || as.lastToken().form.Get("grant_type") != "refresh_token" {
		t.Errorf("%d authorizations, last grant %q; want a refresh from the stored token", a, as.lastToken().form.Get("grant_type"))
	}
}

// TestOtherChallengesPassThrough: a 401 that offers only Basic is not
// this client's business; the caller gets it unchanged.
func TestOtherChallengesPassThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		w.WriteHeader(401)
	}))
	defer srv.Close()
	_, status, err := post(t, oauthclient.NewTransport(baseConfig(t), nil), srv.URL, "x")
	if err != nil || status != 401 {
		t.Errorf("%d %v, want the 401", status, err)
	}
}

func TestTokenRefusedAfterAuthorization(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	// The resource server accepts no token at all.
	rs := newResourceServer(t, as, rsOptions{prmResource: ""})
	rs.opts.extraHandler = func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/mcp" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(401)
		return true
	}
	_, _, err := post(t, oauthclient.NewTransport(baseConfig(t), nil), rs.url(), "x")
	if !errors.Is(err, oauthclient.ErrAuthorization) || !strings.Contains(err.Error(), "refused the access token") {
		t.Errorf("err = %v", err)
	}
	if a, _, _ := as.counts(); a != 1 {
		t.Errorf("%d authorizations, want 1 (no loop)", a)
	}
}

func TestTokenDoesNotPrintSecrets(t *testing.T) {
	tok := &oauthclient.Token{AccessToken: "AT-secret", RefreshToken: "RT-secret", ClientSecret: "CS-secret", Scopes: []string{"a"}}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("t", "token", tok)
	for _, s := range []string{tok.String(), tok.GoString(), buf.String()} {
		if strings.Contains(s, "secret") {
			t.Errorf("printed secrets: %s", s)
		}
	}
	// But the JSON for a store keeps them.
	data, _ := json.Marshal(tok)
	if !strings.Contains(string(data), "RT-secret") {
		t.Errorf("the stored form lost the refresh token: %s", data)
	}
}

// TestAuthorizeHookFailure: the user agent step failing (here: the user
// gave up, the context ended) is reported with its cause, and concurrent
// requests waiting for that sign-in get the failure too instead of each
// starting another.
func TestAuthorizeHookFailure(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as, rsOptions{headerPRM: true})
	var calls atomic.Int32
	cfg := baseConfig(t)
	cfg.Authorize = func(ctx context.Context, _ string) (string, error) {
		calls.Add(1)
		time.Sleep(20 * time.Millisecond)
		return "", errors.New("the user closed the browser")
	}
	tr := oauthclient.NewTransport(cfg, nil)
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			_, _, err := post(t, tr, rs.url(), "x")
			if !errors.Is(err, oauthclient.ErrAuthorization) || !strings.Contains(err.Error(), "the user closed the browser") {
				t.Errorf("err = %v", err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n > 2 {
		t.Errorf("%d sign-ins for 5 concurrent requests; the failure should be shared", n)
	}

	// A request whose context ends while it waits gives up alone.
	cfg.Authorize = func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	tr = oauthclient.NewTransport(cfg, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rs.url(), strings.NewReader("x"))
	_, err := (&http.Client{Transport: tr}).Do(req)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, oauthclient.ErrAuthorization) {
		t.Errorf("err = %v, want the deadline, as an authorization error", err)
	}
}

// TestPrivateKeyTypes: the signing algorithm follows the key unless set,
// and a key that cannot sign the chosen algorithm is a configuration
// error.
func TestPrivateKeyTypes(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	pkcs8 := func(k any) string {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	}
	ecDER, _ := x509.MarshalECPrivateKey(ecKey)
	tests := []struct {
		name, pem, alg string
		ok             bool
	}{
		{"RSA PKCS#1", string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)})), "", true},
		{"RSA PS256", pkcs8(rsaKey), "PS256", true},
		{"Ed25519", pkcs8(edKey), "", true},
		{"EC P-384 SEC 1", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER})), "", true},
		{"RSA key, ES256", pkcs8(rsaKey), "ES256", false},
		{"unknown algorithm", pkcs8(rsaKey), "XX999", false},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := oauthclient.NewTransport(oauthclient.Config{GrantType: oauthclient.GrantClientCredentials, ClientID: "c", PrivateKeyPEM: tt.pem, SigningAlgorithm: tt.alg}, nil)
			_, _, err := post(t, tr, srv.URL, "")
			if (err == nil) != tt.ok {
				t.Errorf("err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
