package oauthclient

// The client's own requests (metadata, registration, token) go to URLs
// that servers choose: the MCP server names its metadata and authorization
// server, which names its endpoints. Left alone, a hostile server could
// point them at this machine or its network (server-side request forgery)
// or redirect a token request, client secret and all, to a server of its
// choice. This file keeps them where they may go.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// netScope is how far from this machine an address is. A server's
// outbound requests may reach its own scope and wider ones (a lower
// value): a server on loopback may use anything, one on a private network
// that network and the internet, a public one the internet only.
type netScope int

const (
	scopePublic    netScope = iota
	scopePrivate            // RFC 1918, RFC 4193 unique local, RFC 6598 shared, multicast
	scopeLinkLocal          // 169.254/16, fe80::/10, cloud metadata services
	scopeLoopback           // 127/8, ::1, and the unspecified addresses, which reach this host
)

func (s netScope) String() string {
	switch s {
	case scopePrivate:
		return "a private address"
	case scopeLinkLocal:
		return "a link-local or cloud metadata address"
	case scopeLoopback:
		return "a loopback address"
	}
	return "a public address"
}

// where says where a server of scope is, for messages.
func (s netScope) where() string {
	switch s {
	case scopePrivate:
		return "on a private network"
	case scopeLinkLocal:
		return "on a link-local network"
	}
	return "on loopback"
}

var (
	sharedAddressSpace = netip.MustParsePrefix("100.64.0.0/10") // RFC 6598, carrier-grade NAT
	thisNetwork        = netip.MustParsePrefix("0.0.0.0/8")     // RFC 1122: connecting reaches this host
	nat64              = netip.MustParsePrefix("64:ff9b::/96")  // RFC 6052: an IPv4 address in disguise
	// Cloud metadata services outside 169.254/16, which hand out
	// credentials to whoever asks from the instance.
	metadataServices = []netip.Addr{netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("100.100.100.200")}
)

// scopeOf classifies an address.
func scopeOf(a netip.Addr) netScope {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	switch {
	case a.IsLoopback() || a.IsUnspecified() || thisNetwork.Contains(a):
		return scopeLoopback
	case a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || slices.Contains(metadataServices, a.WithZone("")):
		return scopeLinkLocal
	case a.IsPrivate() || sharedAddressSpace.Contains(a) || !a.IsGlobalUnicast():
		return scopePrivate
	}
	return scopePublic
}

// hostScope classifies a URL's host as far as it can be without a DNS
// lookup: loopback names and address literals. Other names count as
// public here; the addresses they resolve to are checked when connecting.
func hostScope(host string) netScope {
	if isLoopback(host) {
		return scopeLoopback
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return scopeOf(a)
	}
	return scopePublic
}

// serverKey is the context key of the MCP server whose authorization is
// under way. Every request of the flow is checked against that server, and
// the flow passes through a dozen functions that carry a context already.
type serverKey struct{}

func withServer(ctx context.Context, server *url.URL) context.Context {
	return context.WithValue(ctx, serverKey{}, server)
}

// reach returns the widest scope the requests for the server in ctx may
// reach, and the server's name for messages. Without a server in ctx (it
// never happens in a flow) only public addresses are allowed.
func (t *Transport) reach(ctx context.Context) (netScope, string) {
	server, _ := ctx.Value(serverKey{}).(*url.URL)
	if server == nil {
		return scopePublic, "(unknown)"
	}
	s := hostScope(server.Hostname())
	if t.cfg.AllowPrivateNetworks && s < scopePrivate {
		s = scopePrivate
	}
	return s, canonicalURL(server)
}

// checkURL refuses URLs the client must not follow (OAuth URL validation
// in the MCP security guidance, RFC 9700): only https, so javascript:,
// file: and friends are out and tokens and codes never cross a network in
// clear, with plain http only on loopback for a server on loopback (or
// anywhere with AllowInsecureHTTP); and no address nearer to this machine
// than the MCP server itself (see netScope).
func (t *Transport) checkURL(ctx context.Context, raw, what string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, authErr(nil, "the %s %q is not an absolute URL", what, raw)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "https" && scheme != "http" {
		return nil, authErr(nil, "the %s %q has the scheme %q; only https (or http on loopback) is accepted", what, raw, u.Scheme)
	}
	allowed, server := t.reach(ctx)
	target := hostScope(u.Hostname())
	if target > allowed {
		return nil, t.refusal(what, raw, target.String(), target, server)
	}
	if scheme == "http" && !t.cfg.AllowInsecureHTTP && (target != scopeLoopback || allowed != scopeLoopback) {
		return nil, authErr(nil, "the %s %s is plain http; https is required (plain http only on loopback, for an MCP server on loopback; Config.AllowInsecureHTTP allows it, for development only)", what, raw)
	}
	return u, nil
}

