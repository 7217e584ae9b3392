// Package auth authenticates HTTP requests to an MCP server: Basic
// authentication against bcrypt hashes, static API keys sent as bearer
// tokens, and OAuth 2.1 access tokens (JWTs checked against the issuer's
// keys) with the protected-resource metadata clients need to find the
// authorization server. It is the server side; the client side of OAuth
// is package [github.com/mcpgate/mcpgate/auth/oauthclient].
//
// # Credentials
//
// A [Config] names the credentials accepted, any of which admits a
// request:
//
//   - [BasicUsers], from a user file of bcrypt hashes ([LoadBasicUsers];
//     [HashPassword] makes a line). Failed guesses are throttled per
//     address and per user name ([ThrottleConfig]).
//   - [APIKeys], from a file of SHA-256 hashes of keys ([LoadAPIKeys];
//     [NewAPIKey] makes a key and its line), sent as
//     "Authorization: Bearer KEY".
//   - [OAuth], a resource server for access tokens ([NewOAuth],
//     [OAuthConfig]): a token must be signed by the issuer's keys, carry
//     its iss, name this server in aud, and be within its lifetime.
//     [Config.MethodScopes] asks for more scopes per method or per tool,
//     with the insufficient_scope challenge that lets a client step up.
//
// # Serving
//
// [New] returns the [Middleware]. [Middleware.Wrap] authenticates every
// request (401 with a WWW-Authenticate challenge for each accepted kind
// of credential, 429 while throttled, 503 when the issuer's keys are out
// of reach) and serves the protected-resource metadata (RFC 9728).
// [Middleware.PrincipalID] and [Middleware.Authorize] are the functions
// that [github.com/mcpgate/mcpgate/mcphttp.Options] takes as Principal and
// Authorize: sessions belong to who opened them, and each JSON-RPC
// message is checked against [Config.MethodScopes].
//
// # Principals
//
// The authenticated caller is a [Principal], carried in the request's
// context to MCP handlers and middleware; [FromContext] returns it.
// [Principal.Key] is what state is bound to (sessions, tasks, stored
// events), [Principal.ID] the name people write in configuration files.
package auth
