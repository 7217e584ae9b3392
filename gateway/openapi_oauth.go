package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/openapi"
)

// restToken is the access token of a REST API upstream with oauth, kept
// until it expires or the API refuses it. With the client_credentials
// grant it comes from the token endpoint; with authorization_code, from
// the sign-in `mcpgate login` kept in the token store, refreshed here
// (and saved back) as it expires.
//
// The endpoints of a REST API are named by its description (an oauth2
// scheme's flows) or by the oauth settings, not found by MCP's
// discovery, so golang.org/x/oauth2 does the grants rather than
// auth/oauthclient.
type restToken struct {
	server   string
	schemes  []string // the description's oauth2 and openIdConnect schemes
	endpoint string   // the token endpoint, for messages
	// renew returns a token in place of one that is missing, expired or
	// refused (old, which may be nil).
	renew func(ctx context.Context, old *oauth2.Token) (*oauth2.Token, error)

	mu      sync.Mutex
	tok     *oauth2.Token
	refusal string // the access token the API last refused
}

// tokenTimeout bounds one token request.
const tokenTimeout = 30 * time.Second

func newRESTToken(u *upstream, c *config.Server, doc *openapi.Document) (*restToken, error) {
	var schemes []string
	for _, s := range doc.SecuritySchemes() {
		if s.Type == "oauth2" || s.Type == "openIdConnect" {
			schemes = append(schemes, s.Name)
		}
	}
	client := tokenClient(u.g.tracing.transport(http.DefaultTransport))
	t := &restToken{server: c.Name, schemes: schemes}
	if c.OAuth.Grant == "authorization_code" {
		cfg, err := signInConfig(c, doc)
		if err != nil {
			return nil, err
		}
		key, err := SignInKey(c, doc)
		if err != nil {
			return nil, err
		}
		t.endpoint = cfg.Endpoint.TokenURL
		t.renew = func(ctx context.Context, old *oauth2.Token) (*oauth2.Token, error) {
			return refreshSignIn(ctx, u.g.tokenStore, key, cfg, client, old)
		}
		return t, nil
	}
	tokenURL, from := c.OAuth.TokenURL, "oauth.tokenUrl"
	if tokenURL == "" {
		var err error
		if tokenURL, err = describedEndpoint(doc, "clientCredentials", "token endpoint", func(f openapi.OAuthFlow) string { return f.TokenURL }); err != nil {
			return nil, fmt.Errorf("oauth: %w: set oauth.tokenUrl", err)
		}
		from = "the description's clientCredentials flow"
	}
	if err := checkEndpoint(tokenURL); err != nil {
		return nil, fmt.Errorf("the token endpoint from %s %w: set oauth.tokenUrl", from, err)
	}
	u.logger.Info("gateway: REST API tokens from the client_credentials grant", "tokenEndpoint", origin(tokenURL), "from", from)
	cfg := clientcredentials.Config{ClientID: c.OAuth.ClientID, ClientSecret: c.OAuth.ClientSecret, TokenURL: tokenURL, Scopes: c.OAuth.Scopes}
	t.endpoint = tokenURL
	t.renew = func(ctx context.Context, _ *oauth2.Token) (*oauth2.Token, error) {
		return cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, client))
	}
	return t, nil
}

// tokenClient talks to token endpoints: bounded in time, following no
// redirect (a client secret or a code must not be carried elsewhere).
func tokenClient(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, Timeout: tokenTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// checkEndpoint refuses an OAuth endpoint that is not https, or http on
// a loopback host: client secrets, codes and tokens go there.
func checkEndpoint(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
		return errors.New("is not an https URL (http only on a loopback host)")
	}
	return nil
}

func origin(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return raw
}

// signInConfig is the authorization_code grant of an openapi server:
// its endpoints from oauth.authorizationUrl and oauth.tokenUrl, else the
// description's authorizationCode flow.
func signInConfig(c *config.Server, doc *openapi.Document) (*oauth2.Config, error) {
	o := c.OAuth
	authURL, tokenURL := o.AuthorizationURL, o.TokenURL
	var err error
	if authURL == "" {
		if authURL, err = describedEndpoint(doc, "authorizationCode", "authorization endpoint", func(f openapi.OAuthFlow) string { return f.AuthorizationURL }); err != nil {
			return nil, fmt.Errorf("oauth: %w: set oauth.authorizationUrl", err)
		}
	}
	if tokenURL == "" {
		if tokenURL, err = describedEndpoint(doc, "authorizationCode", "token endpoint", func(f openapi.OAuthFlow) string { return f.TokenURL }); err != nil {
			return nil, fmt.Errorf("oauth: %w: set oauth.tokenUrl", err)
		}
	}
	for _, e := range []struct{ what, url string }{{"authorization", authURL}, {"token", tokenURL}} {
		if err := checkEndpoint(e.url); err != nil {
			return nil, fmt.Errorf("oauth: the %s endpoint %w", e.what, err)
		}
	}
	ep := oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL}
	if o.ClientSecret == "" {
		// A public client (PKCE, no secret) names itself in the body
		// (RFC 6749 §2.3.1 leaves no header to send); trying the header
		// first would spend the one-time code on a refusal.
		ep.AuthStyle = oauth2.AuthStyleInParams
	}
	return &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes, Endpoint: ep}, nil
}

// SignInKey is where the token store keeps the sign-in of the openapi
// server c: its base URL, as an MCP server's is kept by its URL.
func SignInKey(c *config.Server, doc *openapi.Document) (string, error) {
	base, err := openAPIBase(c.OpenAPI.BaseURL, doc.Servers())
	if err != nil {
		return "", err
	}
	return oauthclient.StoreKey(base.String())
}

