package auth_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"

	"github.com/mcpgate/mcpgate/auth"
)

func oauthConfig(t *testing.T, iss *issuer, edit func(*auth.OAuthConfig)) func(string) auth.Config {
	return func(resource string) auth.Config {
		oc := auth.OAuthConfig{Issuer: iss.URL(), Resource: resource, RequiredScopes: []string{"mcp:read"}, ScopesSupported: []string{"mcp:read", "mcp:admin"}}
		if edit != nil {
			edit(&oc)
		}
		o, err := auth.NewOAuth(oc)
		if err != nil {
			t.Fatal(err)
		}
		return auth.Config{OAuth: o, MethodScopes: map[string][]string{"tools/call:delete_everything": {"mcp:admin"}}}
	}
}

// challengeParams parses the auth-params of a Bearer challenge.
func challengeParams(t *testing.T, h http.Header) map[string]string {
	t.Helper()
	for _, c := range h.Values("Www-Authenticate") {
		rest, ok := strings.CutPrefix(c, "Bearer ")
		if !ok {
			continue
		}
		out := map[string]string{}
		for _, kv := range strings.Split(rest, ", ") {
			k, v, _ := strings.Cut(kv, "=")
			out[k] = strings.Trim(v, `"`)
		}
		return out
	}
	t.Fatalf("no Bearer challenge in %q", h.Values("Www-Authenticate"))
	return nil
}

func TestOAuthRefusesBadTokens(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged, _ := jwk.Import(other)
	forged.Set(jwk.KeyIDKey, "key-1") // claims to be the issuer's key

	good := iss.token(t, p.resource, nil)
	parts := strings.Split(good, ".")
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), `"alice"`, `"admin"`, 1))) + "." + parts[2]
	unsigned := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "."

	tests := []struct {
		name         string
		authz        string
		invalidToken bool // the challenge says error="invalid_token"
	}{
		{"missing", "", false},
		{"empty bearer", "Bearer ", false},
		{"expired", bearer(iss.token(t, p.resource, func(c *claims) { c.exp = time.Now().Add(-time.Hour) })), true},
		{"wrong audience", bearer(iss.token(t, p.resource, func(c *claims) { c.aud = []string{"https://other.example/mcp"} })), true},
		{"audience of another path", bearer(iss.token(t, p.resource, func(c *claims) { c.aud = []string{p.srv.URL + "/other"} })), true},
		{"wrong issuer", bearer(iss.token(t, p.resource, func(c *claims) { c.iss = "https://evil.example" })), true},
		{"tampered payload", bearer(tampered), true},
		{"signed by another key", bearer(iss.token(t, p.resource, func(c *claims) { c.key = forged })), true},
		{"alg none", bearer(unsigned), true},
		{"no subject", bearer(iss.token(t, p.resource, func(c *claims) { c.sub = "" })), true},
		{"garbage", "Bearer not-a-jwt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := p.do(t, call{authz: tt.authz, body: initBody})
			if r.status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", r.status, r.body)
			}
			c := challengeParams(t, r.header)
			if c["resource_metadata"] != p.srv.URL+"/.well-known/oauth-protected-resource/mcp" {
				t.Errorf("resource_metadata = %q", c["resource_metadata"])
			}
			if c["scope"] != "mcp:read" {
				t.Errorf("scope = %q, want mcp:read", c["scope"])
			}
			if got := c["error"] == "invalid_token"; got != tt.invalidToken {
				t.Errorf("error = %q, want invalid_token: %v", c["error"], tt.invalidToken)
			}
			var body struct {
				Error struct {
					Code    int
					Message string
				}
			}
			if json.Unmarshal([]byte(r.body), &body) != nil || body.Error.Message == "" {
				t.Errorf("body is not a JSON-RPC error with a message: %s", r.body)
			}
			if r.session != "" {
				t.Error("a refused request created a session")
			}
		})
	}

	t.Run("token in the query string", func(t *testing.T) {
		r := p.do(t, call{path: "/mcp?access_token=" + good, body: initBody})
		if r.status != http.StatusBadRequest {
			t.Fatalf("status %d, want 400", r.status)
		}
		if c := challengeParams(t, r.header); c["error"] != "invalid_request" {
			t.Errorf("error = %q", c["error"])
		}
	})
}

func TestOAuthPrincipalReachesTools(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	tok := bearer(iss.token(t, p.resource, func(c *claims) { c.scope = "mcp:read profile" }))
	sid := p.open(t, tok)
	r := p.do(t, call{authz: tok, session: sid, body: toolCall("whoami")})
	if r.status != http.StatusOK || !strings.Contains(r.body, "oauth alice [mcp:read profile]") {
		t.Fatalf("whoami: %d %s", r.status, r.body)
	}
	// The scheme name is case-insensitive (RFC 9110).
	r = p.do(t, call{authz: "bearer " + strings.TrimPrefix(tok, "Bearer "), session: sid, body: toolCall("whoami")})
	if r.status != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", r.status, r.body)
	}
}

func TestOAuthSessionBoundToPrincipal(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	alice := bearer(iss.token(t, p.resource, nil))
	sid := p.open(t, alice)

	bob := bearer(iss.token(t, p.resource, func(c *claims) { c.sub = "bob" }))
	for _, c := range []call{
		{authz: bob, session: sid, body: toolCall("whoami")},
		{authz: bob, session: sid, method: http.MethodGet},
		{authz: bob, session: sid, method: http.MethodDelete},
	} {
		if r := p.do(t, c); r.status != http.StatusNotFound {
			t.Errorf("%s by another principal: %d, want 404", c.method, r.status)
		}
	}
	// A refreshed token of the same subject keeps the session.
	again := bearer(iss.token(t, p.resource, func(c *claims) { c.exp = time.Now().Add(2 * time.Hour) }))
	if r := p.do(t, call{authz: again, session: sid, body: toolCall("whoami")}); r.status != http.StatusOK {
		t.Fatalf("same subject, new token: %d %s", r.status, r.body)
	}
}