// refusal explains a target refused for its address.
func (t *Transport) refusal(what, target, why string, scope netScope, server string) error {
	hint := ""
	if scope == scopePrivate {
		hint = " (Config.AllowPrivateNetworks admits private addresses, for an MCP server and authorization server on the same internal network)"
	}
	return authErr(ErrPrivateAddress, "the %s %s is %s, and the MCP server %s is not itself %s; refused, so that no server can reach this machine's or its network's services through the client%s", what, target, why, server, scope.where(), hint)
}

// noFollow is the CheckRedirect of every client here: the redirect comes
// back as the response, and do turns it into an error.
func noFollow(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// redirected returns the error for a redirect response, or nil. The
// Location is the server's, not a secret of ours.
func redirected(resp *http.Response, what, kind string) error {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return nil
	}
	to := "nowhere (no Location)"
	if loc, err := resp.Location(); err == nil {
		to = loc.Redacted()
		if len(to) > 200 {
			to = to[:200] + "…"
		}
	}
	return authErr(ErrRedirect, "the %s %s answered %d, a redirect to %s; redirects are not followed for %s requests (RFC 9700), so that no server can send them, credentials and all, elsewhere",
		what, resp.Request.URL.Redacted(), resp.StatusCode, to, kind)
}

// do sends one of the client's own requests for the MCP server in its
// context: through a client that follows no redirect and, for a server
// that is not on loopback, connects to no address nearer than the server.
// A redirect is an error; so is an address refused when connecting.
func (t *Transport) do(req *http.Request, what, kind string) (*http.Response, error) {
	scope, server := t.reach(req.Context())
	resp, err := t.outbound(scope).Do(req)
	if err != nil {
		var ae *addressError
		if errors.As(err, &ae) {
			return nil, t.refusal(what, req.URL.Redacted(), ae.Error(), ae.scope, server)
		}
		return nil, err
	}
	if err := redirected(resp, what, kind); err != nil {
		discard(resp)
		return nil, err
	}
	return resp, nil
}

// outbound returns the HTTP client for the requests of servers of scope,
// made the first time one is needed. Each scope has its own connections,
// so a connection made for a server on loopback is never reused for a
// public server's request.
func (t *Transport) outbound(scope netScope) *http.Client {
	t.outMu.Lock()
	defer t.outMu.Unlock()
	if c := t.out[scope]; c != nil {
		return c
	}
	var c http.Client
	if t.cfg.HTTPClient != nil {
		c = *t.cfg.HTTPClient // a copy: the caller's client is not changed
	} else {
		c = http.Client{Transport: t.base, Timeout: 30 * time.Second}
	}
	c.CheckRedirect = noFollow
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	// Another kind of RoundTripper cannot be told where to connect: for
	// it, checkURL's look at the URL is all there is.
	if ht, ok := rt.(*http.Transport); ok && scope != scopeLoopback {
		c.Transport = guard(ht, scope, t.cfg.lookupNetIP)
	}
	if t.out == nil {
		t.out = map[netScope]*http.Client{}
	}
	t.out[scope] = &c
	return &c
}

// addressError is a connection refused for the address it would reach.
type addressError struct {
	host  string
	addr  netip.Addr
	scope netScope
}

func (e *addressError) Error() string {
	if a, err := netip.ParseAddr(e.host); err == nil && a == e.addr {
		return e.scope.String()
	}
	return fmt.Sprintf("%s, since %s resolves to %s", e.scope, e.host, e.addr)
}

// dialGuard connects only to addresses of an allowed scope. It resolves
// the name itself, checks every address, and connects to a checked one,
// so that a name which resolves to loopback (DNS rebinding) is refused
// when connecting, not only when its URL is read.
type dialGuard struct {
	scope  netScope
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// proxies are the addresses of the proxies the transport chose: the
	// operator's, connected to unchecked (the proxy resolves the names).
	proxies sync.Map
}

