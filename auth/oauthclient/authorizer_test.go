package oauthclient_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
)

// TestLoopbackAuthorizer signs in the way a command-line tool does: the
// "browser" (Open) visits the authorization URL and follows the redirect
// to the loopback listener.
func TestLoopbackAuthorizer(t *testing.T) {
	as := newAuthServer(t, asOptions{})
	rs := newResourceServer(t, as, rsOptions{headerPRM: true, need: func(body string) []string {
		if body == "more" {
			return []string{"mcp:write"}
		}
		return nil
	}})
	browserSaw := make(chan string, 4)
	la, err := oauthclient.NewLoopbackAuthorizer(0, func(authURL string) error {
		go func() { // a browser runs on its own
			resp, err := http.Get(authURL)
			if err != nil {
				browserSaw <- "error: " + err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			browserSaw <- string(b)
		}()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	if !strings.HasPrefix(la.RedirectURL(), "http://127.0.0.1:") || !strings.HasSuffix(la.RedirectURL(), "/callback") {
		t.Fatalf("RedirectURL %q", la.RedirectURL())
	}
	cfg := baseConfig(t)
	cfg.RedirectURL, cfg.Authorize = la.RedirectURL(), la.Authorize
	tr := oauthclient.NewTransport(cfg, nil)
	if _, status, err := post(t, tr, rs.url(), "x"); err != nil || status != 200 {
		t.Fatalf("%d %v", status, err)
	}
	if page := <-browserSaw; !strings.Contains(page, "Signed in") {
		t.Errorf("the browser got %q", page)
	}
	// A second sign-in (step-up) listens again on the same port.
	if _, status, err := post(t, tr, rs.url(), "more"); err != nil || status != 200 {
		t.Fatalf("step-up: %d %v", status, err)
	}
	if page := <-browserSaw; !strings.Contains(page, "Signed in") {
		t.Errorf("the browser got %q", page)
	}
	if as.lastAuthorize().Get("redirect_uri") != la.RedirectURL() {
		t.Errorf("redirect_uri %q", as.lastAuthorize().Get("redirect_uri"))
	}
}

func TestLoopbackAuthorizerRefusesBadURLsAndHonoursContext(t *testing.T) {
	opened := false
	la, err := oauthclient.NewLoopbackAuthorizer(0, func(string) error { opened = true; return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer la.Close()
	for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "http://as.example.com/authorize"} {
		if _, err := la.Authorize(context.Background(), u); err == nil {
			t.Errorf("%s was accepted", u)
		}
	}
	if opened {
		t.Error("a refused URL was opened")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := la.Authorize(ctx, "https://as.example.com/authorize"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the context's", err)
	}
	// Stray requests do not end a sign-in; the callback does.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	la.Open = func(string) error {
		go func() {
			http.Get(strings.Replace(la.RedirectURL(), "/callback", "/favicon.ico", 1))
			http.Get(la.RedirectURL() + "?code=c&state=s")
		}()
		return nil
	}
	got, err := la.Authorize(ctx2, "https://as.example.com/authorize")
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(got); u.Query().Get("code") != "c" || u.Path != "/callback" {
		t.Errorf("got %q", got)
	}
}

func TestFollowRedirect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login": // an intermediate hop on the authorization server
			http.Redirect(w, r, "/consent", http.StatusFound)
		case "/consent":
			http.Redirect(w, r, "http://127.0.0.1:9/cb?code=abc&state=s", http.StatusFound)
		case "/relative":
			http.Redirect(w, r, "/cb?error=access_denied", http.StatusFound)
		default:
			io.WriteString(w, "<form>sign in</form>")
		}
	}))
	defer srv.Close()
	follow := oauthclient.FollowRedirect(srv.Client())
	tests := []struct {
		path, want, wantErr string
	}{
		{"/login", "http://127.0.0.1:9/cb?code=abc&state=s", ""},
		{"/relative", srv.URL + "/cb?error=access_denied", ""},
		{"/form", "", "wants a person to sign in"},
	}
	for _, tt := range tests {
		got, err := follow(context.Background(), srv.URL+tt.path)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%s: err = %v, want %q", tt.path, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}
