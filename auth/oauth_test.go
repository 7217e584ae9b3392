package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
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

const waitFor = 10 * time.Second // a bound on a hang, never a timing assertion

// answer runs do in the background, so that a test can tell a request
// that waits from one that is answered.
func (p *protected) answer(t *testing.T, c call) <-chan reply {
	ch := make(chan reply, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, p.srv.URL+"/mcp", strings.NewReader(c.body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", c.authz)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			ch <- reply{}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		ch <- reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
	}()
	return ch
}

// While the issuer's key endpoint hangs, tokens signed with a cached key
// verify at once; tokens naming a new key id wait for one fetch, made
// once for all of them, and verify when it returns.
func TestOAuthKnownKeysVerifyWhileAFetchHangs(t *testing.T) {
	iss := newIssuer(t)
	// No client timeout: a fetch lasts as long as the issuer makes it.
	p := newProtected(t, oauthConfig(t, iss, func(c *auth.OAuthConfig) { c.HTTPClient = &http.Client{} }))
	known := bearer(iss.token(t, p.resource, nil))
	p.open(t, known)

	release := iss.stall(t)
	newKey := iss.publishNew(t)
	var waiting []<-chan reply
	for range 4 {
		tok := bearer(iss.token(t, p.resource, func(c *claims) { c.key = newKey }))
		waiting = append(waiting, p.answer(t, call{authz: tok, body: initBody}))
	}
	for deadline := time.Now().Add(waitFor); iss.fetches.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a token with a new key id fetched no keys")
		}
	}
	for i := range 3 {
		select {
		case r := <-p.answer(t, call{authz: known, body: initBody}):
			if r.status != http.StatusOK {
				t.Fatalf("known key, request %d: %d %s", i, r.status, r.body)
			}
		case <-time.After(waitFor):
			t.Fatalf("a token signed with a cached key waited for the hanging key fetch")
		}
	}
	for i, ch := range waiting {
		select {
		case r := <-ch:
			t.Fatalf("new key id, request %d answered (%d) before the keys came: %s", i, r.status, r.body)
		default:
		}
	}
	release()
	for i, ch := range waiting {
		select {
		case r := <-ch:
			if r.status != http.StatusOK {
				t.Errorf("new key id, request %d: %d %s", i, r.status, r.body)
			}
		case <-time.After(waitFor):
			t.Fatalf("new key id, request %d: no answer after the keys came", i)
		}
	}
	if n := iss.fetches.Load(); n != 2 {
		t.Errorf("%d JWKS fetches, want 2: one at the start, one for the four tokens with the new key id", n)
	}
}

// A key endpoint that fails is retried with backoff, not on every
// request, whether there are no keys yet or cached keys are stale; the
// keys are fetched again once it is back.
func TestOAuthFailedKeyFetchesBackOff(t *testing.T) {
	const requests = 30
	for _, tt := range []struct {
		name          string
		fetchedBefore bool // keys were fetched before the endpoint broke
	}{
		{"no keys yet", false},
		{"stale keys", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			iss := newIssuer(t)
			p := newProtected(t, oauthConfig(t, iss, func(c *auth.OAuthConfig) {
				c.JWKSURL = iss.URL() + "/jwks"
				c.RefreshInterval = time.Nanosecond // always stale
			}))
			tok := bearer(iss.token(t, p.resource, nil))
			want := http.StatusServiceUnavailable
			if tt.fetchedBefore {
				p.open(t, tok)
				want = http.StatusOK // the stale keys still verify
			}
			before := iss.fetches.Load()
			iss.setBroken(true)
			for i := range requests {
				if r := p.do(t, call{authz: tok, body: initBody}); r.status != want {
					t.Fatalf("request %d: %d, want %d: %s", i, r.status, want, r.body)
				}
			}
			// The first failure waits a second before the next try: the
			// requests would have to take seconds for more than a few.
			if n := iss.fetches.Load() - before; n > 4 {
				t.Errorf("%d JWKS fetches for %d requests while it fails, want a few", n, requests)
			}
			iss.setBroken(false)
			ok := false
			for deadline := time.Now().Add(waitFor); !ok && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				ok = p.do(t, call{authz: tok, body: initBody}).status == http.StatusOK
			}
			if !ok {
				t.Fatal("the keys were not fetched again after the endpoint came back")
			}
		})
	}
}

