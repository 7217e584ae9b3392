package auth

import (
	"net"
	"net/netip"
	"sync"
	"time"
)

// ThrottleConfig slows down password guessing against Basic users: once
// a remote address, or a user name, has failed too often, its attempts
// are refused (429 Too Many Requests, with Retry-After) for a delay that
// doubles with every further failure. Only Basic authentication is
// throttled: API keys and OAuth tokens are too long to guess.
//
// The throttle is per address as the server sees it: behind a proxy every
// client has the proxy's address, and the per-address count trips for
// all of them together.
type ThrottleConfig struct {
	// PerAddress is how many failures a remote address (an IPv6 /64) may
	// have before it is throttled. Default 20: an address may be a NAT
	// that many people share.
	PerAddress int
	// PerUser is how many failures a user name may have before it is
	// throttled, from any address. Default 5.
	PerUser int
	// Delay is the first refusal period; each further failure doubles it.
	// Default 1 second.
	Delay time.Duration
	// MaxDelay caps the refusal period. Default 5 minutes.
	MaxDelay time.Duration
	// Window is how long failures are remembered after the last one.
	// Default 15 minutes, and never less than MaxDelay.
	Window time.Duration
	// MaxEntries bounds how many addresses, and how many user names, are
	// remembered; when full, those idle longest are forgotten first.
	// Default 10000 each.
	MaxEntries int
	// Off turns throttling off, for a proxy in front that does it.
	Off bool
}

func (c *ThrottleConfig) fill() {
	if c.PerAddress <= 0 {
		c.PerAddress = 20
	}
	if c.PerUser <= 0 {
		c.PerUser = 5
	}
	if c.Delay <= 0 {
		c.Delay = time.Second
	}
	if c.MaxDelay <= 0 {
		c.MaxDelay = 5 * time.Minute
	}
	if c.Window <= 0 {
		c.Window = 15 * time.Minute
	}
	c.Window = max(c.Window, c.MaxDelay)
	if c.MaxEntries <= 0 {
		c.MaxEntries = 10000
	}
}

// throttle counts failed sign-ins by remote address and by user name.
type throttle struct {
	cfg   ThrottleConfig
	mu    sync.Mutex
	addrs strikes
	users strikes
}

// strikes are the recent failures of each key.
type strikes map[string]*strike

type strike struct {
	n    int       // failures in a row, none older than the window
	last time.Time // of the latest
}

func newThrottle(cfg ThrottleConfig) *throttle {
	cfg.fill()
	return &throttle{cfg: cfg, addrs: strikes{}, users: strikes{}}
}

// wait returns how long a sign-in from addr as user must wait; 0 lets it
// try.
func (t *throttle) wait(addr, user string, now time.Time) time.Duration {
	if t.cfg.Off {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return max(t.waitFor(t.addrs[addressKey(addr)], t.cfg.PerAddress, now),
		t.waitFor(t.users[userKey(user)], t.cfg.PerUser, now))
}

func (t *throttle) waitFor(s *strike, free int, now time.Time) time.Duration {
	if s == nil || s.n < free || now.Sub(s.last) > t.cfg.Window {
		return 0
	}
	d := t.cfg.MaxDelay
	if k := s.n - free; k < 30 {
		d = min(t.cfg.Delay<<k, t.cfg.MaxDelay)
	}
	return max(s.last.Add(d).Sub(now), 0)
}

// fail records a failed sign-in from addr as user.
func (t *throttle) fail(addr, user string, now time.Time) {
	if t.cfg.Off {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.add(t.addrs, addressKey(addr), now)
	if user != "" { // malformed credentials name nobody
		t.add(t.users, userKey(user), now)
	}
}

func (t *throttle) add(m strikes, key string, now time.Time) {
	s := m[key]
	if s == nil || now.Sub(s.last) > t.cfg.Window {
		if s == nil && len(m) >= t.cfg.MaxEntries {
			t.evict(m, now)
		}
		s = &strike{}
		m[key] = s
	}
	s.n++
	s.last = now
}

// evict forgets the entries past the window, or else the one idle
// longest. It runs only when the table is full, after a failed bcrypt
// comparison that cost far more than this scan.
func (t *throttle) evict(m strikes, now time.Time) {
	oldest := ""
	for k, s := range m {
		if now.Sub(s.last) > t.cfg.Window {
			delete(m, k)
		} else if oldest == "" || s.last.Before(m[oldest].last) {
			oldest = k
		}
	}
	if len(m) >= t.cfg.MaxEntries {
		delete(m, oldest)
	}
}

// addressKey is the remote address without its port; an IPv6 address
// counts as its /64, which one client usually holds whole.
func addressKey(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// userKey bounds the names remembered: a name longer than any a file
// accepts is unknown however it ends.
func userKey(user string) string {
	if len(user) > maxNameLen {
		return user[:maxNameLen+1]
	}
	return user
}
