package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// FollowRedirect returns a [Config.Authorize] for authorization servers
// that redirect at once, without a person (test servers, such as the MCP
// conformance suite's, or a server that remembers consent): it GETs the
// authorization URL with client, follows redirects up to the one that
// carries the authorization response (a code or error parameter), and
// returns that redirect's Location without following it. A nil client
// means http.DefaultClient.
func FollowRedirect(client *http.Client) func(ctx context.Context, authURL string) (string, error) {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if q := req.URL.Query(); q.Has("code") || q.Has("error") {
			return http.ErrUseLastResponse // the answer: do not visit the redirect URI
		}
		return nil
	}
	return func(ctx context.Context, authURL string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
		if err != nil {
			return "", err
		}
		resp, err := c.Do(req)
		if err != nil {
			return "", err
		}
		discard(resp)
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode > 399 || loc == "" {
			return "", fmt.Errorf("the authorization endpoint answered HTTP %d instead of redirecting with a code: it wants a person to sign in, so use a browser (LoopbackAuthorizer)", resp.StatusCode)
		}
		u, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return "", fmt.Errorf("the authorization endpoint redirected to an unreadable Location: %w", err)
		}
		return u.String(), nil
	}
}

// LoopbackAuthorizer catches the authorization server's redirect on
// 127.0.0.1 (RFC 8252 §7.3), for command-line tools: Authorize hands the
// authorization URL to Open (which prints it or starts a browser) and
// waits for the browser to come back. Use RedirectURL as
// Config.RedirectURL and Authorize as Config.Authorize.
//
// The port is reserved when the authorizer is made, so that the redirect
// URL can be registered with the client; the listener is closed after
// each redirect and opened again on the same port by the next Authorize.
type LoopbackAuthorizer struct {
	// Open shows authURL to the user: prints it, or starts a browser on
	// it, without a shell (exec.Command("xdg-open", authURL), not sh -c).
	Open func(authURL string) error

	mu   sync.Mutex
	ln   net.Listener // held from construction to the first Authorize
	port int
	path string
}

// NewLoopbackAuthorizer listens on 127.0.0.1:port (0: any free port) and
// will serve the redirect at /callback.
func NewLoopbackAuthorizer(port int, open func(authURL string) error) (*LoopbackAuthorizer, error) {
	if open == nil {
		return nil, errors.New("oauthclient: LoopbackAuthorizer needs an Open function")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("oauthclient: cannot listen for the authorization redirect: %w", err)
	}
	return &LoopbackAuthorizer{Open: open, ln: ln, port: ln.Addr().(*net.TCPAddr).Port, path: "/callback"}, nil
}

// RedirectURL is the URL to register: http://127.0.0.1:PORT/callback.
func (a *LoopbackAuthorizer) RedirectURL() string {
	return "http://127.0.0.1:" + strconv.Itoa(a.port) + a.path
}

// Close releases the port if no Authorize has done so.
func (a *LoopbackAuthorizer) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ln == nil {
		return nil
	}
	err := a.ln.Close()
	a.ln = nil
	return err
}

// Authorize implements [Config.Authorize]. One authorization runs at a
// time; it ends with the redirect or with ctx.
func (a *LoopbackAuthorizer) Authorize(ctx context.Context, authURL string) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	// Only a URL a browser may safely open (no javascript:, file:, …).
	if u, err := url.Parse(authURL); err != nil || !(u.Scheme == "https" || (u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return "", fmt.Errorf("refusing to open the authorization URL %q: only https (or http on loopback) is allowed", authURL)
	}
	ln := a.ln
	a.ln = nil
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.port))); err != nil {
			return "", fmt.Errorf("cannot listen for the authorization redirect on port %d: %w", a.port, err)
		}
	}
	got := make(chan string, 1)
	var once sync.Once
	srv := &http.Server{
		ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != a.path || r.Method != http.MethodGet {
				http.NotFound(w, r) // a favicon, a stray probe
				return
			}
			handled := false
			once.Do(func() {
				handled = true
				got <- "http://127.0.0.1:" + strconv.Itoa(a.port) + r.URL.RequestURI()
			})
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			switch q := r.URL.Query(); {
			case !handled:
				w.WriteHeader(http.StatusConflict)
				fmt.Fprint(w, "<p>This sign-in was already completed.</p>")
			case q.Get("error") != "":
				fmt.Fprintf(w, "<p>Authorization failed: %s. You can close this window.</p>", html.EscapeString(q.Get("error")))
			default:
				fmt.Fprint(w, "<p>Signed in. You can close this window.</p>")
			}
		}),
	}
	go srv.Serve(ln)
	defer func() {
		// Let the browser receive its page, then close the listener.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := a.Open(authURL); err != nil {
		return "", fmt.Errorf("showing the authorization URL: %w", err)
	}
	select {
	case u := <-got:
		return u, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}
