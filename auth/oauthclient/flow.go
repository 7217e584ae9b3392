package oauthclient

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// clientIdentity is how the client presents itself to one authorization
// server.
type clientIdentity struct {
	issuer string
	id     string
	secret string
	// method is the token endpoint auth method chosen for this client.
	method string
	// dynamic: obtained by dynamic registration (its secret is stored with
	// the token, since nothing else remembers it).
	dynamic bool
}

// identify picks the client's identity for the authorization server, in
// the MCP specification's order: pre-registered, client ID metadata
// document, dynamic registration.
func (t *Transport) identify(ctx context.Context, as *serverMetadata, known *clientIdentity) (*clientIdentity, error) {
	if known != nil && known.issuer == as.Issuer {
		return known, nil // registered already: do not register again
	}
	cfg := &t.cfg
	switch {
	case cfg.ClientID != "":
		id := &clientIdentity{issuer: as.Issuer, id: cfg.ClientID, secret: cfg.ClientSecret}
		id.method = t.authMethod(as, id, "")
		return id, nil
	case cfg.ClientMetadataURL != "" && as.ClientIDMetadataDocumentSupported:
		id := &clientIdentity{issuer: as.Issuer, id: cfg.ClientMetadataURL}
		id.method = t.authMethod(as, id, "")
		return id, nil
	case as.RegistrationEndpoint != "":
		return t.register(ctx, as)
	}
	why := "it has no registration_endpoint"
	if cfg.ClientMetadataURL != "" {
		why += " and does not advertise client_id_metadata_document_supported"
	} else if as.ClientIDMetadataDocumentSupported {
		why += "; it accepts client ID metadata documents, so Config.ClientMetadataURL would do"
	}
	return nil, authErr(ErrNoClientIdentity, "the authorization server %s offers no way to register this client (%s); configure a pre-registered Config.ClientID", as.Issuer, why)
}

// authMethod chooses how the client authenticates at the token endpoint.
func (t *Transport) authMethod(as *serverMetadata, id *clientIdentity, registered string) string {
	switch {
	case t.cfg.TokenEndpointAuthMethod != "":
		return t.cfg.TokenEndpointAuthMethod
	case t.signer != nil:
		return AuthMethodPrivateKeyJWT
	case registered != "":
		return registered // what the authorization server said it expects
	case id.secret == "":
		return AuthMethodNone
	}
	supported := as.TokenEndpointAuthMethodsSupported
	if len(supported) == 0 {
		return AuthMethodClientSecretBasic // RFC 8414 §2: the default when none is listed
	}
	for _, m := range []string{AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodNone} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return AuthMethodClientSecretBasic
}

