package oauthclient_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// The client's own requests (metadata, registration, token) go where
// servers say. These tests are what a hostile MCP server or authorization
// server could try with that: redirects, metadata on another origin,
// addresses on this machine or its network. Each points the client at a
// trap, a server that must never see a connection.

const trapSecret = "pre-registered secret that must stay home"

// trap counts the connections and requests it gets and keeps what it was
// sent.
type trap struct {
	srv *httptest.Server

	mu     sync.Mutex
	conns  int
	seen   []string
	secret bool             // the client secret came, in a form or as Basic credentials
	serve  http.HandlerFunc // what it answers; nil: 404
}

func newTrap(t *testing.T, useTLS bool) *trap {
	tp := &trap{}
	tp.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		_, pass, _ := r.BasicAuth()
		pass, _ = url.QueryUnescape(pass)
		tp.mu.Lock()
		tp.seen = append(tp.seen, fmt.Sprintf("%s %s Authorization=%q body=%q", r.Method, r.URL, r.Header.Get("Authorization"), body))
		tp.secret = tp.secret || pass == trapSecret || form.Get("client_secret") == trapSecret
		serve := tp.serve
		tp.mu.Unlock()
		if serve == nil {
			http.NotFound(w, r)
			return
		}
		serve(w, r)
	}))
	tp.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			tp.mu.Lock()
			tp.conns++
			tp.mu.Unlock()
		}
	}
	if useTLS {
		tp.srv.StartTLS()
	} else {
		tp.srv.Start()
	}
	t.Cleanup(tp.srv.Close)
	return tp
}

// url is the trap's URL under host (its own address when empty).
func (tp *trap) url(host string) string {
	if host == "" {
		return tp.srv.URL
	}
	scheme, addr, _ := strings.Cut(tp.srv.URL, "://")
	_, port, _ := net.SplitHostPort(addr)
	return scheme + "://" + net.JoinHostPort(host, port)
}

func (tp *trap) reached() (conns int, seen []string, secret bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.conns, tp.seen, tp.secret
}

// internet gives loopback test servers names with addresses on the
// internet, on a private network or on loopback: its resolver answers the
// client's lookups, and its transport connects every address to the same
// port on 127.0.0.1 and trusts the test certificate (*.example.com).
type internet struct {
	hosts map[string]netip.Addr
	rt    *http.Transport
}

func newInternet(t *testing.T) *internet {
	certSrv := httptest.NewTLSServer(http.NotFoundHandler())
	pool := x509.NewCertPool()
	pool.AddCert(certSrv.Certificate())
	certSrv.Close()
	n := &internet{hosts: map[string]netip.Addr{}}
	for name, addr := range map[string]string{
		"mcp.example.com":      "203.0.113.10",
		"as.example.com":       "203.0.113.20",
		"prm.example.com":      "203.0.113.30",
		"evil.example.com":     "203.0.113.66",
		"rebind.example.com":   "127.0.0.1",
		"intranet.example.com": "10.0.0.7",
		"metadata.example.com": "169.254.169.254",
	} {
		n.hosts[name] = netip.MustParseAddr(addr)
	}
	n.rt = &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}
	t.Cleanup(n.rt.CloseIdleConnections)
	return n
}

