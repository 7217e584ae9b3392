package oauthclient

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Token exchange (RFC 8693) identifiers of enterprise-managed
// authorization (SEP-990, the Identity Assertion JWT Authorization Grant
// draft).
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeIDJAG     = "urn:ietf:params:oauth:token-type:id-jag"
	tokenTypeIDToken   = "urn:ietf:params:oauth:token-type:id_token"
)

// TokenExchange obtains an ID-JAG (Identity Assertion JWT Authorization
// Grant) from the enterprise IdP by RFC 8693 token exchange of the user's
// ID token: the enterprise-managed authorization of MCP (SEP-990, cross-app
// access). The IdP decides by its policy whether the user may use the MCP
// server, and the ID-JAG it issues is the assertion of the JWT bearer
// grant at the MCP server's authorization server:
//
//	x := &oauthclient.TokenExchange{TokenEndpoint: idpTokenURL, ClientID: "app", ClientSecret: idpSecret, SubjectToken: idToken}
//	cfg := oauthclient.Config{GrantType: oauthclient.GrantJWTBearer, ClientID: "app-at-the-mcp-as", ClientSecret: asSecret, Assertion: x.Assertion()}
//
// Its fields must not change while a Transport may use it.
type TokenExchange struct {
	// TokenEndpoint is the IdP's token endpoint: https, or http on a
	// loopback host.
	TokenEndpoint string
	// ClientID is the client's id at the IdP.
	ClientID string
	// ClientSecret, when set, authenticates the client at the IdP
	// (client_secret_basic); without it client_id goes in the form.
	ClientSecret string
	// SubjectToken is the user's ID token from the IdP.
	SubjectToken string
	// SubjectTokenType is the type of SubjectToken. Default
	// "urn:ietf:params:oauth:token-type:id_token".
	SubjectTokenType string
	// HTTPClient talks to the IdP. Nil means http.DefaultClient. A copy
	// that follows no redirect is used, whatever its CheckRedirect: a 307
	// would send the ID token and the client secret to the redirect
	// target.
	HTTPClient *http.Client
}

// Assertion returns a [Config.Assertion] function performing the exchange:
// each call asks the IdP for a new ID-JAG whose audience is the
// authorization server's issuer, for the MCP server as resource and the
// requested scopes.
func (x *TokenExchange) Assertion() func(context.Context, AssertionRequest) (string, error) {
	return x.exchange
}

func (x *TokenExchange) exchange(ctx context.Context, r AssertionRequest) (string, error) {
	switch {
	case x.TokenEndpoint == "":
		return "", authErr(nil, "the token exchange needs TokenExchange.TokenEndpoint, the IdP's token endpoint")
	case x.ClientID == "":
		return "", authErr(nil, "the token exchange needs TokenExchange.ClientID, the client's id at the IdP")
	case x.SubjectToken == "":
		return "", authErr(nil, "the token exchange needs TokenExchange.SubjectToken, the user's ID token")
	case r.Issuer == "":
		return "", authErr(nil, "the token exchange needs the authorization server's issuer as audience")
	}
	u, err := url.Parse(x.TokenEndpoint)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", authErr(nil, "TokenExchange.TokenEndpoint %q is not an absolute URL", x.TokenEndpoint)
	}
	// The user's ID token never crosses a network in clear.
	if s := strings.ToLower(u.Scheme); s != "https" && (s != "http" || !isLoopback(u.Hostname())) {
		return "", authErr(nil, "TokenExchange.TokenEndpoint %s is neither https nor http on a loopback host; refusing to send the ID token there", x.TokenEndpoint)
	}
	subjectType := x.SubjectTokenType
	if subjectType == "" {
		subjectType = tokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"subject_token":        {x.SubjectToken},
		"subject_token_type":   {subjectType},
		"audience":             {r.Issuer},
	}
	if r.Resource != "" {
		form.Set("resource", r.Resource)
	}
	if len(r.Scopes) > 0 {
		form.Set("scope", strings.Join(r.Scopes, " "))
	}
	if x.ClientSecret == "" {
		form.Set("client_id", x.ClientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.TokenEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return "", authErr(nil, "the IdP's token endpoint %q: %v", x.TokenEndpoint, err)
	}
	if x.ClientSecret != "" {
		// RFC 6749 §2.3.1: both parts are form-encoded before base64.
		cred := url.QueryEscape(x.ClientID) + ":" + url.QueryEscape(x.ClientSecret)
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	hc := http.Client{}
	if x.HTTPClient != nil {
		hc = *x.HTTPClient
	}
	hc.CheckRedirect = noFollow
	resp, err := hc.Do(req)
	if err != nil {
		return "", wrapAuthErr(err, "the token exchange at the IdP's token endpoint %s failed", x.TokenEndpoint)
	}
	defer resp.Body.Close()
	if err := redirected(resp, "IdP's token endpoint", "token exchange"); err != nil {
		return "", err
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if resp.StatusCode != http.StatusOK {
		return "", authErr(nil, "the IdP's token endpoint %s refused the token exchange for %s: %s", x.TokenEndpoint, r.Issuer, describeOAuthError(resp.StatusCode, data))
	}
	var tr struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		return "", authErr(nil, "the IdP's token endpoint %s answered the token exchange with something other than JSON", x.TokenEndpoint)
	}
	if tr.IssuedTokenType != tokenTypeIDJAG {
		return "", authErr(nil, "the IdP's token endpoint %s issued a token of type %q, not an ID-JAG (%s); discarded", x.TokenEndpoint, tr.IssuedTokenType, tokenTypeIDJAG)
	}
	if tr.AccessToken == "" {
		return "", authErr(nil, "the IdP's token endpoint %s answered the token exchange without an access_token (the ID-JAG)", x.TokenEndpoint)
	}
	return tr.AccessToken, nil
}