// register performs dynamic client registration (RFC 7591).
func (t *Transport) register(ctx context.Context, as *serverMetadata) (*clientIdentity, error) {
	cfg := &t.cfg
	meta := map[string]any{"client_name": cfg.ClientName}
	machine := cfg.GrantType != GrantAuthorizationCode // client credentials, JWT bearer
	if machine {
		meta["grant_types"] = []string{cfg.GrantType}
	} else {
		meta["redirect_uris"] = []string{cfg.RedirectURL}
		// refresh_token tells the server this client can keep refresh
		// tokens (SEP-2207).
		meta["grant_types"] = []string{GrantAuthorizationCode, "refresh_token"}
		meta["response_types"] = []string{"code"}
	}
	// Ask for the method the token endpoint accepts: a public client
	// ("none") unless the server wants a secret.
	method := AuthMethodNone
	if s := as.TokenEndpointAuthMethodsSupported; len(s) > 0 && !slices.Contains(s, AuthMethodNone) {
		method = AuthMethodClientSecretBasic
		if !slices.Contains(s, method) && slices.Contains(s, AuthMethodClientSecretPost) {
			method = AuthMethodClientSecretPost
		}
	}
	if machine {
		method = AuthMethodClientSecretBasic
	}
	meta["token_endpoint_auth_method"] = method
	// SEP-837: "native" for apps whose redirect comes back to this
	// machine (CLIs, desktop apps) or that have none, "web" otherwise.
	meta["application_type"] = "native"
	if u, err := url.Parse(cfg.RedirectURL); err == nil && !machine && u.Host != "" && !isLoopback(u.Hostname()) {
		meta["application_type"] = "web"
	}
	body, _ := json.Marshal(meta)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, as.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, authErr(nil, "registration endpoint %q: %v", as.RegistrationEndpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := t.do(req, "registration endpoint", "registration")
	if err != nil {
		return nil, wrapAuthErr(err, "registering the client at %s", as.RegistrationEndpoint)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return nil, authErr(nil, "the authorization server refused to register the client at %s: %s", as.RegistrationEndpoint, describeOAuthError(resp.StatusCode, data))
	}
	var reg struct {
		ClientID                string `json:"client_id"`
		ClientSecret            string `json:"client_secret"`
		TokenEndpointAuthMethod string `json:"token_endpoint_auth_method"`
	}
	if err := json.Unmarshal(data, &reg); err != nil || reg.ClientID == "" {
		return nil, authErr(nil, "the registration response of %s has no client_id", as.RegistrationEndpoint)
	}
	id := &clientIdentity{issuer: as.Issuer, id: reg.ClientID, secret: reg.ClientSecret, dynamic: true}
	id.method = t.authMethod(as, id, reg.TokenEndpointAuthMethod)
	t.log.Info("oauthclient: registered the client", "issuer", as.Issuer, "client_id", reg.ClientID, "token_endpoint_auth_method", id.method)
	return id, nil
}

// authorizeCode runs the authorization code grant with PKCE S256.
func (t *Transport) authorizeCode(ctx context.Context, d *discovery, id *clientIdentity, scopes []string) (*tokenResponse, error) {
	cfg := &t.cfg
	as := d.as
	if cfg.Authorize == nil || cfg.RedirectURL == "" {
		return nil, authErr(nil, "the server at %s needs a user to sign in at %s, but Config.Authorize or Config.RedirectURL is not set", d.resource, as.Issuer)
	}
	if as.AuthorizationEndpoint == "" {
		return nil, authErr(nil, "the authorization server metadata at %s has no authorization_endpoint", as.source)
	}
	switch m := as.CodeChallengeMethodsSupported; {
	case m != nil && !slices.Contains(*m, "S256"):
		return nil, authErr(ErrPKCEUnsupported, "the server's authorization server at %s does not support PKCE S256 (code_challenge_methods_supported: %q)", as.Issuer, *m)
	case m == nil && as.source != "" && !cfg.LenientPKCE:
		return nil, authErr(ErrPKCEUnsupported, "the server's authorization server at %s does not advertise PKCE support (its metadata has no code_challenge_methods_supported), so the sign-in was not started; Config.LenientPKCE sends S256 anyway", as.Issuer)
	case m == nil && as.source != "":
		t.log.Warn("oauthclient: the authorization server does not advertise code_challenge_methods_supported; sending S256 anyway", "issuer", as.Issuer)
	}
	if r := as.ResponseTypesSupported; len(r) > 0 && !slices.Contains(r, "code") {
		return nil, authErr(nil, "the authorization server %s does not support the authorization code flow (response_types_supported: %q)", as.Issuer, r)
	}
	if g := as.GrantTypesSupported; len(g) > 0 && !slices.Contains(g, GrantAuthorizationCode) {
		return nil, authErr(nil, "the authorization server %s does not support the authorization_code grant (grant_types_supported: %q)", as.Issuer, g)
	}
	authURL, err := t.checkURL(ctx, as.AuthorizationEndpoint, "authorization endpoint")
	if err != nil {
		return nil, err
	}
	verifier := randomString(32)
	sum := sha256.Sum256([]byte(verifier))
	state := randomString(24)
	q := authURL.Query()
	q.Set("response_type", "code")
	q.Set("client_id", id.id)
	q.Set("redirect_uri", cfg.RedirectURL)
	q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(sum[:]))
	q.Set("code_challenge_method", "S256")
	q.Set("state", state)
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	q.Set("resource", d.resource)
	authURL.RawQuery = q.Encode()

	t.log.Info("oauthclient: asking the user to authorize", "issuer", as.Issuer, "client_id", id.id, "scopes", scopes)
	redirect, err := cfg.Authorize(ctx, authURL.String())
	if err != nil {
		return nil, wrapAuthErr(err, "the sign-in at %s did not complete", as.Issuer)
	}
	ru, err := url.Parse(redirect)
	if err != nil {
		return nil, authErr(nil, "Config.Authorize returned an unreadable redirect URL: %v", err)
	}
	rq := ru.Query()
	// The state binds the answer to this request; anything else may be a
	// forged redirect (CSRF) and is discarded before looking further.
	if rq.Get("state") != state {
		return nil, authErr(nil, "the authorization response carries the wrong state, so it was discarded (a stale or forged redirect)")
	}
	if e := rq.Get("error"); e != "" {
		msg := e
		if desc := rq.Get("error_description"); desc != "" {
			msg += ": " + desc
		}
		return nil, authErr(nil, "the authorization server %s refused the authorization: %s", as.Issuer, msg)
	}
	// RFC 9207: a server that sends iss lets the client check the answer
	// comes from the server it asked (mix-up attacks). The comparison is
	// exact, with no normalisation of any kind (RFC 9207 §2.4, SEP-2468).
	iss := rq.Get("iss")
	if (as.AuthorizationResponseIssParameterSupported || iss != "") && iss != as.Issuer {
		return nil, authErr(nil, "the authorization response names the issuer %q, not %q; discarded", iss, as.Issuer)
	}
	code := rq.Get("code")
	if code == "" {
		return nil, authErr(nil, "the authorization response has no code")
	}
	form := url.Values{
		"grant_type":    {GrantAuthorizationCode},
		"code":          {code},
		"redirect_uri":  {cfg.RedirectURL},
		"code_verifier": {verifier},
		"resource":      {d.resource},
	}
	return t.tokenRequest(ctx, as.TokenEndpoint, as.Issuer, form, id)
}