func (n *internet) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	if a, ok := n.hosts[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// config is cfg for a client on this internet.
func (n *internet) config(cfg oauthclient.Config) oauthclient.Config {
	cfg = oauthclient.WithResolver(cfg, n.lookup)
	if cfg.GrantType == "" {
		cfg.Authorize = oauthclient.FollowRedirect(&http.Client{Transport: n.rt})
	}
	return cfg
}

// publicWorld is an MCP server at mcp.example.com (a public address)
// whose authorization server is at as.example.com, unless ro says
// otherwise.
func publicWorld(t *testing.T, ao asOptions, ro rsOptions) (*internet, *authServer, *resourceServer) {
	n := newInternet(t)
	if ao.host == "" {
		ao.host = "as.example.com"
	}
	ro.host = "mcp.example.com"
	as := newAuthServer(t, ao)
	return n, as, newResourceServer(t, as, ro)
}

// signIn sends one request, which needs a token, and returns its error.
func signIn(t *testing.T, tr http.RoundTripper, target string) error {
	t.Helper()
	_, status, err := post(t, tr, target, "x")
	if err == nil && status != http.StatusOK {
		return fmt.Errorf("HTTP %d", status)
	}
	return err
}

func clientCredentials(t *testing.T, as *authServer) oauthclient.Config {
	as.preRegister("app", trapSecret)
	log, _ := testLogger(t)
	return oauthclient.Config{GrantType: oauthclient.GrantClientCredentials, ClientID: "app", ClientSecret: trapSecret, Logger: log}
}

var machineAS = asOptions{authMethods: []string{"client_secret_basic"}, grantTypes: []string{"client_credentials"}}

// redirectCases redirect one request of a flow on loopback to the trap
// (to), each endpoint with the status given.
var redirectCases = []struct {
	endpoint string
	run      func(t *testing.T, status int, to string) error
}{
	{"protected resource metadata", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, asOptions{})
		rs := newResourceServer(t, as, rsOptions{headerPRM: true, extraHandler: func(w http.ResponseWriter, r *http.Request) bool {
			if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
				http.Redirect(w, r, to, status)
				return true
			}
			return false
		}})
		return signIn(t, oauthclient.NewTransport(baseConfig(t), nil), rs.url())
	}},
	{"authorization server metadata", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, asOptions{})
		as.redirect("/.well-known/oauth-authorization-server", status, to)
		rs := newResourceServer(t, as, rsOptions{})
		return signIn(t, oauthclient.NewTransport(baseConfig(t), nil), rs.url())
	}},
	{"registration", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, asOptions{})
		as.redirect("/register", status, to)
		rs := newResourceServer(t, as, rsOptions{})
		return signIn(t, oauthclient.NewTransport(baseConfig(t), nil), rs.url())
	}},
	{"token (authorization_code)", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, asOptions{authMethods: []string{"client_secret_post"}})
		as.preRegister("app", trapSecret)
		as.redirect("/token", status, to)
		rs := newResourceServer(t, as, rsOptions{})
		cfg := baseConfig(t)
		cfg.ClientID, cfg.ClientSecret = "app", trapSecret
		return signIn(t, oauthclient.NewTransport(cfg, nil), rs.url())
	}},
	{"token (refresh_token)", func(t *testing.T, status int, to string) error {
		clk := &clock{now: time.Now()}
		as := newAuthServer(t, asOptions{refresh: true, expiresIn: 600, authMethods: []string{"client_secret_basic"}})
		as.now = clk.Now
		as.preRegister("app", trapSecret)
		rs := newResourceServer(t, as, rsOptions{})
		cfg := baseConfig(t)
		cfg.ClientID, cfg.ClientSecret, cfg.Now = "app", trapSecret, clk.Now
		tr := oauthclient.NewTransport(cfg, nil)
		if err := signIn(t, tr, rs.url()); err != nil {
			t.Fatalf("the first sign-in: %v", err)
		}
		as.redirect("/token", status, to)
		clk.advance(time.Hour)
		err := signIn(t, tr, rs.url())
		as.mu.Lock()
		defer as.mu.Unlock()
		if len(as.redirected) == 0 || as.redirected[0] != "POST /token refresh_token" {
			t.Errorf("the requests answered with the redirect were %q; want the refresh first", as.redirected)
		}
		return err
	}},
	{"token (client_credentials)", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, machineAS)
		as.redirect("/token", status, to)
		rs := newResourceServer(t, as, rsOptions{})
		return signIn(t, oauthclient.NewTransport(clientCredentials(t, as), nil), rs.url())
	}},
	{"token (client_credentials) through the caller's HTTPClient, which follows redirects", func(t *testing.T, status int, to string) error {
		as := newAuthServer(t, machineAS)
		as.redirect("/token", status, to)
		rs := newResourceServer(t, as, rsOptions{})
		cfg := clientCredentials(t, as)
		cfg.HTTPClient = &http.Client{}
		err := signIn(t, oauthclient.NewTransport(cfg, nil), rs.url())
		if cfg.HTTPClient.CheckRedirect != nil || cfg.HTTPClient.Transport != nil {
			t.Errorf("the caller's HTTPClient was changed")
		}
		return err
	}},
	{"token exchange at the enterprise IdP", func(t *testing.T, status int, to string) error {
		idp := httptest.NewServer(http.RedirectHandler(to, status))
		t.Cleanup(idp.Close)
		x := &oauthclient.TokenExchange{TokenEndpoint: idp.URL + "/oauth2/token", ClientID: "app", ClientSecret: trapSecret, SubjectToken: testIDToken}
		_, err := x.Assertion()(context.Background(), oauthclient.AssertionRequest{Issuer: "https://as.example.com", Resource: "https://mcp.example.com/mcp"})
		return err
	}},
}

