package oauthclient_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// Enterprise-managed authorization (SEP-990): the client exchanges the
// user's ID token at the enterprise IdP for an ID-JAG (RFC 8693), and
// presents it at the MCP server's authorization server in the JWT bearer
// grant (RFC 7523).

const (
	testIDToken      = "user-id-token.eyJzdWIiOiJhbGljZSJ9.sig"
	idpClientID      = "mcp-app"
	idpClientSecret  = "idp secret/+"
	asClientID       = "mcp-app-at-the-as"
	asClientSecret   = "as secret/+"
	jwtBearerGrant   = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenExchange    = "urn:ietf:params:oauth:grant-type:token-exchange"
	idJAGType        = "urn:ietf:params:oauth:token-type:id-jag"
	idTokenType      = "urn:ietf:params:oauth:token-type:id_token"
	idpUserSubject   = "alice@example.com"
	idpRefusalDetail = "the user is not assigned to this application"
)

type idpOptions struct {
	clientSecret string // expect client_secret_basic with it; empty: client_id in the form
	refuse       bool   // answer 400 invalid_grant
	issuedType   string // issued_token_type to answer; default the ID-JAG type
}

// fakeIdP is an enterprise IdP's token endpoint doing token exchange.
type fakeIdP struct {
	t    *testing.T
	srv  *httptest.Server
	key  *ecdsa.PrivateKey
	opts idpOptions

	mu       sync.Mutex
	resource string // the resource the exchange must name
	audience string // the audience it must name
	calls    []url.Values
	basic    []string
	jags     []string
}

func newFakeIdP(t *testing.T, o idpOptions) *fakeIdP {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	idp := &fakeIdP{t: t, key: key, opts: o}
	idp.srv = httptest.NewServer(http.HandlerFunc(idp.serve))
	t.Cleanup(idp.srv.Close)
	return idp
}

func (idp *fakeIdP) tokenEndpoint() string { return idp.srv.URL + "/oauth2/token" }

func (idp *fakeIdP) expect(audience, resource string) {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.audience, idp.resource = audience, resource
}

func (idp *fakeIdP) callCount() int {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return len(idp.calls)
}

func (idp *fakeIdP) lastCall() url.Values {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	if len(idp.calls) == 0 {
		return nil
	}
	return idp.calls[len(idp.calls)-1]
}

func (idp *fakeIdP) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/oauth2/token" {
		http.NotFound(w, r)
		return
	}
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	form := r.PostForm
	idp.mu.Lock()
	defer idp.mu.Unlock()
	idp.calls = append(idp.calls, form)
	idp.basic = append(idp.basic, r.Header.Get("Authorization"))

	// Client authentication.
	if idp.opts.clientSecret != "" {
		user, pass, ok := r.BasicAuth()
		id, _ := url.QueryUnescape(user)
		secret, _ := url.QueryUnescape(pass)
		if !ok || id != idpClientID || secret != idp.opts.clientSecret || form.Has("client_secret") {
			idp.t.Errorf("IdP: client authentication %q/%v, want client_secret_basic", user, form)
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
	} else if _, _, ok := r.BasicAuth(); ok || form.Get("client_id") != idpClientID {
		idp.t.Errorf("IdP: want client_id %q in the form and no Basic authentication: %v", idpClientID, form)
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	for k, want := range map[string]string{
		"grant_type":           tokenExchange,
		"requested_token_type": idJAGType,
		"subject_token":        testIDToken,
		"subject_token_type":   idTokenType,
		"audience":             idp.audience,
		"resource":             idp.resource,
	} {
		if got := form.Get(k); got != want {
			idp.t.Errorf("IdP: %s = %q, want %q", k, got, want)
			writeJSON(w, 400, map[string]string{"error": "invalid_request", "error_description": "bad " + k})
			return
		}
	}
	if form.Has("scope") && form.Get("scope") == "" {
		idp.t.Errorf("IdP: empty scope parameter")
	}
	if idp.opts.refuse {
		writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": idpRefusalDetail})
		return
	}
	now := time.Now()
	b := jwt.NewBuilder().
		Issuer(idp.srv.URL).
		Subject(idpUserSubject).
		Audience([]string{form.Get("audience")}).
		IssuedAt(now).
		Expiration(now.Add(5*time.Minute)).
		JwtID(fmt.Sprintf("jag-%d", len(idp.calls))).
		Claim("resource", form.Get("resource")).
		Claim("client_id", asClientID)
	if s := form.Get("scope"); s != "" {
		b = b.Claim("scope", s)
	}
	tok, err := b.Build()
	if err != nil {
		idp.t.Fatal(err)
	}
	hdr := jws.NewHeaders()
	hdr.Set(jws.TypeKey, "oauth-id-jag+jwt")
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), idp.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		idp.t.Fatal(err)
	}
	idp.jags = append(idp.jags, string(signed))
	issued := idp.opts.issuedType
	if issued == "" {
		issued = idJAGType
	}
	writeJSON(w, 200, map[string]any{"issued_token_type": issued, "access_token": string(signed), "token_type": "N_A", "expires_in": 300})
}

