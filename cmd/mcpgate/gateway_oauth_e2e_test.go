package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// authProxy stands in front of an upstream and records the Authorization
// header of every request the upstream receives, so that a test can say
// which credentials crossed the hop.
type authProxy struct {
	srv    *httptest.Server
	target atomic.Pointer[url.URL]

	mu   sync.Mutex
	seen []string
}

func newAuthProxy(t *testing.T) *authProxy {
	p := &authProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite:       func(r *httputil.ProxyRequest) { r.SetURL(p.target.Load()) },
		FlushInterval: -1, // SSE answers stream through
	}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Get("Authorization"))
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// to points the proxy at the upstream whose endpoint is mcpURL.
func (p *authProxy) to(t *testing.T, mcpURL string) {
	u, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	p.target.Store(&url.URL{Scheme: u.Scheme, Host: u.Host})
}

func (p *authProxy) url() string { return p.srv.URL + "/mcp" }

func (p *authProxy) authorizations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// oauthGateway is the set-up of the gateway OAuth tests: an issuer, the
// upstream "up" (authorization_code, behind a recording proxy), the
// upstream "svc" (client_credentials), a stdio upstream "local" without
// credentials, a configuration file naming them, and a config directory
// of its own for the token file.
type oauthGateway struct {
	is      *testIssuer
	proxy   *authProxy
	cfg     string
	home    string
	env     []string
	tokens  string // the token file
	upKey   string // its key for up
	svcURL  string
	downKey string // the downstream client's API key
	keys    string // the gateway's key file
}

func newOAuthGateway(t *testing.T) *oauthGateway {
	o := &oauthGateway{is: newTestIssuer(t), proxy: newAuthProxy(t), home: t.TempDir()}
	// up's tokens name the proxy's URL as audience: the gateway reaches up
	// through it.
	up := startHTTP(t, "--oauth-issuer", o.is.srv.URL, "--oauth-resource", o.proxy.url())
	o.proxy.to(t, up.url)
	o.svcURL = startHTTP(t, "--oauth-issuer", o.is.srv.URL).url
	dir := t.TempDir()
	o.cfg = filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"up":    map[string]any{"url": o.proxy.url(), "type": "http", "oauth": map[string]any{"grant": "authorization_code"}},
		"svc":   map[string]any{"url": o.svcURL, "type": "http", "oauth": map[string]any{"grant": "client_credentials", "clientId": serviceClientID, "clientSecret": "${SVC_SECRET}"}},
		"local": map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "local.db")}},
	}})
	if err := os.WriteFile(o.cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	o.downKey = "mcpg_downstream-" + b64(randomBytes(12))
	sum := sha256.Sum256([]byte(o.downKey))
	o.keys = filepath.Join(dir, "keys")
	if err := os.WriteFile(o.keys, []byte("ci:sha256:"+hex.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.env = []string{"XDG_CONFIG_HOME=" + o.home, "HOME=" + o.home, "SVC_SECRET=" + serviceClientSecret,
		"BROWSER=/nonexistent/browser", "GORACE=atexit_sleep_ms=0", "MCPGATE_LOG_LEVEL=info"}
	o.tokens = filepath.Join(o.home, "mcpgate", "oauth-tokens.json")
	o.upKey = o.proxy.url()
	return o
}

// keptTokens reads the token file.
func (o *oauthGateway) keptTokens(t *testing.T) map[string]map[string]any {
	t.Helper()
	fi, err := os.Stat(o.tokens)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the token file's mode is %v, want 0600", fi.Mode().Perm())
	}
	b, err := os.ReadFile(o.tokens)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	return all
}

// kept is what the token file holds for up.
func (o *oauthGateway) kept(t *testing.T) (access, refresh string, expiry time.Time) {
	t.Helper()
	tok := o.keptTokens(t)[o.upKey]
	if tok == nil {
		t.Fatalf("the token file holds nothing for %s", o.upKey)
	}
	access, _ = tok["access_token"].(string)
	refresh, _ = tok["refresh_token"].(string)
	exp, _ := tok["expiry"].(string)
	expiry, _ = time.Parse(time.RFC3339Nano, exp)
	return access, refresh, expiry
}

// noSecrets fails when text holds a token, a code, a client secret or the
// downstream key.
func (o *oauthGateway) noSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range append(o.is.handedOut(), serviceClientSecret, o.downKey) {
		if strings.Contains(text, s) {
			t.Errorf("%s holds a secret (%.12s…):\n%s", what, s, text)
			return
		}
	}
}

