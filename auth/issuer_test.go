package auth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/mcpgate/mcpgate/auth"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func TestMain(m *testing.M) {
	if os.Getenv("MCPGATE_TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}

// issuer is a real OAuth authorization server as far as a resource server
// can tell: RFC 8414 metadata and a JWKS endpoint on loopback, and RSA keys
// that sign access tokens.
type issuer struct {
	srv     *httptest.Server
	fetches atomic.Int32

	mu        sync.Mutex
	n         int
	signing   jwk.Key       // private key of the current generation
	published []jwk.Key     // public keys in the JWKS
	hold      chan struct{} // while set, JWKS requests wait until it closes
	broken    bool          // JWKS requests fail with 500
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	iss := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                           iss.srv.URL,
			"jwks_uri":                         iss.srv.URL + "/jwks",
			"authorization_endpoint":           iss.srv.URL + "/authorize",
			"token_endpoint":                   iss.srv.URL + "/token",
			"code_challenge_methods_supported": []string{"S256"},
		})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		iss.fetches.Add(1)
		iss.mu.Lock()
		hold := iss.hold
		iss.mu.Unlock()
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
		}
		iss.mu.Lock()
		if iss.broken {
			iss.mu.Unlock()
			http.Error(w, "the key store is down", http.StatusInternalServerError)
			return
		}
		set := jwk.NewSet()
		for _, k := range iss.published {
			set.AddKey(k)
		}
		iss.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(set)
	})
	iss.srv = httptest.NewServer(mux)
	t.Cleanup(iss.srv.Close)
	iss.rotate(t)
	return iss
}

func (iss *issuer) URL() string { return iss.srv.URL }

// rotate makes a new signing key and publishes only it, as an issuer does
// once the old key's tokens have expired.
func (iss *issuer) rotate(t *testing.T) {
	t.Helper()
	key, pub := iss.newKey(t)
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.signing, iss.published = key, []jwk.Key{pub}
}

// publishNew makes a key with the next key id and publishes it beside the
// others, as an issuer does before it signs with a new key; it returns
// the private key.
func (iss *issuer) publishNew(t *testing.T) jwk.Key {
	t.Helper()
	key, pub := iss.newKey(t)
	iss.mu.Lock()
	defer iss.mu.Unlock()
	iss.published = append(iss.published, pub)
	return key
}

func (iss *issuer) newKey(t *testing.T) (private, public jwk.Key) {
	t.Helper()
	raw, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	iss.mu.Lock()
	iss.n++
	kid := fmt.Sprintf("key-%d", iss.n)
	iss.mu.Unlock()
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatal(err)
	}
	key.Set(jwk.KeyIDKey, kid)
	key.Set(jwk.AlgorithmKey, jwa.RS256())
	pub, err := jwk.PublicKeyOf(key)
	if err != nil {
		t.Fatal(err)
	}
	return key, pub
}

// stall makes JWKS requests wait until the returned function is called
// (or the test ends).
func (iss *issuer) stall(t *testing.T) (release func()) {
	hold := make(chan struct{})
	iss.mu.Lock()
	iss.hold = hold
	iss.mu.Unlock()
	release = sync.OnceFunc(func() {
		iss.mu.Lock()
		iss.hold = nil
		iss.mu.Unlock()
		close(hold)
	})
	t.Cleanup(release)
	return release
}

func (iss *issuer) setBroken(broken bool) {
	iss.mu.Lock()
	iss.broken = broken
	iss.mu.Unlock()
}

// claims are the defaults of a token; tests override what they probe.
type claims struct {
	iss, sub string
	aud      []string
	exp      time.Time
	scope    string
	key      jwk.Key        // signs instead of the issuer's key
	extra    map[string]any // more claims
}

func (iss *issuer) token(t *testing.T, resource string, edit func(*claims)) string {
	t.Helper()
	iss.mu.Lock()
	c := claims{iss: iss.srv.URL, sub: "alice", aud: []string{resource}, exp: time.Now().Add(time.Hour), scope: "mcp:read", key: iss.signing}
	iss.mu.Unlock()
	if edit != nil {
		edit(&c)
	}
	b := jwt.NewBuilder().Issuer(c.iss).Subject(c.sub).Audience(c.aud).Expiration(c.exp).IssuedAt(time.Now())
	if c.scope != "" {
		b = b.Claim("scope", c.scope)
	}
	for k, v := range c.extra {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), c.key))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}

// protected is an MCP server over Streamable HTTP behind the auth
// middleware, on loopback, with a tool that reports its caller.
type protected struct {
	srv      *httptest.Server
	resource string
}

func newProtected(t *testing.T, cfg func(resource string) auth.Config) *protected {
	t.Helper()
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	p := &protected{srv: srv, resource: srv.URL + "/mcp"}
	m, err := auth.New(cfg(p.resource))
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "auth-test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Names the caller"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		p := auth.FromContext(ctx)
		if p == nil {
			return mcp.TextResult("anonymous"), nil, nil
		}
		return mcp.TextResult(p.Method + " " + p.Subject + " [" + strings.Join(p.Scopes, " ") + "] " + p.Key()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "delete_everything", Description: "Needs mcp:admin"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult("deleted"), nil, nil
	})
	mh := mcphttp.NewHandler(s, &mcphttp.Options{Principal: m.PrincipalID, Authorize: m.Authorize})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		mh.Shutdown(ctx)
	})
	h = m.Wrap(mh)
	return p
}

// call is one HTTP exchange with the MCP endpoint.
type call struct {
	method, path, authz, session, body string
}

type reply struct {
	status  int
	header  http.Header
	body    string
	session string
}

func (p *protected) do(t *testing.T, c call) reply {
	t.Helper()
	if c.method == "" {
		c.method = http.MethodPost
	}
	if c.path == "" {
		c.path = "/mcp"
	}
	req, err := http.NewRequest(c.method, p.srv.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.authz != "" {
		req.Header.Set("Authorization", c.authz)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b), session: resp.Header.Get("Mcp-Session-Id")}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// open initializes a session with the credentials in authz.
func (p *protected) open(t *testing.T, authz string) string {
	t.Helper()
	r := p.do(t, call{authz: authz, body: initBody})
	if r.status != http.StatusOK || r.session == "" {
		t.Fatalf("initialize: %d %s", r.status, r.body)
	}
	if r := p.do(t, call{authz: authz, session: r.session, body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}); r.status != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", r.status, r.body)
	}
	return r.session
}

func toolCall(name string) string {
	return `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + name + `","arguments":{}}}`
}

func bearer(tok string) string { return "Bearer " + tok }
