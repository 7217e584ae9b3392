package main

import (
	"context"
	"net/http"

	"github.com/spf13/pflag"
)

// authFlags configure inbound authentication (filled in with the auth
// package).
type authFlags struct{}

func (a *authFlags) register(fl *pflag.FlagSet) {}

type authenticator interface {
	Wrap(http.Handler) http.Handler
	PrincipalID(*http.Request) string
}

func (a *authFlags) build(ctx context.Context, addr string) (authenticator, error) { return nil, nil }