// secrets are what must appear in no log and no error message.
func (idp *fakeIdP) secrets() []string {
	idp.mu.Lock()
	defer idp.mu.Unlock()
	return append([]string{testIDToken, idpClientSecret, asClientSecret}, idp.jags...)
}

// enterpriseSetup wires an IdP, an authorization server trusting it and
// an MCP server, and returns a JWT bearer Config for them.
func enterpriseSetup(t *testing.T, ao asOptions, io idpOptions, ro rsOptions) (*fakeIdP, *authServer, *resourceServer, oauthclient.Config, *syncBuffer) {
	t.Helper()
	idp := newFakeIdP(t, io)
	ao.idpKey = &idp.key.PublicKey
	if ao.authMethods == nil {
		ao.authMethods = []string{"client_secret_basic"}
	}
	if ao.grantTypes == nil {
		ao.grantTypes = []string{"authorization_code", jwtBearerGrant}
	}
	ao.noDCR = true
	ao.trap = append(ao.trap, "/authorize", "/register")
	as := newAuthServer(t, ao)
	as.preRegister(asClientID, asClientSecret)
	rs := newResourceServer(t, as, ro)
	as.mu.Lock()
	as.jagResource = rs.url()
	as.mu.Unlock()
	idp.expect(as.issuer(), rs.url())
	x := &oauthclient.TokenExchange{
		TokenEndpoint: idp.tokenEndpoint(),
		ClientID:      idpClientID,
		ClientSecret:  io.clientSecret,
		SubjectToken:  testIDToken,
	}
	log, logs := testLogger(t)
	cfg := oauthclient.Config{
		GrantType:    oauthclient.GrantJWTBearer,
		ClientID:     asClientID,
		ClientSecret: asClientSecret,
		Assertion:    x.Assertion(),
		Logger:       log,
	}
	return idp, as, rs, cfg, logs
}

func assertNoEnterpriseSecrets(t *testing.T, where, text string, idp *fakeIdP) {
	t.Helper()
	for _, s := range idp.secrets() {
		if strings.Contains(text, s) || strings.Contains(text, url.QueryEscape(s)) {
			t.Errorf("%s contains the secret %q:\n%s", where, s, text)
		}
	}
}

