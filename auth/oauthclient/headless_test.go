package oauthclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// TestHeadlessUsesKeptTokens is how a gateway uses the tokens a person
// obtained with another program (mcpgate login): a Transport without
// Config.Authorize sends the kept token, refreshes it when it expires and
// stores the refreshed one; once the refresh is refused it fails with
// ErrSignInRequired at once, without registering a client or trying to
// authorize.
func TestHeadlessUsesKeptTokens(t *testing.T) {
	clk := &clock{now: time.Now()}
	as := newAuthServer(t, asOptions{refresh: true, expiresIn: 600})
	as.now = clk.Now
	rs := newResourceServer(t, as, rsOptions{})
	store := oauthclient.NewMemoryStore()

	// The person signs in with a program that can show a browser.
	cfg := baseConfig(t)
	cfg.Now, cfg.Store, cfg.ServerURL = clk.Now, store, rs.url()
	if _, status, err := post(t, oauthclient.NewTransport(cfg, nil), rs.url(), "login"); err != nil || status != 200 {
		t.Fatalf("sign-in: %d %v", status, err)
	}
	key, err := oauthclient.StoreKey(rs.url())
	if err != nil {
		t.Fatal(err)
	}
	signedIn, _ := store.Load(context.Background(), key)
	if signedIn == nil || signedIn.RefreshToken == "" {
		t.Fatalf("no refreshable token kept under StoreKey %q: %v", key, signedIn)
	}

	// The headless client, whose way to the authorization server can fail.
	log, logs := testLogger(t)
	asDown := &flakyTransport{}
	headless := oauthclient.NewTransport(oauthclient.Config{ServerURL: rs.url(), Store: store, Now: clk.Now, Logger: log,
		HTTPClient: &http.Client{Transport: asDown}}, nil)
	authorizes, _, registrations := as.counts()
	if _, status, err := post(t, headless, rs.url(), "1"); err != nil || status != 200 {
		t.Fatalf("with the kept token: %d %v", status, err)
	}
	clk.advance(time.Hour)
	if _, status, err := post(t, headless, rs.url(), "2"); err != nil || status != 200 {
		t.Fatalf("after expiry: %d %v", status, err)
	}
	if tc := as.lastToken(); tc.form.Get("grant_type") != "refresh_token" {
		t.Errorf("last token request %v; want a refresh", tc.form)
	}
	refreshed, _ := store.Load(context.Background(), key)
	if refreshed == nil || refreshed.AccessToken == signedIn.AccessToken || refreshed.RefreshToken == signedIn.RefreshToken {
		t.Errorf("the refreshed (and rotated) token was not stored: %v", refreshed)
	}

	// The authorization server is unreachable, then failing, when the
	// token expires: the refresh fails for now (ErrTemporary), without a
	// request sent with no token, and the token is kept, so that the next
	// refresh, once the server is back, needs nobody.
	clk.advance(time.Hour)
	hits := len(rs.authorizations())
	for _, mode := range []string{"unreachable", "503"} {
		asDown.set(mode)
		_, _, err = post(t, headless, rs.url(), "while the server is "+mode)
		if !errors.Is(err, oauthclient.ErrTemporary) || errors.Is(err, oauthclient.ErrSignInRequired) {
			t.Fatalf("refresh with the authorization server %s: %v; want ErrTemporary", mode, err)
		}
	}
	if n := len(rs.authorizations()); n != hits {
		t.Errorf("%d requests reached the server without a token while the refresh could not be done", n-hits)
	}
	asDown.set("")
	if _, status, err := post(t, headless, rs.url(), "4"); err != nil || status != 200 {
		t.Fatalf("once the authorization server is back: %d %v", status, err)
	}

	// The refresh token is revoked: nothing more to try without a person.
	as.mu.Lock()
	clear(as.refreshTokens)
	as.mu.Unlock()
	clk.advance(time.Hour)
	_, _, err = post(t, headless, rs.url(), "3")
	if !errors.Is(err, oauthclient.ErrSignInRequired) || !errors.Is(err, oauthclient.ErrAuthorization) {
		t.Fatalf("after the refresh was refused: %v; want ErrSignInRequired", err)
	}
	if a, _, r := as.counts(); a != authorizes || r != registrations {
		t.Errorf("authorizations %d→%d, registrations %d→%d; a headless client must do neither", authorizes, a, registrations, r)
	}
	for _, secret := range []string{signedIn.AccessToken, signedIn.RefreshToken, refreshed.AccessToken, refreshed.RefreshToken} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the log holds a token: %s", logs)
		}
	}
}

// flakyTransport is the network between a client and its authorization
// server: working, down (a dial error), or the server failing (503).
type flakyTransport struct {
	mu   sync.Mutex
	mode string
}

func (f *flakyTransport) set(mode string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mode = mode
}

func (f *flakyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	mode := f.mode
	f.mu.Unlock()
	switch mode {
	case "unreachable":
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	case "503":
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(`{"error":"temporarily_unavailable"}`)), Request: req}, nil
	}
	return http.DefaultTransport.RoundTrip(req)
}
