package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/openapi"
)

// restToken is the access token of a REST API upstream whose oauth grant
// is client_credentials, got from the token endpoint and kept until it
// expires or the API refuses it.
//
// The token endpoint of a REST API is named by its description (an
// oauth2 scheme's clientCredentials flow) or by oauth.tokenUrl, not
// found by MCP's discovery, so golang.org/x/oauth2's clientcredentials
// does the grant rather than auth/oauthclient.
type restToken struct {
	server  string
	schemes []string // the description's oauth2 and openIdConnect schemes
	cfg     clientcredentials.Config
	client  *http.Client // to the token endpoint: bounded, no redirects

	mu  sync.Mutex
	tok *oauth2.Token
}

// tokenTimeout bounds one token request.
const tokenTimeout = 30 * time.Second

func newRESTToken(u *upstream, c *config.Server, doc *openapi.Document) (*restToken, error) {
	tokenURL, from := c.OAuth.TokenURL, "oauth.tokenUrl"
	if tokenURL == "" {
		var err error
		if tokenURL, err = describedTokenURL(doc); err != nil {
			return nil, err
		}
		from = "the description's clientCredentials flow"
	}
	t, err := url.Parse(tokenURL)
	if err != nil || t.Host == "" || (t.Scheme != "https" && !(t.Scheme == "http" && isLoopbackHost(t.Hostname()))) {
		// The client secret goes there: only over TLS, or to this machine.
		return nil, fmt.Errorf("the token endpoint from %s is not an https URL (http only on a loopback host): set oauth.tokenUrl", from)
	}
	u.logger.Info("gateway: REST API tokens from the client_credentials grant", "tokenEndpoint", t.Scheme+"://"+t.Host, "from", from)
	var schemes []string
	for _, s := range doc.SecuritySchemes() {
		if s.Type == "oauth2" || s.Type == "openIdConnect" {
			schemes = append(schemes, s.Name)
		}
	}
	return &restToken{
		server:  c.Name,
		schemes: schemes,
		cfg:     clientcredentials.Config{ClientID: c.OAuth.ClientID, ClientSecret: c.OAuth.ClientSecret, TokenURL: tokenURL, Scopes: c.OAuth.Scopes},
		client: &http.Client{
			Transport:     u.g.tracing.transport(http.DefaultTransport),
			Timeout:       tokenTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}, nil
}

// describedTokenURL is the token endpoint of the description's
// clientCredentials flows, when they all name one.
func describedTokenURL(doc *openapi.Document) (string, error) {
	var found []string
	for _, s := range doc.SecuritySchemes() {
		for _, f := range s.Flows {
			if f.Kind == "clientCredentials" && f.TokenURL != "" && !strings.Contains(strings.Join(found, " "), f.TokenURL) {
				found = append(found, f.TokenURL)
			}
		}
	}
	switch len(found) {
	case 0:
		return "", errors.New("oauth: the description declares no clientCredentials flow with a token endpoint: set oauth.tokenUrl")
	case 1:
		return found[0], nil
	default:
		return "", fmt.Errorf("oauth: the description's clientCredentials flows name %d token endpoints: set oauth.tokenUrl to the one to use", len(found))
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
	tok, err := t.cfg.Token(context.WithValue(ctx, oauth2.HTTPClient, t.client))
	if err != nil {
		return "", t.explain(ctx, err)
	}
	t.tok = tok
	return tok.AccessToken, nil
}

// refused forgets tok, which the API answered 401 to, unless a newer one
// replaced it meanwhile.
func (t *restToken) refused(tok string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tok != nil && t.tok.AccessToken == tok {
		t.tok = nil
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
	origin := t.cfg.TokenURL
	if u, perr := url.Parse(t.cfg.TokenURL); perr == nil {
		origin = u.Scheme + "://" + u.Host
	}
	var re *oauth2.RetrieveError
	var ne net.Error
	var msg string
	switch {
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
