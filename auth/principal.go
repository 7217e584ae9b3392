// Package auth authenticates HTTP requests to an MCP server: Basic
// authentication against bcrypt hashes, static API keys sent as bearer
// tokens, and OAuth 2.1 access tokens (JWTs checked against the issuer's
// keys) with the protected-resource metadata clients need to find the
// authorization server. The authenticated Principal travels in the
// request's context to MCP handlers and middleware.
package auth

import (
	"context"
	"slices"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// Method is how the caller proved who it is: "basic", "apikey" or
	// "oauth".
	Method string
	// Subject is the user name, the API key's name or the token's sub.
	Subject string
	// Scopes are the OAuth scopes granted to the token (empty otherwise).
	Scopes []string
	// Claims are the verified token's claims (OAuth only).
	Claims map[string]any
}

// ID names the principal uniquely across methods; sessions and stored
// events are bound to it.
func (p *Principal) ID() string {
	if p == nil {
		return ""
	}
	return p.Method + ":" + p.Subject
}

// HasScope reports whether the principal was granted scope.
func (p *Principal) HasScope(scope string) bool {
	return p != nil && slices.Contains(p.Scopes, scope)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request ctx belongs to, or nil
// for an anonymous one. MCP handlers receive contexts that carry it.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}
