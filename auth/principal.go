package auth

import (
	"context"
	"encoding/json"
	"slices"
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// Method is how the caller proved who it is: "basic", "apikey" or
	// "oauth".
	Method string
	// Issuer is the verified token's iss (OAuth only; empty otherwise).
	Issuer string
	// Subject is the user name, the API key's name or the token's sub.
	Subject string
	// Scopes are the OAuth scopes granted to the token (empty otherwise).
	Scopes []string
	// Claims are the verified token's claims (OAuth only), each at most
	// [MaxClaimSize] bytes of JSON and together at most [MaxClaimsSize]:
	// the smallest are kept first, larger ones are left out.
	Claims map[string]any
}

// ID names the principal as people write it in configuration files:
// "apikey:ci", "basic:alice", "oauth:SUBJECT". It is a display name, not
// a binding key: it leaves out the issuer, and it is not meant to be
// composed with other names. Bind state to [Principal.Key].
func (p *Principal) ID() string {
	if p == nil {
		return ""
	}
	return p.Method + ":" + p.Subject
}

// Key is the key that sessions, tasks and stored events are bound to: a
// JSON array of Method, Issuer and Subject, as encoding/json writes it,
// such as ["oauth","https://login.example.com","alice"] or
// ["basic","","bob"]. The quoting keeps it unambiguous whatever the names
// hold, and subjects of different issuers apart. The encoding is stable:
// a key stored today is the key of the same principal tomorrow. The
// principals this package makes hold valid UTF-8 (names are checked when
// their files are loaded, claims come from JSON); invalid bytes would be
// written as U+FFFD. A nil principal (anonymous) has the key "".
//
// To bind state to more than the principal (a tenant, say), encode the
// longer array (Method, Issuer, Subject, then the rest) the same way
// rather than joining strings to the key, so that it stays unambiguous.
func (p *Principal) Key() string {
	if p == nil {
		return ""
	}
	b, _ := json.Marshal([3]string{p.Method, p.Issuer, p.Subject})
	return string(b)
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
