package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// methodRecorder serves an upstream over HTTP and records the JSON-RPC
// method of every POST, and the requests it refuses once revoked.
type methodRecorder struct {
	srv     *httptest.Server
	token   string      // the bearer token it wants, if any
	revoked atomic.Bool // from now on it answers 401
	hits    atomic.Int32

	mu      sync.Mutex
	methods []string
}

func newMethodRecorder(t *testing.T, name, token string) *methodRecorder {
	m := &methodRecorder{token: token}
	h := mcphttp.NewHandler(testUpstream(name), nil)
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.hits.Add(1)
		if m.token != "" && (m.revoked.Load() || r.Header.Get("Authorization") != "Bearer "+m.token) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			var msg struct{ Method string }
			json.Unmarshal(body, &msg)
			m.mu.Lock()
			m.methods = append(m.methods, msg.Method)
			m.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(m.srv.Close) // after the gateway, whose client may hold a stream to it
	return m
}

func (m *methodRecorder) count(method string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, x := range m.methods {
		if x == method {
			n++
		}
	}
	return n
}

func stateOf(g *Gateway, name string) UpstreamStatus {
	for _, st := range g.Status() {
		if st.Name == name {
			return st
		}
	}
	return UpstreamStatus{}
}

// An upstream that refuses our credentials in the middle of a session (a
// static token revoked) is auth-failed at once and not retried, rather than
// stay "ready" with every call refused; the others serve.
func TestGatewayCredentialsRefusedMidSession(t *testing.T) {
	var logs logBuffer
	locked := newMethodRecorder(t, "locked", "upstream-secret")
	g, cs := startGateway(t, &logs, nil,
		&configServer{Name: "locked", URL: locked.srv.URL + "/mcp", Type: "http", BearerToken: "upstream-secret"},
		httpServer(t, "alpha"))
	if got := callText(t, cs, "locked_echo", map[string]string{"text": "x"}); got != "locked: x" {
		t.Fatalf("%q", got)
	}
	locked.revoked.Store(true)
	if _, err := cs.CallTool(t.Context(), "locked_echo", map[string]string{"text": "y"}); err == nil {
		t.Fatal("a call succeeded after the token was revoked")
	}
	waitUntil(t, func() bool { return stateOf(g, "locked").State == StateAuthFailed }, "locked to be auth-failed")
	if st := stateOf(g, "locked"); !strings.Contains(st.Error, "401") {
		t.Errorf("locked is auth-failed for %q; want the refusal", st.Error)
	}
	waitUntil(t, func() bool { return !slices.Contains(toolNames(t, cs), "locked_echo") }, "locked's tools withdrawn")
	n := locked.hits.Load()
	time.Sleep(1500 * time.Millisecond) // longer than the first backoffs: a retry would show
	if locked.hits.Load() != n {
		t.Errorf("the refusing upstream was retried: %d requests, then %d", n, locked.hits.Load())
	}
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "x"}); got != "alpha: x" {
		t.Errorf("%q", got)
	}
	if !strings.Contains(logs.String(), "not retrying until the configuration changes") || strings.Contains(logs.String(), "upstream-secret") {
		t.Errorf("the log does not say why, or holds the token:\n%s", logs.String())
	}
}

// Health checks: ping for a session, server/discover for a
// 2026-07-28 one (which has no ping; the library's Ping sends discover).
func TestGatewayHealthCheckByEra(t *testing.T) {
	var logs logBuffer
	perRequest := newMethodRecorder(t, "perrequest", "")
	sessionEra := newMethodRecorder(t, "legacy", "")
	fast := config.ServerOptions{HealthInterval: config.Duration(50 * time.Millisecond)}
	pinned := fast
	pinned.ProtocolVersion = "2025-11-25"
	startGateway(t, &logs, nil,
		&configServer{Name: "perrequest", URL: perRequest.srv.URL + "/mcp", Type: "http", ServerOptions: fast},
		&configServer{Name: "legacy", URL: sessionEra.srv.URL + "/mcp", Type: "http", ServerOptions: pinned})
	discovers := perRequest.count("server/discover") // the probe that chose the era
	waitUntil(t, func() bool { return perRequest.count("server/discover") > discovers+1 && sessionEra.count("ping") > 1 }, "health checks of both")
	if n := perRequest.count("ping"); n != 0 {
		t.Errorf("the 2026-07-28 upstream got %d pings", n)
	}
	if n := sessionEra.count("server/discover"); n != 0 {
		t.Errorf("the legacy upstream got %d server/discover", n)
	}
}