func TestOAuthKeyRotation(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	old := bearer(iss.token(t, p.resource, nil))
	p.open(t, old)
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("%d JWKS fetches for the first token, want 1", n)
	}
	p.open(t, old)
	if n := iss.fetches.Load(); n != 1 {
		t.Fatalf("keys fetched again (%d) although cached", n)
	}

	iss.rotate(t)
	fresh := bearer(iss.token(t, p.resource, nil))
	p.open(t, fresh) // an unknown key id fetches the keys again
	if n := iss.fetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after rotation, want 2", n)
	}
	if r := p.do(t, call{authz: old, body: initBody}); r.status != http.StatusUnauthorized {
		t.Fatalf("token of the retired key: %d, want 401", r.status)
	}

	// Tokens naming made-up key ids cannot make us hammer the issuer.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for i := range 5 {
		k, _ := jwk.Import(other)
		k.Set(jwk.KeyIDKey, "made-up-"+string(rune('a'+i)))
		tok := bearer(iss.token(t, p.resource, func(c *claims) { c.key = k }))
		if r := p.do(t, call{authz: tok, body: initBody}); r.status != http.StatusUnauthorized {
			t.Fatalf("made-up key: %d", r.status)
		}
	}
	if n := iss.fetches.Load(); n > 3 {
		t.Fatalf("%d JWKS fetches after 5 tokens with unknown key ids, want at most 3", n)
	}
}

func TestOAuthScopes(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))

	t.Run("required scope missing", func(t *testing.T) {
		tok := bearer(iss.token(t, p.resource, func(c *claims) { c.scope = "profile" }))
		r := p.do(t, call{authz: tok, body: initBody})
		if r.status != http.StatusForbidden {
			t.Fatalf("status %d, want 403", r.status)
		}
		c := challengeParams(t, r.header)
		if c["error"] != "insufficient_scope" || c["scope"] != "mcp:read" || c["resource_metadata"] == "" {
			t.Errorf("challenge %v", c)
		}
	})

	t.Run("tool needs more, then step-up", func(t *testing.T) {
		reader := bearer(iss.token(t, p.resource, nil))
		sid := p.open(t, reader)
		r := p.do(t, call{authz: reader, session: sid, body: toolCall("delete_everything")})
		if r.status != http.StatusForbidden {
			t.Fatalf("status %d, want 403: %s", r.status, r.body)
		}
		c := challengeParams(t, r.header)
		if c["error"] != "insufficient_scope" || c["scope"] != "mcp:read mcp:admin" {
			t.Errorf("challenge %v, want insufficient_scope for mcp:read mcp:admin", c)
		}
		if !strings.Contains(r.body, `"id":2`) || !strings.Contains(r.body, "mcp:admin") {
			t.Errorf("body %s does not answer the request or name the scope", r.body)
		}
		// Other tools still work in the session.
		if r := p.do(t, call{authz: reader, session: sid, body: toolCall("whoami")}); r.status != http.StatusOK {
			t.Fatalf("whoami: %d %s", r.status, r.body)
		}
		// The client asks for the scope and retries in the same session.
		admin := bearer(iss.token(t, p.resource, func(c *claims) { c.scope = "mcp:read mcp:admin" }))
		r = p.do(t, call{authz: admin, session: sid, body: toolCall("delete_everything")})
		if r.status != http.StatusOK || !strings.Contains(r.body, "deleted") {
			t.Fatalf("after step-up: %d %s", r.status, r.body)
		}
	})
}

func TestProtectedResourceMetadata(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r := p.do(t, call{method: http.MethodGet, path: path})
		if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", path, r.status, r.header.Get("Content-Type"))
		}
		var prm struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
			BearerMethods        []string `json:"bearer_methods_supported"`
		}
		if err := json.Unmarshal([]byte(r.body), &prm); err != nil {
			t.Fatal(err)
		}
		if prm.Resource != p.resource || len(prm.AuthorizationServers) != 1 || prm.AuthorizationServers[0] != iss.URL() ||
			strings.Join(prm.ScopesSupported, " ") != "mcp:read mcp:admin" || strings.Join(prm.BearerMethods, " ") != "header" {
			t.Errorf("%s: %+v", path, prm)
		}
	}
}

func TestOAuthExplicitJWKSURL(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, func(c *auth.OAuthConfig) { c.JWKSURL = iss.URL() + "/jwks" }))
	p.open(t, bearer(iss.token(t, p.resource, nil)))
}

func TestOAuthIssuerUnreachable(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	tok := bearer(iss.token(t, p.resource, nil))
	iss.srv.Close()
	r := p.do(t, call{authz: tok, body: initBody})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("status %d (Retry-After %q), want 503 with Retry-After: %s", r.status, r.header.Get("Retry-After"), r.body)
	}
}

func TestOAuthConfigErrors(t *testing.T) {
	for _, c := range []auth.OAuthConfig{
		{Resource: "https://mcp.example/mcp"},
		{Issuer: "https://as.example"},
		{Issuer: "https://as.example", Resource: "mcp.example/mcp"},
		{Issuer: "https://as.example", Resource: "https://mcp.example/mcp#frag"},
	} {
		if _, err := auth.NewOAuth(c); err == nil {
			t.Errorf("NewOAuth(%+v) accepted", c)
		}
	}
	if _, err := auth.New(auth.Config{}); err == nil {
		t.Error("auth.New with no methods accepted")
	}
}