// loginNoBrowser runs `mcpgate login up --no-browser` and plays the
// browser itself: it reads the address from stderr and follows it, the
// issuer approving at once and redirecting to mcpgate's loopback
// callback.
func (o *oauthGateway) loginNoBrowser(t *testing.T) cliResult {
	t.Helper()
	return loginNoBrowser(t, o.cfg, o.env, "up")
}

// loginNoBrowser runs `mcpgate login SERVER --no-browser` with the
// configuration file cfg and plays the browser.
func loginNoBrowser(t *testing.T, cfg string, env []string, server string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "login", server, "--config", cfg, "--no-browser")
	cmd.Env = append(append(os.Environ(), "MCPGATE_API_KEY="), env...)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	browsed := make(chan error, 1)
	sc := bufio.NewScanner(errPipe)
	for sc.Scan() {
		line := sc.Text()
		stderr.WriteString(line + "\n")
		if u, ok := strings.CutPrefix(line, "  http"); ok {
			go func() { browsed <- browse(ctx, "http"+u) }()
		}
	}
	io.Copy(io.Discard, errPipe)
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("mcpgate login hung; stderr:\n%s", stderr.String())
	}
	select {
	case berr := <-browsed:
		if berr != nil {
			t.Errorf("the browser: %v", berr)
		}
	default:
		t.Errorf("mcpgate login printed no address to open:\n%s", stderr.String())
	}
	r := cliResult{stdout.String(), stderr.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// browse is the person's browser: it follows the authorization address
// through the issuer's redirect to the loopback callback, which must
// answer that the sign-in is done.
func browse(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "Signed in") || resp.Request.URL.Hostname() != "127.0.0.1" {
		return &url.Error{Op: "GET", URL: resp.Request.URL.String(), Err: io.ErrUnexpectedEOF}
	}
	return nil
}