// clientCredentials runs the client credentials grant.
func (t *Transport) clientCredentials(ctx context.Context, endpoint, issuer, resource string, id *clientIdentity, scopes []string) (*tokenResponse, error) {
	form := url.Values{"grant_type": {GrantClientCredentials}, "resource": {resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, endpoint, issuer, form, id)
}

// jwtBearer runs the JWT bearer grant (RFC 7523 §2.1) with an assertion
// from Config.Assertion, obtained afresh for every token: in
// enterprise-managed authorization (SEP-990), an ID-JAG for this
// authorization server and resource.
func (t *Transport) jwtBearer(ctx context.Context, endpoint, issuer, resource string, id *clientIdentity, scopes []string) (*tokenResponse, error) {
	// A token endpoint the assertion could not be sent to is refused
	// before one is asked for.
	if _, err := t.checkURL(ctx, endpoint, "token endpoint"); err != nil {
		return nil, err
	}
	assertion, err := t.cfg.Assertion(ctx, AssertionRequest{Issuer: issuer, TokenEndpoint: endpoint, Resource: resource, Scopes: slices.Clone(scopes)})
	if err != nil {
		return nil, wrapAuthErr(err, "obtaining an assertion for the authorization server %s", issuer)
	}
	if assertion == "" {
		return nil, authErr(nil, "Config.Assertion returned no assertion for the authorization server %s", issuer)
	}
	form := url.Values{"grant_type": {GrantJWTBearer}, "assertion": {assertion}, "resource": {resource}}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return t.tokenRequest(ctx, endpoint, issuer, form, id)
}

// machineGrant obtains a token without a user: the client credentials or
// the JWT bearer grant, as configured.
func (t *Transport) machineGrant(ctx context.Context, endpoint, issuer, resource string, id *clientIdentity, scopes []string) (*tokenResponse, error) {
	if t.cfg.GrantType == GrantJWTBearer {
		return t.jwtBearer(ctx, endpoint, issuer, resource, id, scopes)
	}
	return t.clientCredentials(ctx, endpoint, issuer, resource, id, scopes)
}

// refresh exchanges a refresh token (RFC 6749 §6), keeping the resource.
func (t *Transport) refresh(ctx context.Context, tok *Token, id *clientIdentity) (*tokenResponse, error) {
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.RefreshToken}}
	if tok.Resource != "" {
		form.Set("resource", tok.Resource)
	}
	return t.tokenRequest(ctx, tok.TokenEndpoint, tok.Issuer, form, id)
}

type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"` // a number, or a string from some servers
	Scope        string          `json:"scope"`
}

// tokenError is an error response of the token endpoint (RFC 6749 §5.2).
type tokenError struct {
	endpoint string
	grant    string
	status   int
	code     string
	detail   string
}

func (e *tokenError) Error() string {
	return fmt.Sprintf("the token endpoint %s refused the %s request: %s", e.endpoint, e.grant, e.detail)
}