// TestOutboundOAuthRefuses is the matrix of redirects and server-side
// request forgery: no redirect is followed for metadata, registration,
// token or token exchange requests; the protected resource metadata is
// read on the MCP server's origin only, and the authorization server is
// one it lists; a server that is not on loopback cannot send the client
// to loopback, link-local or private addresses, whether by address or by
// a name that resolves to one, nor to plain http. The trap never sees a
// connection, so no secret can reach it.
func TestOutboundOAuthRefuses(t *testing.T) {
	type refusal struct {
		name   string
		tls    bool // the trap serves https (for names under example.com)
		run    func(t *testing.T, tp *trap) error
		want   error                   // nil: the request succeeds without the trap
		inText func(tp *trap) []string // what the error must say
	}
	var tests []refusal
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		for _, c := range redirectCases {
			tests = append(tests, refusal{
				name: fmt.Sprintf("%d on %s", status, c.endpoint),
				run:  func(t *testing.T, tp *trap) error { return c.run(t, status, tp.url("")+"/steal") },
				want: oauthclient.ErrRedirect,
				inText: func(tp *trap) []string {
					return []string{fmt.Sprintf("answered %d, a redirect to %s/steal;", status, tp.url("")), "redirects are not followed"}
				},
			})
		}
	}
	// trapAS makes the trap, under host, the authorization server that a
	// public MCP server's metadata lists.
	trapAS := func(host string, cfg func(*oauthclient.Config)) func(t *testing.T, tp *trap) error {
		return func(t *testing.T, tp *trap) error {
			n, _, rs := publicWorld(t, asOptions{}, rsOptions{asURL: tp.url(host)})
			c := n.config(baseConfig(t))
			if cfg != nil {
				cfg(&c)
			}
			return signIn(t, oauthclient.NewTransport(c, n.rt), rs.url())
		}
	}
	allowPrivate := func(c *oauthclient.Config) { c.AllowPrivateNetworks = true }
	tests = append(tests,
		refusal{
			name: "resource_metadata on another origin is ignored for the server's own",
			tls:  true,
			run: func(t *testing.T, tp *trap) error {
				var rs *resourceServer
				tp.mu.Lock()
				tp.serve = func(w http.ResponseWriter, r *http.Request) {
					writeJSON(w, 200, map[string]any{"resource": rs.url(), "authorization_servers": []string{tp.url("evil.example.com")}})
				}
				tp.mu.Unlock()
				n, as, rs := publicWorld(t, asOptions{}, rsOptions{challengePRM: tp.url("evil.example.com") + "/.well-known/oauth-protected-resource/mcp"})
				err := signIn(t, oauthclient.NewTransport(n.config(baseConfig(t)), n.rt), rs.url())
				if _, tokens, _ := as.counts(); err == nil && tokens != 1 {
					t.Errorf("%d token requests at the server's own authorization server, want 1", tokens)
				}
				return err
			},
		},
		refusal{
			name: "an authorization server the server's own metadata does not list is not used",
			tls:  true,
			run: func(t *testing.T, tp *trap) error {
				var rs *resourceServer
				prmURL := serverURL(startServer(t, "prm.example.com", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					writeJSON(w, 200, map[string]any{"resource": rs.url(), "authorization_servers": []string{tp.url("evil.example.com")}})
				})), "prm.example.com")
				n, as, rs := publicWorld(t, asOptions{}, rsOptions{challengePRM: prmURL + "/.well-known/oauth-protected-resource/mcp"})
				err := signIn(t, oauthclient.NewTransport(n.config(baseConfig(t)), n.rt), rs.url())
				if _, tokens, _ := as.counts(); err == nil && tokens != 1 {
					t.Errorf("%d token requests at the listed authorization server, want 1", tokens)
				}
				return err
			},
		},
		refusal{
			name: "a loopback address, for a server that is not on loopback",
			tls:  true,
			run:  trapAS("127.0.0.1", nil),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"the authorization server " + tp.url("127.0.0.1") + " is a loopback address, and the MCP server https://mcp.example.com:"}
			},
		},
		refusal{
			name: "a name that resolves to loopback (DNS rebinding)",
			tls:  true,
			run:  trapAS("rebind.example.com", nil),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"a loopback address, since rebind.example.com resolves to 127.0.0.1"}
			},
		},
		refusal{
			name: "a name that resolves to loopback, with AllowPrivateNetworks",
			tls:  true,
			run:  trapAS("rebind.example.com", allowPrivate),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"a loopback address, since rebind.example.com resolves to 127.0.0.1"}
			},
		},
		refusal{
			name: "a name that resolves to a private address",
			tls:  true,
			run:  trapAS("intranet.example.com", nil),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"a private address, since intranet.example.com resolves to 10.0.0.7", "Config.AllowPrivateNetworks"}
			},
		},
		refusal{
			name: "a name that resolves to the cloud metadata service",
			tls:  true,
			run:  trapAS("metadata.example.com", allowPrivate),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"a link-local or cloud metadata address, since metadata.example.com resolves to 169.254.169.254"}
			},
		},
		refusal{
			name: "plain http on loopback, for a server that is not on loopback",
			run:  trapAS("localhost", nil),
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"the authorization server http://localhost:", "is a loopback address"}
			},
		},
		refusal{
			name: "a token endpoint whose name resolves to loopback",
			tls:  true,
			run: func(t *testing.T, tp *trap) error {
				ao := machineAS
				ao.tokenEndpoint = tp.url("rebind.example.com") + "/token"
				n, as, rs := publicWorld(t, ao, rsOptions{})
				return signIn(t, oauthclient.NewTransport(n.config(clientCredentials(t, as)), n.rt), rs.url())
			},
			want: oauthclient.ErrPrivateAddress,
			inText: func(tp *trap) []string {
				return []string{"the token endpoint " + tp.url("rebind.example.com") + "/token is a loopback address, since rebind.example.com resolves to 127.0.0.1"}
			},
		},
	)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := newTrap(t, tt.tls)
			err := tt.run(t, tp)
			t.Logf("error: %v", err)
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("the request failed: %v", err)
			case tt.want != nil && (!errors.Is(err, tt.want) || !errors.Is(err, oauthclient.ErrAuthorization)):
				t.Errorf("error %v; want one matching %v", err, tt.want)
			}
			if err != nil && tt.inText != nil {
				for _, s := range tt.inText(tp) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q\ndoes not say %q", err, s)
					}
				}
				if strings.Contains(err.Error(), trapSecret) {
					t.Errorf("the error shows the client secret: %v", err)
				}
			}
			conns, seen, secret := tp.reached()
			if secret {
				t.Errorf("the client secret reached the trap")
			}
			if conns != 0 || len(seen) != 0 {
				t.Errorf("the trap got %d connection(s) and these requests: %q", conns, seen)
			}
		})
	}
}

