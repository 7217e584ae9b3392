package oauthclient

import (
	"errors"
	"fmt"
)

// ErrAuthorization wraps every failure to obtain or use an access token,
// so a caller can tell them apart from network errors:
// errors.Is(err, oauthclient.ErrAuthorization). Its text, "authorization
// required", starts every such message.
var ErrAuthorization = errors.New("authorization required")

// More specific reasons, wrapped together with ErrAuthorization.
var (
	// ErrResourceMismatch: the protected resource metadata names another
	// resource than the server being called, so a token obtained for it
	// could be replayed elsewhere (or the metadata is an attacker's).
	ErrResourceMismatch = errors.New("protected resource metadata names another resource")
	// ErrPKCEUnsupported: the authorization server does not offer S256.
	ErrPKCEUnsupported = errors.New("the authorization server does not support PKCE S256")
	// ErrNoClientIdentity: no pre-registered client, no usable client ID
	// metadata document and no dynamic registration.
	ErrNoClientIdentity = errors.New("no way to identify this client to the authorization server")
	// ErrStepUpRefused: the server keeps answering 403 insufficient_scope
	// although the scopes it asks for were requested already.
	ErrStepUpRefused = errors.New("the server keeps refusing the requested scopes")
	// ErrBodyNotReplayable: the request must be sent again with a token,
	// but its body cannot be read twice.
	ErrBodyNotReplayable = errors.New("the request body cannot be sent again")
	// ErrSignInRequired: the authorization code grant needs a person to
	// sign in (no token is kept, or its refresh was refused), and this
	// Transport has no Config.Authorize to ask one: a headless client
	// using tokens someone obtained elsewhere, such as a gateway.
	ErrSignInRequired = errors.New("a person must sign in")
	// ErrRedirect: a metadata, registration or token request was answered
	// with a redirect, which the client does not follow: a 307 would send
	// the client's credentials to wherever the server points (RFC 9700).
	ErrRedirect = errors.New("a redirect was not followed")
	// ErrPrivateAddress: a metadata, registration, authorization or token
	// URL is at a loopback, link-local or private address, nearer to this
	// machine than the MCP server it is for (server-side request
	// forgery); see the package doc.
	ErrPrivateAddress = errors.New("an address nearer than the MCP server was refused")
	// ErrTemporary: the authorization server could not be reached, or
	// answered with a server error or 429. Trying again later may work;
	// a token whose refresh failed so is kept, not dropped.
	ErrTemporary = errors.New("the authorization server is unavailable")
)

// authErr builds an error that matches ErrAuthorization (and reason, when
// not nil) and reads "authorization required: <message>".
func authErr(reason error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if reason == nil {
		return &authError{msg: msg}
	}
	return &authError{msg: msg, reason: reason}
}

type authError struct {
	msg    string
	reason error
	cause  error
}

func (e *authError) Error() string {
	s := ErrAuthorization.Error() + ": " + e.msg
	if e.cause != nil {
		s += ": " + e.cause.Error()
	}
	return s
}

func (e *authError) Unwrap() []error {
	errs := []error{ErrAuthorization}
	if e.reason != nil {
		errs = append(errs, e.reason)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}

// temporaryErr is an authError for a failure that may pass: it matches
// ErrAuthorization and ErrTemporary, and keeps cause (which may be nil).
func temporaryErr(cause error, format string, args ...any) error {
	return &authError{msg: fmt.Sprintf(format, args...), reason: ErrTemporary, cause: cause}
}

// wrapAuthErr is authErr with an underlying cause (a network error, a
// context cancellation) appended to the message and kept for errors.Is.
func wrapAuthErr(cause error, format string, args ...any) error {
	var ae *authError
	if errors.As(cause, &ae) {
		return cause // already explained
	}
	return &authError{msg: fmt.Sprintf(format, args...), cause: cause}
}