// guard returns a copy of ht whose connections go through a dialGuard.
func guard(ht *http.Transport, scope netScope, lookup func(context.Context, string) ([]netip.Addr, error)) *http.Transport {
	g := &dialGuard{scope: scope, lookup: lookup}
	if g.lookup == nil {
		g.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	tr := ht.Clone()
	dial := tr.DialContext
	if dial == nil && tr.Dial != nil {
		d := tr.Dial
		dial = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr.Dial = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if g.isProxy(addr) {
			return dial(ctx, network, addr)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := g.check(ctx, network, host)
		if err != nil {
			return nil, err
		}
		return dialFirst(ctx, network, port, addrs, dial)
	}
	// A TLS dialer of the caller's makes its own connection, by name (its
	// certificate check needs the name): the addresses are checked before.
	dialTLS := tr.DialTLSContext
	if dialTLS == nil && tr.DialTLS != nil {
		d := tr.DialTLS
		dialTLS = func(_ context.Context, network, addr string) (net.Conn, error) { return d(network, addr) }
	}
	if dialTLS != nil {
		tr.DialTLS = nil
		tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if !g.isProxy(addr) {
				host, _, err := net.SplitHostPort(addr)
				if err != nil {
					return nil, err
				}
				if _, err := g.check(ctx, network, host); err != nil {
					return nil, err
				}
			}
			return dialTLS(ctx, network, addr)
		}
	}
	if proxy := tr.Proxy; proxy != nil {
		tr.Proxy = func(r *http.Request) (*url.URL, error) {
			u, err := proxy(r)
			if err == nil && u != nil {
				g.proxies.Store(proxyAddr(u), true)
			}
			return u, err
		}
	}
	return tr
}

func (g *dialGuard) isProxy(addr string) bool {
	_, ok := g.proxies.Load(strings.ToLower(addr))
	return ok
}

// check resolves host and returns its addresses for network, or an
// addressError when any of them is out of scope: a name with one public
// and one loopback address is refused, not tried in turn.
func (g *dialGuard) check(ctx context.Context, network, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.lookup(ctx, host); err != nil {
		return nil, err
	}
	var usable []netip.Addr
	for _, a := range addrs {
		if s := scopeOf(a); s > g.scope {
			return nil, &addressError{host: host, addr: a, scope: s}
		}
		a = a.Unmap()
		if (network == "tcp4" && !a.Is4()) || (network == "tcp6" && !a.Is6()) {
			continue
		}
		usable = append(usable, a)
	}
	if len(usable) == 0 {
		return nil, &net.DNSError{Err: "no " + network + " address", Name: host, IsNotFound: true}
	}
	return usable, nil
}

type dialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// fallbackDelay is how long the first address family has before the
// other is tried too: net.Dialer's default (RFC 8305).
const fallbackDelay = 300 * time.Millisecond

// dialFirst connects to one of addrs as net.Dialer does with the
// addresses of a name, which connecting to checked addresses bypasses:
// those of the first address's family in turn and, after fallbackDelay
// or a failure, those of the other family beside them, so that a family
// that does not answer costs 300 ms rather than a timeout.
func dialFirst(ctx context.Context, network, port string, addrs []netip.Addr, dial dialFunc) (net.Conn, error) {
	var primaries, fallbacks []netip.Addr
	for _, a := range addrs {
		if a.Is4() == addrs[0].Is4() {
			primaries = append(primaries, a)
		} else {
			fallbacks = append(fallbacks, a)
		}
	}
	if len(fallbacks) == 0 {
		return dialSerial(ctx, network, port, primaries, dial)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // the attempt that lost gives up
	type result struct {
		c   net.Conn
		err error
	}
	results := make(chan result, 2)
	race := func(addrs []netip.Addr) {
		go func() {
			c, err := dialSerial(ctx, network, port, addrs, dial)
			results <- result{c, err}
		}()
	}
	race(primaries)
	timer := time.NewTimer(fallbackDelay)
	defer timer.Stop()
	pending, fellBack := 1, false
	var errs []error
	for pending > 0 {
		select {
		case <-timer.C:
		case r := <-results:
			pending--
			if r.err == nil {
				if pending > 0 {
					go func() { // connected just too late: not needed
						if r := <-results; r.c != nil {
							r.c.Close()
						}
					}()
				}
				return r.c, nil
			}
			errs = append(errs, r.err)
		}
		if !fellBack {
			fellBack = true
			pending++
			race(fallbacks)
		}
	}
	return nil, errors.Join(errs...)
}

// dialSerial connects to the first of addrs that answers.
func dialSerial(ctx context.Context, network, port string, addrs []netip.Addr, dial dialFunc) (net.Conn, error) {
	var errs []error
	for _, a := range addrs {
		c, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if errs = append(errs, err); ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// proxyAddr is the host:port a transport connects to for proxy u.
func proxyAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "socks5", "socks5h":
			port = "1080"
		default:
			port = "80"
		}
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}
