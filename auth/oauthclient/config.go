package oauthclient

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"
)

// Grant types.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is the JWT bearer grant (RFC 7523 §2.1): the client
	// presents an assertion from Config.Assertion, such as an ID-JAG from
	// an enterprise identity provider (enterprise-managed authorization,
	// SEP-990; see TokenExchange).
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
)

// Token endpoint client authentication methods (RFC 7591 §2, RFC 7523).
const (
	AuthMethodNone              = "none"
	AuthMethodClientSecretBasic = "client_secret_basic"
	AuthMethodClientSecretPost  = "client_secret_post"
	AuthMethodPrivateKeyJWT     = "private_key_jwt"
)

// Config configures a [Transport]. The zero value is not usable as is: the
// authorization code flow needs Authorize and RedirectURL, the client
// credentials flow a ClientID and a secret or private key, the JWT bearer
// flow a ClientID and Assertion.
type Config struct {
	// ServerURL is the MCP server's URL. Empty means the URL of each
	// request; setting it pins the Transport to that server, and requests
	// to other origins go out without a token.
	ServerURL string

	// GrantType is GrantAuthorizationCode (the default: a person signs
	// in), GrantClientCredentials (a machine authenticates as itself) or
	// GrantJWTBearer (an assertion, such as an enterprise IdP's ID-JAG,
	// stands for the user; no browser, no redirect).
	GrantType string

	// ClientID and ClientSecret identify a client registered beforehand
	// with the authorization server. They are used first when set.
	ClientID     string
	ClientSecret string
	// ClientMetadataURL is an https URL serving this client's metadata
	// document (the client ID metadata document draft). It is the client
	// ID when the authorization server advertises
	// client_id_metadata_document_supported.
	ClientMetadataURL string
	// ClientName is the client_name sent in dynamic client registration.
	// Default "mcpgate".
	ClientName string

	// TokenEndpointAuthMethod forces how the client authenticates to the
	// token endpoint. Empty means: private_key_jwt when PrivateKeyPEM is
	// set, else what registration returned, else the best method the
	// authorization server lists that the client's credentials allow
	// (client_secret_basic, client_secret_post, none).
	TokenEndpointAuthMethod string
	// PrivateKeyPEM signs private_key_jwt client assertions (RFC 7523):
	// an RSA, ECDSA or Ed25519 private key in PKCS #8, PKCS #1 or SEC 1
	// PEM form.
	PrivateKeyPEM string
	// SigningAlgorithm is the assertion's JWS algorithm, such as ES256 or
	// RS256. Empty means the usual one for the key.
	SigningAlgorithm string

	// RedirectURL is where the authorization server sends the browser
	// back to, registered with the client. Needed for the authorization
	// code flow: a LoopbackAuthorizer's RedirectURL, or any URL that
	// Authorize knows how to catch.
	RedirectURL string
	// Authorize sends the user agent to authURL and returns the URL the
	// authorization server redirected it to, from which the code and state
	// are read. See FollowRedirect and LoopbackAuthorizer.
	Authorize func(ctx context.Context, authURL string) (redirectURL string, err error)

	// Assertion returns the JWT assertion that GrantJWTBearer presents at
	// the MCP server's authorization server token endpoint: in
	// enterprise-managed authorization an ID-JAG, which
	// TokenExchange.Assertion obtains from the enterprise IdP. It is
	// called for every token, since assertions are short-lived and no
	// refresh token is expected: at the first 401, when the token expires
	// or is refused, and for a step-up. The client authenticates with
	// ClientID and ClientSecret (or PrivateKeyPEM) beside it.
	Assertion func(ctx context.Context, r AssertionRequest) (string, error)

	// Scopes are requested when neither the server's challenge nor its
	// resource metadata names any.
	Scopes []string
	// NoOfflineAccess stops the client from adding offline_access (which
	// asks for a refresh token) when the authorization server lists it.
	NoOfflineAccess bool
	// LenientPKCE sends S256 to an authorization server whose metadata
	// does not list code_challenge_methods_supported at all, as the
	// TypeScript SDK does, with a warning in the log. By default such a
	// server is refused (ErrPKCEUnsupported), as the MCP specification
	// requires: without the field the client cannot know PKCE protects
	// the code. One that lists methods without S256 is always refused.
	LenientPKCE bool
	// MaxStepUps bounds the re-authorizations a single request may cause
	// after 403 insufficient_scope. Default 1.
	MaxStepUps int
	// AllowInsecureHTTP permits http:// URLs for metadata, authorization
	// and token endpoints. Without it plain http is accepted only on a
	// loopback host, for an MCP server on a loopback host. Never in
	// production: tokens and codes would cross the network in clear.
	AllowInsecureHTTP bool
	// AllowPrivateNetworks permits metadata, registration and token
	// requests to private addresses (RFC 1918, RFC 4193, RFC 6598) for an
	// MCP server that is not itself at one: an internal server and
	// authorization server whose names resolve to private addresses.
	// Loopback and link-local addresses (cloud metadata services) stay
	// refused. Without it, an MCP server that is not on loopback or at a
	// private address may only send the client to public addresses.
	AllowPrivateNetworks bool
	// ProtocolVersion is sent as MCP-Protocol-Version when fetching
	// metadata, as the specification suggests. Default "2025-11-25".
	ProtocolVersion string

	// Store keeps tokens. Default: a MemoryStore.
	Store TokenStore
	// HTTPClient talks to the authorization server and fetches metadata.
	// Default: a client with a 30s timeout over the Transport's base
	// RoundTripper. It must not use this Transport. The Transport uses a
	// copy that follows no redirect, whatever its CheckRedirect; when its
	// Transport is an *http.Transport (or nil), a copy of that which
	// checks the addresses it connects to (see the package doc).
	HTTPClient *http.Client
	// Logger receives diagnostics (never tokens, codes or secrets).
	// Default slog.Default().
	Logger *slog.Logger
	// Now is the clock, for tests. Default time.Now.
	Now func() time.Time

	// lookupNetIP resolves host names before connecting, for tests that
	// give loopback servers public or private addresses. Default
	// net.DefaultResolver.
	lookupNetIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

// AssertionRequest says what a [Config.Assertion] is for.
type AssertionRequest struct {
	// Issuer is the authorization server's issuer identifier: the
	// audience of the assertion.
	Issuer string
	// TokenEndpoint is that authorization server's token endpoint.
	TokenEndpoint string
	// Resource is the MCP server's canonical resource URI (RFC 8707,
	// RFC 9728), which the token is requested for.
	Resource string
	// Scopes are the scopes about to be requested; may be empty.
	Scopes []string
}