// downstream connects to the gateway with the client's own API key.
func (o *oauthGateway) downstream(t *testing.T, gw *httpProc) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, nil).Connect(context.Background(),
		&mcphttp.ClientTransport{Endpoint: gw.url, Header: http.Header{"Authorization": {"Bearer " + o.downKey}}})
	if err != nil {
		t.Fatalf("%v\n%s", err, gw.log())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func waitTools(t *testing.T, cs *mcp.ClientSession, gw *httpProc, ok func(names []string) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		names := gatewayTools(t, cs)
		if ok(names) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: tools %v\n%s", what, names, gw.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func callJSON(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), tool, args)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(res)
	if res.IsError {
		t.Fatalf("%s: %s", tool, b)
	}
	return string(b), nil
}

// The authorization_code path end to end: `mcpgate login` signs in (the
// browser played by the test), the gateway serves the upstream with the
// kept token and refreshes it as it expires, saving each refreshed token
// back; when the refresh is refused the upstream goes down for good (no
// retries), the log says to run `mcpgate login up`, the other upstreams
// (one with the client_credentials grant) keep serving; signing in again
// brings the upstream back without touching the gateway. The downstream
// client's own key never reaches an upstream, and no secret reaches a log.
func TestGatewayOAuthLogin(t *testing.T) {
	o := newOAuthGateway(t)

	// Sign in.
	r := o.loginNoBrowser(t)
	if r.code != 0 || !strings.Contains(r.stderr, "Signed in to up") {
		t.Fatalf("login: %v", r)
	}
	o.noSecrets(t, "login's output", r.stdout+r.stderr)
	loginAccess, loginRefresh, _ := o.kept(t)
	if loginAccess == "" || loginRefresh == "" {
		t.Fatalf("login kept no refreshable token: %v", o.keptTokens(t))
	}
	if o.is.granted("authorization_code") != 1 {
		t.Fatalf("%d authorizations, want 1", o.is.granted("authorization_code"))
	}

	// The gateway starts after the token expired (marked so in the
	// file): it refreshes it, without a browser, and saves the new one.
	all := o.keptTokens(t)
	all[o.upKey]["expiry"] = time.Now().Add(-time.Hour).Format(time.RFC3339)
	b, _ := json.Marshal(all)
	if err := os.WriteFile(o.tokens, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// From now on a token lives 31 s, which the client, refreshing 30 s
	// ahead, treats as expired after one second.
	o.is.set(func(is *testIssuer) { is.ttl = 31 * time.Second })
	gw := startHTTPEnv(t, o.env, "--config", o.cfg, "--auth-keys", o.keys)
	cs := o.downstream(t, gw)
	waitTools(t, cs, gw, func(n []string) bool {
		return slices.Contains(n, "up_create_task") && slices.Contains(n, "svc_create_task") && slices.Contains(n, "local_create_task")
	}, "every upstream")
	if _, err := callJSON(t, cs, "up_create_task", map[string]any{"title": "through oauth"}); err != nil {
		t.Fatalf("up_create_task: %v\n%s", err, gw.log())
	}
	access, refresh, expiry := o.kept(t)
	if o.is.granted("refresh_token") < 1 || access == loginAccess || refresh == loginRefresh || !expiry.After(time.Now()) {
		t.Errorf("after the gateway's start: %d refreshes, token changed %t, refresh token rotated %t, expiry %v",
			o.is.granted("refresh_token"), access != loginAccess, refresh != loginRefresh, expiry)
	}

	// It expires while the gateway runs: refreshed on the next call.
	refreshes := o.is.granted("refresh_token")
	time.Sleep(1500 * time.Millisecond)
	if out, err := callJSON(t, cs, "up_list_tasks", map[string]any{}); err != nil || !strings.Contains(out, "through oauth") {
		t.Fatalf("up_list_tasks after expiry: %v %s\n%s", err, out, gw.log())
	}
	if o.is.granted("refresh_token") <= refreshes {
		t.Errorf("no refresh after the token expired")
	}
	if a, _, _ := o.kept(t); a == access {
		t.Errorf("the refreshed token was not saved back to the file")
	}

	// The client_credentials upstream got a token of its own, kept in
	// memory only: the token file is for what a person signed in to.
	if o.is.granted("client_credentials") < 1 {
		t.Errorf("no client_credentials token was requested")
	}
	if _, err := callJSON(t, cs, "svc_create_task", map[string]any{"title": "as the service"}); err != nil {
		t.Fatalf("svc_create_task: %v\n%s", err, gw.log())
	}
	if _, ok := o.keptTokens(t)[o.svcURL]; ok {
		t.Errorf("the service account's token was written to the person's token file")
	}

	// The grant is revoked: the next refresh is refused.
	o.is.set(func(is *testIssuer) { is.refuseRefresh = true })
	time.Sleep(1500 * time.Millisecond)
	if _, err := callJSON(t, cs, "up_list_tasks", map[string]any{}); err == nil {
		t.Fatalf("a call succeeded after the refresh was refused\n%s", gw.log())
	}
	waitTools(t, cs, gw, func(n []string) bool {
		return !slices.Contains(n, "up_create_task") && slices.Contains(n, "local_create_task") && slices.Contains(n, "svc_create_task")
	}, "up withdrawn, the others kept")
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(gw.log(), "mcpgate login up") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(gw.log(), "mcpgate login up") {
		t.Fatalf("the log does not say to sign in again:\n%s", gw.log())
	}
	// Not retried: neither the issuer nor up hears from the gateway.
	tokenCalls, upHits := o.is.granted("refresh_token"), len(o.proxy.authorizations())
	time.Sleep(1500 * time.Millisecond) // longer than the first backoffs: a retry would show
	if o.is.granted("refresh_token") != tokenCalls || len(o.proxy.authorizations()) != upHits {
		t.Errorf("the refused upstream was retried: refreshes %d→%d, requests to up %d→%d",
			tokenCalls, o.is.granted("refresh_token"), upHits, len(o.proxy.authorizations()))
	}
	if _, err := callJSON(t, cs, "local_create_task", map[string]any{"title": "still here"}); err != nil {
		t.Errorf("local_create_task: %v", err)
	}
	if _, err := callJSON(t, cs, "svc_list_tasks", map[string]any{}); err != nil {
		t.Errorf("svc_list_tasks: %v", err)
	}

	// Signing in again (this time through $BROWSER) brings it back by
	// itself.
	o.is.set(func(is *testIssuer) { is.refuseRefresh, is.ttl = false, time.Hour })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r = cli(t, append(slices.Clone(o.env), "BROWSER="+exe, fixtureEnv+"=browser"), "login", "up", "--config", o.cfg)
	if r.code != 0 || !strings.Contains(r.stderr, "Signed in to up") {
		t.Fatalf("second login: %v", r)
	}
	if o.is.granted("authorization_code") != 2 {
		t.Errorf("%d authorizations, want 2: login must sign in anew", o.is.granted("authorization_code"))
	}
	waitTools(t, cs, gw, func(n []string) bool { return slices.Contains(n, "up_create_task") }, "up back after the new sign-in")
	if out, err := callJSON(t, cs, "up_list_tasks", map[string]any{}); err != nil || !strings.Contains(out, "through oauth") {
		t.Fatalf("up_list_tasks after the new sign-in: %v %s\n%s", err, out, gw.log())
	}

	// What crossed the hop to up: the issuer's tokens (or nothing, to
	// be told what is needed), never the downstream client's key.
	issued := o.is.handedOut()
	for i, a := range o.proxy.authorizations() {
		tok, ok := strings.CutPrefix(a, "Bearer ")
		if a != "" && (!ok || !slices.Contains(issued, tok)) {
			t.Errorf("request %d to up carried Authorization %.20q…, not a token of the issuer", i, a)
		}
	}
	o.noSecrets(t, "the gateway's log", gw.log())
	o.noSecrets(t, "the second login's output", r.stdout+r.stderr)
}

// A login that cannot sign in fails, rather than report a sign-in that
// never happened (the upstream unreachable, or asking for no token), and
// the token file is left alone.
func TestGatewayLoginFailures(t *testing.T) {
	home := t.TempDir()
	open := startHTTP(t) // asks for no token
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	os.WriteFile(cfg, []byte(`mcpServers:
  gone: {url: "http://127.0.0.1:1/mcp", oauth: {grant: authorization_code}}
  open: {url: "`+open.url+`", oauth: {grant: authorization_code}}
  svc: {url: "http://127.0.0.1:1/mcp", oauth: {grant: client_credentials, clientId: a, clientSecret: b}}
`), 0o600)
	env := []string{"XDG_CONFIG_HOME=" + home, "HOME=" + home, "BROWSER=/nonexistent/browser", "GORACE=atexit_sleep_ms=0"}
	for _, tt := range []struct {
		server, want string
	}{
		{"gone", "connection refused"},
		{"open", "did not ask for a sign-in"},
		{"svc", "nothing to sign in to"},
		{"nope", `lists no server "nope"`},
	} {
		r := cli(t, env, "login", tt.server, "--config", cfg, "--no-browser")
		if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("login %s: %v; want a failure saying %q", tt.server, r, tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "mcpgate", "oauth-tokens.json")); err == nil {
		t.Error("a failed login wrote the token file")
	}
	r := cli(t, nil, "login", "--help")
	if !strings.Contains(r.stdout, "--no-browser") || !strings.Contains(r.stdout, "$BROWSER") {
		t.Errorf("login --help does not explain how the browser is chosen:\n%s", r.stdout)
	}
}
