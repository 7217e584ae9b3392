package oauthclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestAddressScopes: every address that reaches this machine counts as
// loopback, the cloud metadata services as link-local, and addresses in
// disguise (IPv4-mapped, NAT64) as what they stand for.
func TestAddressScopes(t *testing.T) {
	tests := []struct {
		addr string
		want netScope
	}{
		{"8.8.8.8", scopePublic},
		{"203.0.113.10", scopePublic},
		{"2001:4860:4860::8888", scopePublic},
		{"10.1.2.3", scopePrivate},
		{"172.16.0.1", scopePrivate},
		{"192.168.1.1", scopePrivate},
		{"100.64.0.1", scopePrivate},
		{"fd12:3456::1", scopePrivate},
		{"239.1.2.3", scopePrivate},
		{"255.255.255.255", scopePrivate},
		{"169.254.169.254", scopeLinkLocal},
		{"fe80::1%eth0", scopeLinkLocal},
		{"fd00:ec2::254", scopeLinkLocal},
		{"100.100.100.200", scopeLinkLocal},
		{"127.0.0.1", scopeLoopback},
		{"127.5.6.7", scopeLoopback},
		{"::1", scopeLoopback},
		{"0.0.0.0", scopeLoopback},
		{"0.1.2.3", scopeLoopback},
		{"::", scopeLoopback},
		{"::ffff:127.0.0.1", scopeLoopback},
		{"::ffff:10.0.0.1", scopePrivate},
		{"64:ff9b::7f00:1", scopeLoopback},
		{"64:ff9b::a9fe:a9fe", scopeLinkLocal},
	}
	for _, tt := range tests {
		if got := scopeOf(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.addr, got, tt.want)
		}
	}
	for host, want := range map[string]netScope{"localhost": scopeLoopback, "app.localhost": scopeLoopback, "mcp.example.com": scopePublic, "169.254.169.254": scopeLinkLocal} {
		if got := hostScope(host); got != want {
			t.Errorf("host %s: %v, want %v", host, got, want)
		}
	}
}

// TestDialFirstFallsBackToTheOtherFamily: connecting to checked addresses
// keeps net.Dialer's fallback between address families, so a family that
// does not answer (a black-holed IPv6 route) or refuses does not keep the
// client from connecting over the other, and the attempt that lost is
// given up.
func TestDialFirstFallsBackToTheOtherFamily(t *testing.T) {
	const waitFor = 10 * time.Second // a bound on a hang
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	refused := errors.New("connection refused")
	tests := []struct {
		name  string
		ipv6  func(ctx context.Context) error // what the IPv6 address does
		ipv4  bool                            // the IPv4 address answers
		wantC bool
	}{
		{"IPv6 black-holed", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }, true, true},
		{"IPv6 refused", func(context.Context) error { return refused }, true, true},
		{"both refused", func(context.Context) error { return refused }, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ended := make(chan struct{})
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, _ := net.SplitHostPort(addr)
				if host == "2001:db8::1" {
					defer close(ended)
					return nil, tt.ipv6(ctx)
				}
				if !tt.ipv4 {
					return nil, refused
				}
				return (&net.Dialer{}).DialContext(ctx, network, ln.Addr().String())
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			addrs := []netip.Addr{netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("203.0.113.1")}
			c, err := dialFirst(ctx, "tcp", port, addrs, dial)
			if tt.wantC {
				if err != nil {
					t.Fatal(err)
				}
				c.Close()
			} else if err == nil || !errors.Is(err, refused) {
				t.Fatalf("err = %v, want the refusals", err)
			}
			select {
			case <-ended:
			case <-time.After(waitFor):
				t.Fatal("the IPv6 attempt was never given up")
			}
		})
	}
}