// TestOutboundOAuthReachesWhatItMay: the guard lets through what it must:
// a public server's public authorization server (connecting to the
// checked address, with the name's certificate), a private one with
// AllowPrivateNetworks, and the operator's proxy wherever it is.
func TestOutboundOAuthReachesWhatItMay(t *testing.T) {
	tests := []struct {
		name string
		ao   asOptions
		cfg  func(t *testing.T, c *oauthclient.Config, n *internet)
	}{
		{name: "a public authorization server"},
		{name: "a private authorization server with AllowPrivateNetworks", ao: asOptions{host: "intranet.example.com"},
			cfg: func(_ *testing.T, c *oauthclient.Config, _ *internet) { c.AllowPrivateNetworks = true }},
		{name: "through a proxy on loopback", cfg: func(t *testing.T, c *oauthclient.Config, n *internet) {
			proxy := newConnectProxy(t)
			rt := n.rt.Clone()
			rt.Proxy = http.ProxyURL(proxy.url)
			c.HTTPClient = &http.Client{Transport: rt}
			t.Cleanup(func() {
				if proxy.tunnels() == 0 {
					t.Errorf("nothing went through the proxy")
				}
			})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, as, rs := publicWorld(t, tt.ao, rsOptions{})
			cfg := n.config(baseConfig(t))
			if tt.cfg != nil {
				tt.cfg(t, &cfg, n)
			}
			if err := signIn(t, oauthclient.NewTransport(cfg, n.rt), rs.url()); err != nil {
				t.Fatal(err)
			}
			if _, tokens, _ := as.counts(); tokens != 1 {
				t.Errorf("%d token requests, want 1", tokens)
			}
		})
	}
}

// connectProxy is an HTTP CONNECT proxy on loopback that tunnels to the
// requested port on 127.0.0.1.
type connectProxy struct {
	url *url.URL

	mu    sync.Mutex
	n     int
	conns []net.Conn
}

func (p *connectProxy) tunnels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func newConnectProxy(t *testing.T) *connectProxy {
	p := &connectProxy{}
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		_, port, err := net.SplitHostPort(r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		up, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			up.Close()
			return
		}
		p.mu.Lock()
		p.n++
		p.conns = append(p.conns, conn, up)
		p.mu.Unlock()
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(up, conn)
			up.Close()
		}()
		io.Copy(conn, up)
		conn.Close()
	}))
	t.Cleanup(func() {
		srv.Close()
		// The client keeps its tunnels open for reuse: close them.
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		wg.Wait()
	})
	p.url, _ = url.Parse(srv.URL)
	return p
}