func TestEnterpriseManagedAuthorization(t *testing.T) {
	tests := []struct {
		name string
		as   asOptions
		idp  idpOptions
		rs   rsOptions
		// wantErr: the call fails with an authorization error containing it
		wantErr string
		check   func(t *testing.T, idp *fakeIdP, as *authServer, rs *resourceServer)
	}{
		{
			name: "confidential client at the IdP",
			idp:  idpOptions{clientSecret: idpClientSecret},
			rs:   rsOptions{headerPRM: true},
			check: func(t *testing.T, idp *fakeIdP, as *authServer, rs *resourceServer) {
				if q := idp.lastCall(); q.Has("client_id") || q.Has("scope") {
					t.Errorf("IdP form %v: want neither client_id (Basic authentication) nor scope (none named)", q)
				}
				tc := as.lastToken()
				if tc.form.Has("scope") {
					t.Errorf("scope %q requested though nothing names one", tc.form.Get("scope"))
				}
			},
		},
		{
			name: "public client at the IdP, scopes from the resource metadata",
			rs:   rsOptions{prmScopes: []string{"mcp:read", "mcp:write"}, need: func(string) []string { return []string{"mcp:read"} }},
			check: func(t *testing.T, idp *fakeIdP, as *authServer, rs *resourceServer) {
				if got := idp.lastCall().Get("scope"); got != "mcp:read mcp:write" {
					t.Errorf("IdP scope = %q, want mcp:read mcp:write", got)
				}
				if got := as.lastToken().form.Get("scope"); got != "mcp:read mcp:write" {
					t.Errorf("AS scope = %q, want mcp:read mcp:write", got)
				}
			},
		},
		{
			name: "authorization server without grant_types_supported",
			as:   asOptions{grantTypes: []string{}},
		},
		{
			name:    "IdP refuses the exchange",
			idp:     idpOptions{clientSecret: idpClientSecret, refuse: true},
			wantErr: "invalid_grant (" + idpRefusalDetail + ")",
			check: func(t *testing.T, idp *fakeIdP, as *authServer, _ *resourceServer) {
				if _, tok, _ := as.counts(); tok != 0 {
					t.Errorf("%d token requests at the authorization server without an ID-JAG", tok)
				}
			},
		},
		{
			name:    "IdP issues another token type",
			idp:     idpOptions{issuedType: "urn:ietf:params:oauth:token-type:access_token"},
			wantErr: "not an ID-JAG",
			check: func(t *testing.T, idp *fakeIdP, as *authServer, _ *resourceServer) {
				if _, tok, _ := as.counts(); tok != 0 {
					t.Errorf("%d token requests at the authorization server with a token that is no ID-JAG", tok)
				}
			},
		},
		{
			name:    "authorization server without the JWT bearer grant",
			as:      asOptions{grantTypes: []string{"authorization_code", "client_credentials"}},
			wantErr: "does not support the JWT bearer grant",
			check: func(t *testing.T, idp *fakeIdP, as *authServer, _ *resourceServer) {
				if n := idp.callCount(); n != 0 {
					t.Errorf("%d token exchanges at the IdP for an authorization server that cannot take the ID-JAG", n)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp, as, rs, cfg, logs := enterpriseSetup(t, tt.as, tt.idp, tt.rs)
			tr := oauthclient.NewTransport(cfg, nil)
			body, status, err := post(t, tr, rs.url(), "tools/list")
			if tt.wantErr != "" {
				if !errors.Is(err, oauthclient.ErrAuthorization) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an authorization error with %q", err, tt.wantErr)
				}
				assertNoEnterpriseSecrets(t, "the error", err.Error(), idp)
			} else {
				if err != nil || status != 200 || body != "ok:tools/list" {
					t.Fatalf("answer %d %q %v; want 200 and the body echoed", status, body, err)
				}
				// One exchange, one JWT bearer grant, no user, no PKCE, no
				// registration.
				a, tok, reg := as.counts()
				if n := idp.callCount(); n != 1 || a != 0 || tok != 1 || reg != 0 {
					t.Errorf("exchanges, authorizations, token requests, registrations = %d, %d, %d, %d; want 1, 0, 1, 0", n, a, tok, reg)
				}
				tc := as.lastToken()
				if tc.form.Get("grant_type") != jwtBearerGrant || tc.form.Get("resource") != rs.url() || tc.form.Get("assertion") == "" {
					t.Errorf("token request %v", tc.form)
				}
				if !strings.HasPrefix(tc.basic, "Basic ") || tc.form.Has("client_secret") || tc.form.Has("code_verifier") || tc.form.Has("redirect_uri") {
					t.Errorf("token request %v (Authorization %q); want client_secret_basic and nothing of the code flow", tc.form, tc.basic)
				}
				as.mu.Lock()
				subjects := as.jagSubjects
				as.mu.Unlock()
				if len(subjects) != 1 || subjects[0] != idpUserSubject {
					t.Errorf("accepted ID-JAG subjects %q", subjects)
				}
				// The token reached the MCP server, and is reused.
				if _, status, err := post(t, tr, rs.url(), "again"); err != nil || status != 200 {
					t.Fatalf("second request: %d %v", status, err)
				}
				authz := rs.authorizations()
				if last := authz[len(authz)-1]; !strings.HasPrefix(last, "Bearer access-") {
					t.Errorf("the MCP server got Authorization %q", last)
				}
				if n := idp.callCount(); n != 1 {
					t.Errorf("%d exchanges for two requests, want 1", n)
				}
			}
			if tt.check != nil {
				tt.check(t, idp, as, rs)
			}
			assertNoSecretsLogged(t, logs.String(), as)
			assertNoEnterpriseSecrets(t, "the logs", logs.String(), idp)
		})
	}
}

