// Package oauthclient is the client side of MCP authorization (the
// 2025-11-25 specification, basic/authorization): a [Transport], an
// http.RoundTripper that obtains OAuth 2.1 access tokens for an MCP
// server and sends them. The server side is package
// [github.com/mcpgate/mcpgate/auth].
//
// Make one with [NewTransport] and put it under the HTTP client of an MCP
// transport, such as mcphttp.ClientTransport:
//
//	hc := &http.Client{Transport: oauthclient.NewTransport(cfg, nil)}
//
// # Obtaining a token
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
// # Signing in
//
// The person's part (signing in at the authorization server) is
// [Config.Authorize]: a [LoopbackAuthorizer] for command-line tools, or
// [FollowRedirect] for servers that redirect without asking. Tokens are
// kept in a [TokenStore] ([Config.Store]: a [FileStore] across runs, a
// [MemoryStore] for the life of the process).
//
// Enterprise-managed authorization (SEP-990, cross-app access) needs no
// browser: with [GrantJWTBearer] the Transport asks [Config.Assertion] for
// a JWT for the MCP server's authorization server and resource, and
// presents it in the JWT bearer grant (RFC 7523), authenticating with the
// pre-registered ClientID and ClientSecret. [TokenExchange.Assertion]
// obtains that JWT, an ID-JAG, from the enterprise IdP by RFC 8693 token
// exchange of the user's ID token, so the IdP's policy decides which MCP
// servers the user may reach. A new ID-JAG is obtained whenever a token is
// needed: at first, on expiry, on refusal and for a step-up.
//
// # Where the client's own requests may go
//
// The URLs of metadata, registration and token requests come from the
// servers, so a hostile MCP server could use them to reach what the
// client can reach and it cannot (server-side request forgery), or to
// collect the client's credentials. As the MCP authorization
// specification and the OAuth security BCP (RFC 9700) expect:
//
//   - The protected resource metadata is read on the MCP server's own
//     origin: a resource_metadata of a challenge that points elsewhere is
//     ignored, with a warning, for the well-known URIs derived from the
//     server URL. The authorization server is one that this metadata
//     lists (or, without metadata, the server's origin).
//   - No redirect is followed for metadata, registration, token or token
//     exchange requests: a redirect is an error ([ErrRedirect]) naming its
//     target, since a 307 would send the client's credentials there.
//   - https is required; plain http only on a loopback host, for an MCP
//     server on a loopback host ([Config.AllowInsecureHTTP] lifts this, for
//     development).
//   - No request goes to an address nearer to this machine than the MCP
//     server itself ([ErrPrivateAddress]): for a server on loopback anything
//     goes; for one at a private address, private and public addresses;
//     for any other, including every server named by DNS, public
//     addresses only, which excludes loopback, link-local (cloud metadata
//     services) and private ones. [Config.AllowPrivateNetworks] admits
//     private addresses for internal servers named by DNS. The URL is
//     checked, and then every address its name resolves to, when
//     connecting, so a name that resolves to 127.0.0.1 is refused too.
//     A proxy from the environment is the operator's, and is connected
//     to; it resolves the names it is asked for. A [Config.HTTPClient]
//     whose Transport is not an *http.Transport cannot be told where to
//     connect: only its URLs are checked.
//
// Nothing is written to standard output; diagnostics go to a slog.Logger
// and never contain tokens, codes or secrets.
package oauthclient
