package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The browser of the OAuth test: this test binary, started by mcpgate as
// $BROWSER with the authorization URL. It follows the redirects, as a
// browser would, to mcpgate's loopback callback.
func init() {
	if os.Getenv(fixtureEnv) != "browser" || len(os.Args) < 2 {
		return
	}
	resp, err := http.Get(os.Args[len(os.Args)-1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "browser:", err)
		os.Exit(1)
	}
	resp.Body.Close()
	os.Exit(0)
}

// testIssuer is a minimal OAuth authorization server: metadata, dynamic
// registration, an authorization endpoint that approves at once, a token
// endpoint that checks PKCE and issues ES256 JWTs (with rotating refresh
// tokens), refreshes them unless told to refuse, and serves the client
// credentials grant to one confidential client; and its JWKS.
type testIssuer struct {
	t   *testing.T
	srv *httptest.Server
	key *ecdsa.PrivateKey

	mu            sync.Mutex
	challenges    map[string]string // code → code_challenge
	refreshTokens map[string]string // live refresh token → the resource it is for
	authorized    int
	issued        int
	grants        map[string]int // token requests granted, by grant type
	secrets       []string       // every code, access and refresh token handed out
	ttl           time.Duration  // of access tokens; default an hour
	refuseRefresh bool           // as if the person revoked the grant
}

// Of the client credentials grant's one client.
const (
	serviceClientID     = "svc"
	serviceClientSecret = "svc-secret-a2f9"
)

