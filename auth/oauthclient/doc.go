// Package oauthclient is the client side of MCP authorization (the
// 2025-11-25 specification, basic/authorization): an http.RoundTripper
// that obtains OAuth 2.1 access tokens for an MCP server and sends them.
//
// Put it under the HTTP client of an MCP transport:
//
//	hc := &http.Client{Transport: oauthclient.NewTransport(cfg, nil)}
//
// When the server answers 401, the Transport reads its WWW-Authenticate
// challenge, fetches the protected resource metadata (RFC 9728) from the
// challenge's resource_metadata or the well-known URIs, checks that it is
// for this server, finds the authorization server's metadata (RFC 8414 or
// OpenID Connect Discovery), identifies the client (pre-registered, a
// client ID metadata document, or dynamic registration per RFC 7591),
// obtains a token (authorization code with PKCE S256, client credentials,
// or a JWT bearer assertion) for the server as RFC 8707 resource, and
// sends the request again. A server of the 2025-03-26 revision, without
// resource metadata, is its own authorization server, with /authorize,
// /token and /register as last resort.
//
// It refreshes tokens when they expire or are refused, with one refresh
// shared by concurrent requests; asks for more scopes when a server
// answers 403 insufficient_scope, a bounded number of times; and sends a
// token only to the origin it was obtained for.
//
// The person's part (signing in at the authorization server) is
// Config.Authorize: LoopbackAuthorizer for command-line tools, or
// FollowRedirect for servers that redirect without asking.
//
// Enterprise-managed authorization (SEP-990, cross-app access) needs no
// browser: with GrantJWTBearer the Transport asks Config.Assertion for a
// JWT for the MCP server's authorization server and resource, and presents
// it in the JWT bearer grant (RFC 7523), authenticating with the
// pre-registered ClientID and ClientSecret. TokenExchange.Assertion obtains
// that JWT, an ID-JAG, from the enterprise IdP by RFC 8693 token exchange
// of the user's ID token, so the IdP's policy decides which MCP servers the
// user may reach. A new ID-JAG is obtained whenever a token is needed: at
// first, on expiry, on refusal and for a step-up.
//
// Nothing is written to standard output; diagnostics go to a slog.Logger
// and never contain tokens, codes or secrets.
package oauthclient