// A bearer token over MaxTokenSize is refused without being parsed (no
// key fetch for its key id), and refusals never quote the JWT library.
func TestOAuthOversizedAndForgedTokensGetPlain401s(t *testing.T) {
	iss := newIssuer(t)
	p := newProtected(t, oauthConfig(t, iss, nil))
	huge := iss.token(t, p.resource, func(c *claims) {
		c.key = iss.publishNew(t) // an unknown key id would fetch keys
		c.extra = map[string]any{"padding": strings.Repeat("x", 20<<10)}
	})
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	forged, _ := jwk.Import(other)
	forged.Set(jwk.KeyIDKey, "key-1")
	for _, tt := range []struct {
		name, token, says string
		fetches           int32
	}{
		{"20 KiB token", huge, "larger than 16384 bytes", 0},
		{"forged signature", iss.token(t, p.resource, func(c *claims) { c.key = forged }), "invalid or expired", 1},
		{"expired", iss.token(t, p.resource, func(c *claims) { c.exp = time.Now().Add(-time.Hour) }), "invalid or expired", 1},
		{"garbage", "eyJhbGciOiJSUzI1NiJ9.e30.c2ln", "invalid or expired", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := p.do(t, call{authz: bearer(tt.token), body: initBody})
			if r.status != http.StatusUnauthorized || !strings.Contains(r.body, tt.says) {
				t.Errorf("%d %s, want 401 saying %q", r.status, r.body, tt.says)
			}
			for _, internal := range []string{"jws", "jwt", "jwk", "verify", "parse", "failed to"} {
				if strings.Contains(strings.ToLower(r.body), internal) {
					t.Errorf("the body quotes the library (%q): %s", internal, r.body)
				}
			}
			if n := iss.fetches.Load(); n != tt.fetches {
				t.Errorf("%d JWKS fetches so far, want %d", n, tt.fetches)
			}
		})
	}
}

// A principal carries the verified issuer, and claims only up to
// MaxClaimSize each and MaxClaimsSize together.
func TestOAuthPrincipalClaimsAreBounded(t *testing.T) {
	iss := newIssuer(t)
	const resource = "https://mcp.example/mcp"
	o, err := auth.NewOAuth(auth.OAuthConfig{Issuer: iss.URL(), Resource: resource})
	if err != nil {
		t.Fatal(err)
	}
	third := strings.Repeat("x", auth.MaxClaimsSize/3) // two fit with the small claims, not three
	for _, tt := range []struct {
		name      string
		extra     map[string]any
		leftOut   int // of the extra claims
		mustLeave []string
	}{
		{"one over MaxClaimSize", map[string]any{"huge": strings.Repeat("h", auth.MaxClaimSize)}, 1, []string{"huge"}},
		{"three that pass MaxClaimsSize together", map[string]any{"big1": third, "big2": third, "big3": third}, 1, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tok := iss.token(t, resource, func(c *claims) {
				c.extra = map[string]any{"tenant": "globex"}
				maps.Copy(c.extra, tt.extra)
			})
			p, err := o.Verify(context.Background(), tok)
			if err != nil {
				t.Fatal(err)
			}
			if p.Issuer != iss.URL() || p.Key() != `["oauth","`+iss.URL()+`","alice"]` {
				t.Errorf("issuer %q, key %s", p.Issuer, p.Key())
			}
			size, kept := 0, 0
			for k, v := range p.Claims {
				b, _ := json.Marshal(v)
				size += len(k) + len(b)
				if _, ok := tt.extra[k]; ok {
					kept++
				}
			}
			if size > auth.MaxClaimsSize || kept != len(tt.extra)-tt.leftOut {
				t.Errorf("%d bytes of claims, %d of %d extra ones kept", size, kept, len(tt.extra))
			}
			for _, k := range tt.mustLeave {
				if _, ok := p.Claims[k]; ok {
					t.Errorf("claim %q kept", k)
				}
			}
			for _, small := range []string{"iss", "sub", "aud", "exp", "iat", "scope", "tenant"} {
				if _, ok := p.Claims[small]; !ok {
					t.Errorf("claim %q left out", small)
				}
			}
			if !p.HasScope("mcp:read") {
				t.Errorf("scopes %v", p.Scopes)
			}
		})
	}
}