func newTestIssuer(t *testing.T) *testIssuer {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{t: t, key: key, challenges: map[string]string{}, refreshTokens: map[string]string{}, grants: map[string]int{}, ttl: time.Hour}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", is.metadata)
	mux.HandleFunc("GET /.well-known/openid-configuration", is.metadata)
	mux.HandleFunc("GET /jwks", is.jwks)
	mux.HandleFunc("POST /register", is.register)
	mux.HandleFunc("GET /authorize", is.authorize)
	mux.HandleFunc("POST /token", is.token)
	is.srv = httptest.NewUnstartedServer(mux)
	is.srv.Start()
	t.Cleanup(is.srv.Close)
	return is
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (is *testIssuer) metadata(w http.ResponseWriter, r *http.Request) {
	u := is.srv.URL
	writeJSON(w, 200, map[string]any{
		"issuer":                                u,
		"authorization_endpoint":                u + "/authorize",
		"token_endpoint":                        u + "/token",
		"registration_endpoint":                 u + "/register",
		"jwks_uri":                              u + "/jwks",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic"},
	})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (is *testIssuer) jwks(w http.ResponseWriter, r *http.Request) {
	pub, err := is.key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		is.t.Error(err)
	}
	writeJSON(w, 200, map[string]any{"keys": []map[string]string{{
		"kty": "EC", "crv": "P-256", "kid": "k1", "alg": "ES256", "use": "sig",
		"x": b64(pub[1:33]), "y": b64(pub[33:]),
	}}})
}

func (is *testIssuer) register(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	writeJSON(w, 201, map[string]any{"client_id": "cli-1", "redirect_uris": req["redirect_uris"], "token_endpoint_auth_method": "none"})
}

func (is *testIssuer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ru, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("code_challenge_method") != "S256" || q.Get("client_id") != "cli-1" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	is.mu.Lock()
	is.authorized++
	code := fmt.Sprintf("code-%d-%s", is.authorized, b64(randomBytes(8)))
	is.challenges[code] = q.Get("code_challenge")
	is.secrets = append(is.secrets, code)
	is.mu.Unlock()
	rq := ru.Query()
	rq.Set("code", code)
	rq.Set("state", q.Get("state"))
	ru.RawQuery = rq.Encode()
	http.Redirect(w, r, ru.String(), http.StatusFound)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func (is *testIssuer) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	form := r.PostForm
	is.mu.Lock()
	defer is.mu.Unlock()
	grant := form.Get("grant_type")
	resource, sub, client := form.Get("resource"), "ada", "cli-1"
	switch grant {
	case "authorization_code":
		challenge, known := is.challenges[form.Get("code")]
		delete(is.challenges, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if !known || b64(sum[:]) != challenge || form.Get("client_id") != client {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant"})
			return
		}
	case "refresh_token":
		was, known := is.refreshTokens[form.Get("refresh_token")]
		if !known || is.refuseRefresh || form.Get("client_id") != client {
			writeJSON(w, 400, map[string]string{"error": "invalid_grant", "error_description": "the grant was revoked"})
			return
		}
		delete(is.refreshTokens, form.Get("refresh_token")) // rotated
		resource = was
	case "client_credentials":
		id, secret, ok := r.BasicAuth()
		if !ok || id != serviceClientID || secret != serviceClientSecret {
			writeJSON(w, 401, map[string]string{"error": "invalid_client"})
			return
		}
		sub, client = serviceClientID, serviceClientID
	default:
		writeJSON(w, 400, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	now := time.Now()
	header, _ := json.Marshal(map[string]string{"alg": "ES256", "kid": "k1", "typ": "at+jwt"})
	claims, _ := json.Marshal(map[string]any{"iss": is.srv.URL, "aud": resource, "sub": sub, "client_id": client,
		"iat": now.Unix(), "exp": now.Add(is.ttl).Unix(), "scope": "tasks", "jti": b64(randomBytes(8))})
	input := b64(header) + "." + b64(claims)
	digest := sha256.Sum256([]byte(input))
	rs, ss, err := ecdsa.Sign(rand.Reader, is.key, digest[:])
	if err != nil {
		is.t.Error(err)
	}
	sig := make([]byte, 64)
	rs.FillBytes(sig[:32])
	ss.FillBytes(sig[32:])
	is.issued++
	is.grants[grant]++
	access := input + "." + b64(sig)
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(is.ttl / time.Second), "scope": "tasks"}
	is.secrets = append(is.secrets, access)
	if grant != "client_credentials" {
		rt := "rt-" + b64(randomBytes(16))
		is.refreshTokens[rt] = resource
		is.secrets = append(is.secrets, rt)
		resp["refresh_token"] = rt
	}
	writeJSON(w, 200, resp)
}

// set changes the issuer's behaviour under its lock.
func (is *testIssuer) set(f func(is *testIssuer)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	f(is)
}

// granted is the number of tokens issued with the grant.
func (is *testIssuer) granted(grant string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.grants[grant]
}

// handedOut is every secret the issuer has handed out so far.
func (is *testIssuer) handedOut() []string {
	is.mu.Lock()
	defer is.mu.Unlock()
	return slices.Clone(is.secrets)
}

func TestClientOAuth(t *testing.T) {
	is := newTestIssuer(t)
	p := startHTTP(t, "--oauth-issuer", is.srv.URL)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	config := t.TempDir()
	env := []string{"XDG_CONFIG_HOME=" + config, "HOME=" + config, "BROWSER=" + exe, fixtureEnv + "=browser", "GORACE=atexit_sleep_ms=0"}

	// Without --oauth: the message suggests it.
	r := cli(t, env, "tools", "list", p.url)
	if r.code != 1 || !strings.Contains(r.stderr, "requires authentication (HTTP 401") || !strings.Contains(r.stderr, "--oauth (the server says it accepts OAuth)") {
		t.Fatalf("without --oauth: %v", r)
	}
	// The first run signs in through the "browser"; the address is shown.
	r = cli(t, env, "tools", "list", "--oauth", p.url)
	if r.code != 0 || !strings.Contains(r.stdout, "create_task") || !strings.Contains(r.stderr, "open this address in a browser") {
		t.Fatalf("--oauth: %v", r)
	}
	t.Logf("first run stderr:\n%s", r.stderr)
	tokens := filepath.Join(config, "mcpgate", "oauth-tokens.json")
	if fi, err := os.Stat(tokens); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", fi, err)
	}
	// The next run uses the stored token: no browser, no new token.
	env[2] = "BROWSER=/nonexistent/browser"
	r = cli(t, env, "tools", "call", "--oauth", p.url, "create_task", "--args", `{"title":"signed in"}`)
	if r.code != 0 || !strings.Contains(r.stdout, `"title": "signed in"`) || strings.Contains(r.stderr, "browser") {
		t.Fatalf("second run: %v", r)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.authorized != 1 || is.issued != 1 {
		t.Errorf("authorizations %d, tokens %d; want 1 and 1", is.authorized, is.issued)
	}
}