// RESTSignIn is what `mcpgate login` needs to sign a person in to the
// openapi server c, whose oauth grant is authorization_code: the OAuth
// client (without its RedirectURL, which the caller sets), the store key
// and an HTTP client for its token endpoint. It loads the description.
func RESTSignIn(ctx context.Context, c *config.Server) (cfg *oauth2.Config, key string, client *http.Client, err error) {
	if c.OpenAPI == nil || c.OAuth == nil || c.OAuth.Grant != "authorization_code" {
		return nil, "", nil, errors.New("not an openapi server with the authorization_code grant")
	}
	ctx, cancel := context.WithTimeout(ctx, openAPIWait)
	defer cancel()
	doc, err := openapi.Load(ctx, c.OpenAPI.Spec, openapi.LoadOptions{AllowRemoteRefs: c.OpenAPI.AllowRemoteRefs})
	if err != nil {
		return nil, "", nil, fmt.Errorf("the OpenAPI description: %w", err)
	}
	if cfg, err = signInConfig(c, doc); err != nil {
		return nil, "", nil, err
	}
	if key, err = SignInKey(c, doc); err != nil {
		return nil, "", nil, err
	}
	return cfg, key, tokenClient(http.DefaultTransport), nil
}

// refreshSignIn returns the kept sign-in of key when it is valid and not
// the one refused (old), else refreshes it and keeps the new token.
// Reading the store each time a token is missing picks up a new
// `mcpgate login` without a restart.
func refreshSignIn(ctx context.Context, store oauthclient.TokenStore, key string, cfg *oauth2.Config, client *http.Client, old *oauth2.Token) (*oauth2.Token, error) {
	if store == nil {
		return nil, errSignIn
	}
	kept, err := store.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("reading the kept sign-in: %w", err)
	}
	if kept == nil || kept.AccessToken == "" {
		return nil, errSignIn
	}
	tok := &oauth2.Token{AccessToken: kept.AccessToken, TokenType: kept.TokenType, RefreshToken: kept.RefreshToken, Expiry: kept.Expiry}
	if tok.Valid() && (old == nil || old.AccessToken != tok.AccessToken) {
		return tok, nil
	}
	if tok.RefreshToken == "" {
		return nil, errSignIn
	}
	// A token source with no access token refreshes at once.
	fresh, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, client), &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500 {
			return nil, fmt.Errorf("%w (the refresh was refused: %s)", errSignIn, re.ErrorCode)
		}
		return nil, err
	}
	next := *kept
	next.AccessToken, next.TokenType, next.Expiry = fresh.AccessToken, fresh.TokenType, fresh.Expiry
	if fresh.RefreshToken != "" {
		next.RefreshToken = fresh.RefreshToken
	}
	if err := store.Save(ctx, key, &next); err != nil {
		return nil, fmt.Errorf("keeping the refreshed sign-in: %w", err)
	}
	return fresh, nil
}

// errSignIn: there is no sign-in to use, or it was refused.
var errSignIn = errors.New("it needs a sign-in")

// describedEndpoint is the endpoint (as field picks it) of the
// description's flows of one kind, when they all name one.
func describedEndpoint(doc *openapi.Document, kind, what string, field func(openapi.OAuthFlow) string) (string, error) {
	var found []string
	for _, s := range doc.SecuritySchemes() {
		for _, f := range s.Flows {
			if e := field(f); f.Kind == kind && e != "" && !slices.Contains(found, e) {
				found = append(found, e)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("the description names no %s (in a %s flow)", what, kind)
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("the description's %s flows name %d different %ss", kind, len(found), what)
	}
}

// get returns a valid access token, asking the token endpoint for one
// when the kept one is missing or about to expire. Calls that need one at
// once wait for a single request.
func (t *restToken) get(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok.Valid() {
		return t.tok.AccessToken, nil
	}
	var old *oauth2.Token
	if t.refusal != "" {
		old = &oauth2.Token{AccessToken: t.refusal}
	}
	tok, err := t.renew(ctx, old)
	if err != nil {
		return "", t.explain(ctx, err)
	}
	t.tok, t.refusal = tok, ""
	return tok.AccessToken, nil
}

// refused forgets tok, which the API answered 401 to, unless a newer one
// replaced it meanwhile.
func (t *restToken) refused(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && t.tok.AccessToken == tok {
		t.tok, t.refusal = nil, tok
	}
}

// explain says why no token could be had, as the gateway's error for an
// unavailable upstream: the call did not reach the API. It names the
// endpoint's origin and the authorization server's error code, never a
// secret (the response body is not quoted).
func (t *restToken) explain(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	origin := origin(t.endpoint)
	var re *oauth2.RetrieveError
	var ne net.Error
	var msg string
	switch {
	case errors.Is(err, errSignIn):
		msg = fmt.Sprintf("%s: run `mcpgate login %s` as the user the gateway runs as", redact.String(err.Error()), t.server)
	case errors.As(err, &re) && re.Response != nil:
		code := re.ErrorCode
		if re.ErrorDescription != "" {
			code += ": " + re.ErrorDescription
		}
		msg = fmt.Sprintf("the token endpoint %s refused the gateway's client credentials (HTTP %d%s); check the server's oauth settings (clientId, clientSecret, scopes, tokenUrl)",
			origin, re.Response.StatusCode, strings.TrimSuffix(" "+code, " "))
	case errors.As(err, &ne):
		msg = fmt.Sprintf("the token endpoint %s could not be reached (%s)", origin, redact.String(ne.Error()))
	default:
		msg = fmt.Sprintf("no token from the token endpoint %s: %s", origin, redact.String(err.Error()))
	}
	return jsonrpc.Errorf(CodeUpstreamUnavailable, "Upstream %q is unavailable: %s", t.server, msg).WithData(map[string]any{"server": t.server})
}
