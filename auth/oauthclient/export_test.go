package oauthclient

import (
	"context"
	"net/netip"
)

// WithResolver returns cfg with the host names of the client's own
// requests resolved by lookup instead of DNS, so that tests can give
// their loopback servers public, private or loopback addresses.
func WithResolver(cfg Config, lookup func(ctx context.Context, host string) ([]netip.Addr, error)) Config {
	cfg.lookupNetIP = lookup
	return cfg
}
