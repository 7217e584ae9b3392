package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sync"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/gateway/config"
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
whose oauth grant is authorization_code: an MCP server (its authorization
server found by discovery) or a REST API (openapi; the endpoints of its
description's authorizationCode flow, or oauth.authorizationUrl and
oauth.tokenUrl, with the clientId you registered). mcpgate prints the sign-in
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
	case (sc.URL == "" && sc.OpenAPI == nil) || sc.OAuth == nil || sc.OAuth.Grant != oauthclient.GrantAuthorizationCode:
		return fmt.Errorf("server %q has no oauth with grant authorization_code: nothing to sign in to", server)
	}
	path, err := oauthTokenFile()
	if err != nil {
		return err
	}
	if sc.OpenAPI != nil {
		return loginREST(ctx, server, sc, path, noBrowser)
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

// loginREST signs a person in to a REST API (an openapi server) with the
// authorization code grant and PKCE, at the endpoints its description or
// its oauth settings name, and keeps the token where the gateway looks
// for it (gateway.SignInKey). golang.org/x/oauth2 makes the requests: a
// REST API has no MCP discovery for auth/oauthclient to start from.
func loginREST(ctx context.Context, server string, sc *config.Server, path string, noBrowser bool) error {
	cfg, key, client, err := gateway.RESTSignIn(ctx, sc)
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", server, err)
	}
	show := func(authURL string) error { return openBrowser(server, authURL) }
	if noBrowser {
		show = func(authURL string) error { printSignIn(server, authURL, false); return nil }
	}
	la, err := oauthclient.NewLoopbackAuthorizer(0, show)
	if err != nil {
		return err
	}
	defer la.Close()
	cfg.RedirectURL = la.RedirectURL()
	ctx, cancel := context.WithTimeout(ctx, oauthSignInTime)
	defer cancel()
	verifier, state := oauth2.GenerateVerifier(), oauth2.GenerateVerifier()
	back, err := la.Authorize(ctx, cfg.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier)))
	if err != nil {
		return fmt.Errorf("signing in to %s: %w", server, err)
	}
	u, err := url.Parse(back)
	if err != nil {
		return fmt.Errorf("signing in to %s: the redirect: %w", server, err)
	}
	q := u.Query()
	switch {
	case q.Get("error") != "":
		return fmt.Errorf("OAuth sign-in to %s failed: the authorization server answered %s %s", server, q.Get("error"), q.Get("error_description"))
	case q.Get("state") != state:
		return fmt.Errorf("OAuth sign-in to %s failed: the redirect's state is not the one sent (a stale or forged redirect); run login again", server)
	case q.Get("code") == "":
		return fmt.Errorf("OAuth sign-in to %s failed: the redirect carries no code", server)
	}
	tok, err := cfg.Exchange(context.WithValue(ctx, oauth2.HTTPClient, client), q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.ErrorCode != "" {
			return fmt.Errorf("OAuth sign-in to %s failed: the token endpoint refused the code (%s %s)", server, re.ErrorCode, re.ErrorDescription)
		}
		return fmt.Errorf("OAuth sign-in to %s failed: exchanging the code: %w", server, err)
	}
	kept := &oauthclient.Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry,
		Scopes: cfg.Scopes, TokenEndpoint: cfg.Endpoint.TokenURL, ClientID: cfg.ClientID}
	if err := oauthclient.NewFileStore(path).Save(ctx, key, kept); err != nil {
		return fmt.Errorf("signed in to %s, but the token could not be kept: %w", server, err)
	}
	fmt.Fprintf(os.Stderr, "Signed in to %s; the gateway will use and refresh the token kept in %s.\n", server, path)
	return nil
}