// tokenRequest POSTs a token request, authenticating the client.
func (t *Transport) tokenRequest(ctx context.Context, endpoint, issuer string, form url.Values, id *clientIdentity) (*tokenResponse, error) {
	if _, err := t.checkURL(ctx, endpoint, "token endpoint"); err != nil {
		return nil, err
	}
	header := http.Header{}
	switch id.method {
	case AuthMethodClientSecretBasic:
		// RFC 6749 §2.3.1: both parts are form-encoded before base64.
		cred := url.QueryEscape(id.id) + ":" + url.QueryEscape(id.secret)
		header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
	case AuthMethodClientSecretPost:
		form.Set("client_id", id.id)
		form.Set("client_secret", id.secret)
	case AuthMethodPrivateKeyJWT:
		if t.signer == nil {
			return nil, authErr(nil, "the token endpoint %s wants private_key_jwt, but no Config.PrivateKeyPEM is set", endpoint)
		}
		// RFC 7523bis: the audience is the authorization server's issuer
		// identifier; without one, its token endpoint.
		aud := issuer
		if aud == "" {
			aud = endpoint
		}
		assertion, err := t.signer.assertion(id.id, aud, t.now())
		if err != nil {
			return nil, authErr(nil, "signing the client assertion: %v", err)
		}
		form.Set("client_id", id.id)
		form.Set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
		form.Set("client_assertion", assertion)
	default: // none, or a method we cannot perform: identify as a public client
		form.Set("client_id", id.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, authErr(nil, "token endpoint %q: %v", endpoint, err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	grant := form.Get("grant_type")
	resp, err := t.do(req, "token endpoint", "token")
	if err != nil {
		if errors.Is(err, ErrAuthorization) {
			return nil, err // a redirect, a refused address: not the network's fault
		}
		if ctx.Err() != nil {
			return nil, wrapAuthErr(err, "the %s request to the token endpoint %s failed", grant, endpoint)
		}
		return nil, temporaryErr(err, "the %s request to the token endpoint %s failed", grant, endpoint)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if resp.StatusCode != http.StatusOK {
		te := &tokenError{endpoint: endpoint, grant: grant, status: resp.StatusCode, detail: describeOAuthError(resp.StatusCode, data)}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil {
			te.code = e.Error
		}
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			// Not a refusal of the grant: the server is failing or busy.
			return nil, &authError{msg: te.Error(), reason: te, cause: ErrTemporary}
		}
		return nil, &authError{msg: te.Error(), reason: te}
	}
	var tr tokenResponse
	if err := json.Unmarshal(data, &tr); err != nil || tr.AccessToken == "" {
		return nil, authErr(nil, "the token endpoint %s answered the %s request without an access_token", endpoint, grant)
	}
	// Only bearer tokens can be sent the way this client does; a DPoP or
	// other bound token would be refused by the server anyway.
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, authErr(nil, "the token endpoint %s issued a %q token; only Bearer tokens are supported", endpoint, tr.TokenType)
	}
	return &tr, nil
}

// expiry reads expires_in, which is a number but arrives as a string from
// some servers; zero means the token does not say.
func (tr *tokenResponse) expiry(now time.Time) time.Time {
	raw := strings.Trim(string(tr.ExpiresIn), `"`)
	if raw == "" || raw == "null" {
		return time.Time{}
	}
	secs, err := strconv.ParseFloat(raw, 64)
	if err != nil || secs <= 0 {
		return time.Time{}
	}
	return now.Add(time.Duration(secs * float64(time.Second)))
}

// describeOAuthError renders an OAuth error body ({"error": …,
// "error_description": …}) or, failing that, the status.
func describeOAuthError(status int, body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		if e.Description != "" {
			return fmt.Sprintf("%s (%s), HTTP %d", e.Error, e.Description, status)
		}
		return fmt.Sprintf("%s, HTTP %d", e.Error, status)
	}
	return fmt.Sprintf("HTTP %d", status)
}

// randomString returns n random bytes, base64url-encoded: PKCE verifiers
// (32 bytes give the recommended 43 characters), states and JWT ids.
func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// signer signs private_key_jwt client assertions (RFC 7523 §2.2).
type signer struct {
	key crypto.Signer
	alg jwa.SignatureAlgorithm
}

func newSigner(pemText, algName string) (*signer, error) {
	block, _ := pem.Decode([]byte(pemText))
	if block == nil {
		return nil, errors.New("Config.PrivateKeyPEM holds no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("Config.PrivateKeyPEM: %w", err)
	}
	s := &signer{}
	var ok bool
	if s.key, ok = key.(crypto.Signer); !ok {
		return nil, fmt.Errorf("Config.PrivateKeyPEM: unsupported key type %T", key)
	}
	if algName == "" {
		switch k := key.(type) {
		case *rsa.PrivateKey:
			algName = "RS256"
		case *ecdsa.PrivateKey:
			switch k.Curve {
			case elliptic.P256():
				algName = "ES256"
			case elliptic.P384():
				algName = "ES384"
			case elliptic.P521():
				algName = "ES512"
			}
		case ed25519.PrivateKey:
			algName = "EdDSA"
		}
	}
	if s.alg, ok = jwa.LookupSignatureAlgorithm(algName); !ok {
		return nil, fmt.Errorf("Config.SigningAlgorithm %q is not a known JWS algorithm", algName)
	}
	// Sign once now, so a key that does not fit the algorithm is reported
	// at configuration time rather than at the first token request.
	if _, err := s.assertion("check", "https://check.invalid", time.Now()); err != nil {
		return nil, fmt.Errorf("Config.PrivateKeyPEM cannot sign %s: %w", algName, err)
	}
	return s, nil
}

func (s *signer) assertion(clientID, audience string, now time.Time) (string, error) {
	tok, err := jwt.NewBuilder().
		Issuer(clientID).
		Subject(clientID).
		Audience([]string{audience}).
		IssuedAt(now).
		NotBefore(now.Add(-30 * time.Second)).
		Expiration(now.Add(5 * time.Minute)).
		JwtID(randomString(16)).
		Build()
	if err != nil {
		return "", err
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(s.alg, s.key))
	if err != nil {
		return "", err
	}
	return string(signed), nil
}