// ccIssuer is an authorization server for the client credentials grant
// only, whose token endpoint can be made to fail (503) for a while.
type ccIssuer struct {
	srv     *httptest.Server
	failing atomic.Bool

	mu     sync.Mutex
	calls  int
	issued []string
}

const ccSecret = "cc-client-secret"

func newCCIssuer(t *testing.T) *ccIssuer {
	is := &ccIssuer{}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "token_endpoint": is.srv.URL + "/token",
				"grant_types_supported": []string{"client_credentials"}, "token_endpoint_auth_methods_supported": []string{"client_secret_basic"}})
		case "/token":
			r.ParseForm()
			is.mu.Lock()
			defer is.mu.Unlock()
			is.calls++
			id, secret, _ := r.BasicAuth()
			switch {
			case is.failing.Load():
				w.WriteHeader(http.StatusServiceUnavailable)
				io.WriteString(w, `{"error":"temporarily_unavailable"}`)
			case id != "svc" || secret != ccSecret || r.PostForm.Get("grant_type") != "client_credentials":
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"error":"invalid_client"}`)
			default:
				tok := "cc-token-" + strconv.Itoa(is.calls)
				is.issued = append(is.issued, tok)
				json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func (is *ccIssuer) state() (calls int, issued []string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.calls, slices.Clone(is.issued)
}

// A client_credentials upstream: while its authorization server fails,
// it is retried like any outage (that is no refusal of our credentials);
// once the server is back the gateway obtains a token and calls through
// with it. Only that token crosses the hop, never the downstream
// client's, and neither reaches the log.
func TestGatewayClientCredentials(t *testing.T) {
	var logs logBuffer
	is := newCCIssuer(t)
	is.failing.Store(true)
	var mu sync.Mutex
	var seen []string
	up := mcphttp.NewHandler(testUpstream("svc"), nil)
	var upSrv *httptest.Server
	upSrv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": upSrv.URL + "/mcp", "authorization_servers": []string{is.srv.URL}})
			return
		}
		a := r.Header.Get("Authorization")
		mu.Lock()
		seen = append(seen, a)
		mu.Unlock()
		if _, issued := is.state(); !slices.Contains(issued, strings.TrimPrefix(a, "Bearer ")) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+upSrv.URL+`/.well-known/oauth-protected-resource/mcp"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		up.ServeHTTP(w, r)
	}))
	t.Cleanup(upSrv.Close)
	cfg := &config.Config{Servers: map[string]*config.Server{
		"svc":   {Name: "svc", URL: upSrv.URL + "/mcp", Type: "http", OAuth: &config.OAuth{Grant: "client_credentials", ClientID: "svc", ClientSecret: ccSecret}},
		"alpha": httpServer(t, "alpha"),
	}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitUntil(t, func() bool {
		calls, _ := is.state()
		return calls >= 2 && strings.Contains(stateOf(g, "svc").Error, "temporarily_unavailable")
	}, "the token request to be retried")
	if st := stateOf(g, "svc"); st.State == StateReady {
		t.Fatalf("svc is ready while its authorization server fails")
	}
	is.failing.Store(false)
	waitState(t, g, StateReady)

	srv := httptest.NewServer(mcphttp.NewHandler(g.Server(), nil))
	t.Cleanup(srv.Close)
	cs, err := mcp.NewClient(nil, nil).Connect(t.Context(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"Authorization": {"Bearer client-secret"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := callText(t, cs, "svc_echo", map[string]string{"text": "x"}); got != "svc: x" {
		t.Errorf("svc_echo: %q", got)
	}
	_, issued := is.state()
	mu.Lock()
	defer mu.Unlock()
	for _, a := range seen {
		if a != "" && !slices.Contains(issued, strings.TrimPrefix(a, "Bearer ")) {
			t.Errorf("the upstream saw Authorization %q", a)
		}
	}
	for _, secret := range append(issued, ccSecret, "client-secret") {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%q reached the log", secret)
		}
	}
}
