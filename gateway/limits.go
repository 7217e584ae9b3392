package gateway

import (
	"math"
	"reflect"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// DefaultSubscriptionsPerSession bounds the resources one client session
// may subscribe to through the gateway, where the configuration does not.
const DefaultSubscriptionsPerSession = 100

// Limit is a token bucket: Rate calls a second on average, up to Burst
// at once. A zero Rate means no limit.
type Limit struct {
	Rate  float64
	Burst int
}

// Limits bound each caller's tool calls. Callers are told apart by
// principal (and tenant, once tenants are configured); anonymous callers
// share one bucket.
type Limits struct {
	// Calls limits a caller's tool calls, all tools together.
	Calls Limit
	// Tools limits a caller's calls of one published tool.
	Tools map[string]Limit
	// Concurrent bounds a caller's calls in flight (0 = no bound).
	Concurrent int
	// Sampling limits the sampling requests relayed for one caller, and
	// apart for one server (from the file's limits.sampling).
	Sampling Limit
}

// LimitsFromConfig converts the file's limits section.
func LimitsFromConfig(c config.Limits) Limits {
	rate := func(r config.Rate) Limit {
		if r.PerMinute <= 0 {
			return Limit{}
		}
		b := r.Burst
		if b <= 0 {
			b = max(r.PerMinute/10, 1)
		}
		return Limit{Rate: float64(r.PerMinute) / 60, Burst: b}
	}
	l := Limits{Calls: rate(c.Calls), Concurrent: c.Concurrent, Sampling: rate(c.Sampling)}
	if len(c.Tools) > 0 {
		l.Tools = make(map[string]Limit, len(c.Tools))
		for name, r := range c.Tools {
			l.Tools[name] = rate(r)
		}
	}
	return l
}

// set replaces the limits (a reload); buckets start afresh.
func (l *limiter) set(lim Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if reflect.DeepEqual(l.limits, lim) {
		return
	}
	l.limits = lim
	for k, b := range l.buckets {
		if b.inflight == 0 {
			delete(l.buckets, k)
		} else {
			b.lim = nil // rebuilt on next use would lose the count of calls in flight
		}
	}
}

// tenantLimits are the tenants' own limits, from the file.
func tenantLimits(cfg *config.Config) map[string]Limits {
	out := map[string]Limits{}
	for name, t := range cfg.Tenants {
		if t.Limits != nil {
			out[name] = LimitsFromConfig(*t.Limits)
		}
	}
	return out
}

func (l *limiter) setTenants(m map[string]Limits) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tenants = m
}

// limiter enforces Limits as middleware around tools/call.
type limiter struct {
	limits  Limits
	tenants map[string]Limits // a tenant's own limits replace limits

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

type bucket struct {
	lim      *rate.Limiter
	inflight int
	lastUsed time.Time
}

func newLimiter(l Limits) *limiter {
	return &limiter{limits: l, buckets: map[string]*bucket{}, swept: time.Now()}
}

// admit counts one request of who (tenant and principal) that reaches
// upstreams, and one call of tool where it has a limit of its own. Over
// a limit it returns CodeRateLimited with the delay after which the
// request would pass (data.retryAfterMs; HTTP adds Retry-After), before
// anything reaches an upstream; otherwise a release for when the request
// ends.
func (l *limiter) admit(tenant, who, tool string) (func(), error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	limits := l.limits
	if tl, ok := l.tenants[tenant]; ok {
		limits = tl
	}
	var delays []time.Duration
	var reserved []*rate.Reservation
	take := func(key string, lim Limit) *bucket {
		b := l.buckets[key]
		if b == nil {
			b = &bucket{}
			l.buckets[key] = b
		}
		if b.lim == nil && lim.Rate > 0 {
			b.lim = rate.NewLimiter(rate.Limit(lim.Rate), max(lim.Burst, 1))
		}
		b.lastUsed = now
		if b.lim != nil {
			r := b.lim.ReserveN(now, 1)
			reserved = append(reserved, r)
			delays = append(delays, r.DelayFrom(now))
		}
		return b
	}
	caller := take("c\x00"+who, limits.Calls)
	if tl, ok := limits.Tools[tool]; ok {
		take("t\x00"+who+"\x00"+tool, tl)
	}
	var wait time.Duration
	for _, d := range delays {
		wait = max(wait, d)
	}
	if wait > 0 {
		for _, r := range reserved {
			r.CancelAt(now)
		}
		ms := int64(math.Ceil(float64(wait) / float64(time.Millisecond)))
		return nil, jsonrpc.Errorf(CodeRateLimited, "Rate limit exceeded: too many requests%s; retry in %d ms", forTool(tool, limits.Tools), ms).
			WithData(map[string]any{"retryAfterMs": ms})
	}
	if n := limits.Concurrent; n > 0 {
		if caller.inflight >= n {
			for _, r := range reserved {
				r.CancelAt(now)
			}
			return nil, jsonrpc.Errorf(CodeRateLimited, "Rate limit exceeded: %d requests already in flight, the most allowed; retry when one ends", n).
				WithData(map[string]any{"retryAfterMs": 100})
		}
		caller.inflight++
		return func() {
			l.mu.Lock()
			caller.inflight--
			l.mu.Unlock()
		}, nil
	}
	return func() {}, nil
}

func forTool(tool string, tools map[string]Limit) string {
	if _, ok := tools[tool]; ok {
		return " of " + tool
	}
	return ""
}

// sweep forgets buckets unused for a while (they are full again by
// then), so that the map does not grow with every caller ever seen.
func (l *limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for k, b := range l.buckets {
		if b.inflight == 0 && now.Sub(b.lastUsed) > 10*time.Minute {
			delete(l.buckets, k)
		}
	}
}
