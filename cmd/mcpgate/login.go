package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

func newLoginCmd() *cobra.Command {
	var cfgPath string
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Sign in to a gateway upstream whose oauth grant is authorization_code",
		Long: `Sign in, in a browser, to the upstream SERVER of a gateway configuration
whose oauth grant is authorization_code. mcpgate prints the sign-in
address on stderr and opens it in a browser: $BROWSER when set (a
command, given the address as its last argument or in place of %s),
else the system's. The browser comes back to mcpgate on
http://127.0.0.1:PORT/callback, so it must run on this machine; with
--no-browser mcpgate only prints the address, for you to open it in the
browser of your choice.

Login always signs in anew, whatever is kept already. The tokens are kept
in ` + oauthTokenFileHint() + ` (readable by you only), so run
login as the user the gateway runs as; the gateway (mcpgate serve
--config) uses them on that upstream's hop only and refreshes them as
they expire. Run login again when the gateway logs that the upstream
needs a new sign-in: a running gateway notices the new token and connects
again by itself.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return login(cmd.Context(), cfgPath, args[0], noBrowser)
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", envOr("MCPGATE_CONFIG", ""), "gateway configuration file (env MCPGATE_CONFIG)")
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the sign-in address; do not start a browser")
	return cmd
}

func login(ctx context.Context, cfgPath, server string, noBrowser bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if cfgPath == "" {
		return fmt.Errorf("--config is required: the file that lists %s", server)
	}
	cfg, err := loadConfig(cfgPath)
	if err != nil {
		return err
	}
	sc := cfg.Servers[server]
	switch {
	case sc == nil:
		return fmt.Errorf("%s lists no server %q", cfgPath, server)
	case sc.URL == "" || sc.OAuth == nil || sc.OAuth.Grant != oauthclient.GrantAuthorizationCode:
		return fmt.Errorf("server %q has no oauth with grant authorization_code: nothing to sign in to", server)
	}
	path, err := oauthTokenFile()
	if err != nil {
		return err
	}
	show := func(authURL string) error { return openBrowser(sc.URL, authURL) }
	if noBrowser {
		show = func(authURL string) error { printSignIn(sc.URL, authURL, false); return nil }
	}
	la, err := oauthclient.NewLoopbackAuthorizer(0, show)
	if err != nil {
		return err
	}
	defer la.Close()
	store := &signInAnew{TokenStore: oauthclient.NewFileStore(path)}
	tr := oauthclient.NewTransport(oauthclient.Config{
		ServerURL: sc.URL, GrantType: oauthclient.GrantAuthorizationCode,
		ClientID: sc.OAuth.ClientID, ClientSecret: sc.OAuth.ClientSecret, Scopes: sc.OAuth.Scopes,
		ClientName: "mcpgate", RedirectURL: la.RedirectURL(), Authorize: la.Authorize,
		Store: store, Logger: slog.Default(), AllowPrivateNetworks: sc.OAuth.AllowPrivateNetworks,
	}, nil)
	ctx, cancel := context.WithTimeout(ctx, oauthSignInTime)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-login", Version: buildVersion()}, nil).
		Connect(ctx, &mcphttp.ClientTransport{Endpoint: sc.URL, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		// Every failure is one: a failure that is neither the network's
		// nor OAuth's must not pass for a sign-in.
		if e := explainNet(err, sc.URL); e != nil {
			return e
		}
		if e := explainOAuth(err, sc.URL); e != nil {
			return e
		}
		return fmt.Errorf("signing in to %s (%s): %w", server, sc.URL, err)
	}
	cs.Close()
	// A server that answers without asking for a token leaves nothing to
	// keep: saying "signed in" would send the person looking elsewhere.
	if saved, err := store.kept(); err != nil {
		return fmt.Errorf("signed in to %s, but the token could not be kept: %w", server, err)
	} else if !saved {
		return fmt.Errorf("%s (%s) did not ask for a sign-in: it answered without a token, so none was kept (does it use OAuth?)", server, sc.URL)
	}
	fmt.Fprintf(os.Stderr, "Signed in to %s (%s); the gateway will use and refresh the token kept in %s.\n", server, sc.URL, path)
	return nil
}

// signInAnew is the token file as login uses it: what it obtains is saved
// there, but nothing is loaded, so that login always asks the person. A
// kept token is the reason to run login (the gateway found it refused),
// and using it would only report success without signing in.
type signInAnew struct {
	oauthclient.TokenStore

	mu    sync.Mutex
	saved bool  // a token was obtained and kept
	err   error // or why it could not be kept
}

func (*signInAnew) Load(context.Context, string) (*oauthclient.Token, error) { return nil, nil }

func (s *signInAnew) Save(ctx context.Context, resource string, tok *oauthclient.Token) error {
	err := s.TokenStore.Save(ctx, resource, tok)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved, s.err = err == nil && tok != nil, err
	return err
}

// kept reports whether a token was kept, or why not.
func (s *signInAnew) kept() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved, s.err
}