// TestJWTBearerNewAssertion: without a refresh token, an expired or
// refused token is replaced with a new assertion from the IdP.
func TestJWTBearerNewAssertion(t *testing.T) {
	clk := &clock{now: time.Now()}
	idp, as, rs, cfg, logs := enterpriseSetup(t, asOptions{expiresIn: 600}, idpOptions{clientSecret: idpClientSecret}, rsOptions{})
	as.now = clk.Now
	cfg.Now = clk.Now
	tr := oauthclient.NewTransport(cfg, nil)
	steps := []struct {
		name   string
		before func()
		// exchanges at the IdP and requests the MCP server saw, in all,
		// after the step
		exchanges, requests int
	}{
		{name: "first: 401, then the token", exchanges: 1, requests: 2},
		{name: "expired: a new assertion before sending", before: func() { clk.advance(time.Hour) }, exchanges: 2, requests: 3},
		{name: "revoked: 401, a new assertion", before: as.revokeAll, exchanges: 3, requests: 5},
		{name: "valid: reused", exchanges: 3, requests: 6},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		if _, status, err := post(t, tr, rs.url(), "x"); err != nil || status != 200 {
			t.Fatalf("%s: %d %v", st.name, status, err)
		}
		if n := idp.callCount(); n != st.exchanges {
			t.Errorf("%s: %d exchanges at the IdP, want %d", st.name, n, st.exchanges)
		}
		if _, tok, _ := as.counts(); tok != st.exchanges {
			t.Errorf("%s: %d token requests, want %d", st.name, tok, st.exchanges)
		}
		if n := len(rs.authorizations()); n != st.requests {
			t.Errorf("%s: the MCP server saw %d requests, want %d", st.name, n, st.requests)
		}
		if g := as.lastToken().form.Get("grant_type"); g != jwtBearerGrant {
			t.Errorf("%s: last grant %q", st.name, g)
		}
	}
	// Every ID-JAG was used once: a new one each time.
	as.mu.Lock()
	seen := map[string]bool{}
	for _, tc := range as.tokenCalls {
		a := tc.form.Get("assertion")
		if seen[a] {
			t.Errorf("an assertion was presented twice")
		}
		seen[a] = true
	}
	as.mu.Unlock()
	assertNoSecretsLogged(t, logs.String(), as)
	assertNoEnterpriseSecrets(t, "the logs", logs.String(), idp)
}

// TestJWTBearerStepUp: 403 insufficient_scope asks the IdP for a new
// ID-JAG with the union of the scopes, as for client credentials.
func TestJWTBearerStepUp(t *testing.T) {
	idp, as, rs, cfg, _ := enterpriseSetup(t, asOptions{}, idpOptions{}, rsOptions{headerPRM: true, scope: "mcp:basic", need: func(body string) []string {
		if strings.Contains(body, "tools/call") {
			return []string{"mcp:write"}
		}
		return []string{"mcp:basic"}
	}})
	tr := oauthclient.NewTransport(cfg, nil)
	if _, status, err := post(t, tr, rs.url(), "tools/list"); err != nil || status != 200 {
		t.Fatalf("tools/list: %d %v", status, err)
	}
	if got := idp.lastCall().Get("scope"); got != "mcp:basic" {
		t.Errorf("first exchange scope = %q, want mcp:basic", got)
	}
	if body, status, err := post(t, tr, rs.url(), "tools/call"); err != nil || status != 200 || body != "ok:tools/call" {
		t.Fatalf("tools/call: %d %q %v", status, body, err)
	}
	if got := idp.lastCall().Get("scope"); got != "mcp:basic mcp:write" {
		t.Errorf("step-up exchange scope = %q, want mcp:basic mcp:write", got)
	}
	if got := as.lastToken().form.Get("scope"); got != "mcp:basic mcp:write" {
		t.Errorf("step-up token scope = %q, want mcp:basic mcp:write", got)
	}
	if n := idp.callCount(); n != 2 {
		t.Errorf("%d exchanges, want 2", n)
	}
}

// TestTokenExchangeMisconfigured: a TokenExchange that cannot work says
// why, without calling anything.
func TestTokenExchangeMisconfigured(t *testing.T) {
	req := oauthclient.AssertionRequest{Issuer: "https://as.example.com", TokenEndpoint: "https://as.example.com/token", Resource: "https://mcp.example.com/mcp"}
	tests := []struct {
		name string
		x    oauthclient.TokenExchange
		req  oauthclient.AssertionRequest
		want string
	}{
		{"no endpoint", oauthclient.TokenExchange{ClientID: "c", SubjectToken: testIDToken}, req, "TokenExchange.TokenEndpoint"},
		{"no client", oauthclient.TokenExchange{TokenEndpoint: "https://idp.example.com/token", SubjectToken: testIDToken}, req, "TokenExchange.ClientID"},
		{"no subject token", oauthclient.TokenExchange{TokenEndpoint: "https://idp.example.com/token", ClientID: "c"}, req, "TokenExchange.SubjectToken"},
		{"plain http", oauthclient.TokenExchange{TokenEndpoint: "http://idp.example.com/token", ClientID: "c", SubjectToken: testIDToken}, req, "neither https nor http on a loopback host"},
		{"no audience", oauthclient.TokenExchange{TokenEndpoint: "https://idp.example.com/token", ClientID: "c", SubjectToken: testIDToken}, oauthclient.AssertionRequest{}, "issuer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.x.Assertion()(context.Background(), tt.req)
			if !errors.Is(err, oauthclient.ErrAuthorization) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want an authorization error mentioning %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), testIDToken) {
				t.Errorf("the error contains the ID token: %v", err)
			}
		})
	}
}
