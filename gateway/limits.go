package gateway

import (
	"context"
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
// share one bucket. With Options.Cluster the rates hold across the
// gateway's replicas; Concurrent is counted by each replica.
type Limits struct {
	// Calls limits a caller's tool calls, all tools together.
	Calls Limit
	// Tools limits a caller's calls of one published tool.
	Tools map[string]Limit
	// Concurrent bounds a caller's calls in flight on this replica (0 =
	// no bound).
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
//
// Its rate buckets are this replica's own, in memory, unless it shares
// them (share): then the rate limits hold across every replica of the
// gateway, and the replica's own buckets are what it falls back on while
// the shared store cannot be reached. Concurrent (calls in flight) is
// always counted per replica: a call in flight is held by the replica
// running it, and a count shared through the store would outlive a
// replica that dies with calls in flight.
type limiter struct {
	limits  Limits
	tenants map[string]Limits // a tenant's own limits replace limits

	// shared, when set, holds the rate buckets for all replicas; space
	// tells this limiter's buckets from another's among them.
	shared sharedBuckets
	space  string

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time
}

// sharedBuckets are rate buckets that every replica of the gateway holds
// together: a *cluster.Limiter (cluster/limit.go), GCRA in Redis.
type sharedBuckets interface {
	// Allow takes one call from the bucket named key, which lets
	// perSecond calls a second through and burst at once; ok is false
	// with the time to wait when it is empty, and err is set when the
	// store cannot say.
	Allow(ctx context.Context, key string, perSecond float64, burst int) (ok bool, retryAfter time.Duration, err error)
}

// sharedWait bounds a shared-bucket check: past it, the call is limited
// by the replica's own buckets rather than kept waiting.
const sharedWait = time.Second

type bucket struct {
	lim      *rate.Limiter
	inflight int
	lastUsed time.Time
}

func newLimiter(l Limits) *limiter {
	return &limiter{limits: l, buckets: map[string]*bucket{}, swept: time.Now()}
}

// share holds the limiter's rate buckets in s, under space.
func (l *limiter) share(s sharedBuckets, space string) {
	l.shared, l.space = s, space
}

// admit counts one request of who (tenant and principal) that reaches
// upstreams, and one call of tool where it has a limit of its own. Over
// a limit it returns CodeRateLimited with the delay after which the
// request would pass (data.retryAfterMs; HTTP adds Retry-After), before
// anything reaches an upstream; otherwise a release for when the request
// ends.
//
// With shared buckets, a request costs one round trip to the store for
// each rate limit that applies to it: one for a caller limit or a tool's
// limit, two where both apply, none where no rate applies. Where both
// apply, the tool's bucket is checked first, and a request its caller's
// bucket then refuses has still taken from the tool's: a caller over its
// limit slows its own use of that tool a little, no one else's. When the
// store fails, the request is limited by this replica's own buckets
// instead.
func (l *limiter) admit(tenant, who, tool string) (func(), error) {
	if l.shared != nil {
		if release, err, decided := l.admitShared(tenant, who, tool); decided {
			return release, err
		}
	}
	return l.admitLocal(tenant, who, tool)
}

// limitsOf are the limits that apply to tenant's callers.
func (l *limiter) limitsOf(tenant string) Limits {
	if tl, ok := l.tenants[tenant]; ok {
		return tl
	}
	return l.limits
}

// admitShared is admit against the shared buckets; decided is false
// where no rate applies or the store did not answer, for admitLocal to
// decide.
func (l *limiter) admitShared(tenant, who, tool string) (release func(), err error, decided bool) {
	l.mu.Lock()
	limits := l.limitsOf(tenant)
	l.mu.Unlock()
	type check struct {
		key string
		lim Limit
	}
	var checks []check
	if tl, ok := limits.Tools[tool]; ok && tl.Rate > 0 {
		checks = append(checks, check{"t\x00" + who + "\x00" + tool, tl})
	}
	if limits.Calls.Rate > 0 {
		checks = append(checks, check{"c\x00" + who, limits.Calls})
	}
	if len(checks) == 0 {
		return nil, nil, false
	}
	// The slot in flight first: a request it refuses takes nothing from
	// the shared buckets.
	release, err = l.hold(who, limits.Concurrent)
	if err != nil {
		return nil, err, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedWait)
	defer cancel()
	for _, c := range checks {
		ok, wait, err := l.shared.Allow(ctx, l.space+c.key, c.lim.Rate, max(c.lim.Burst, 1))
		if err != nil {
			release()
			return nil, nil, false
		}
		if !ok {
			release()
			return nil, rateLimited(max(wait, time.Millisecond), tool, limits.Tools), true
		}
	}
	return release, nil, true
}

// hold takes one of who's n slots in flight (no bound when n is 0).
func (l *limiter) hold(who string, n int) (func(), error) {
	if n <= 0 {
		return func() {}, nil
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	key := "c\x00" + who
	b := l.buckets[key]
	if b == nil {
		b = &bucket{}
		l.buckets[key] = b
	}
	b.lastUsed = now
	if b.inflight >= n {
		return nil, tooManyInFlight(n)
	}
	b.inflight++
	return func() {
		l.mu.Lock()
		b.inflight--
		l.mu.Unlock()
	}, nil
}

// admitLocal is admit against this replica's own buckets.
func (l *limiter) admitLocal(tenant, who, tool string) (func(), error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	limits := l.limitsOf(tenant)
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
		return nil, rateLimited(wait, tool, limits.Tools)
	}
	if n := limits.Concurrent; n > 0 {
		if caller.inflight >= n {
			for _, r := range reserved {
				r.CancelAt(now)
			}
			return nil, tooManyInFlight(n)
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

// rateLimited is the refusal of a request over a rate limit, which would
// pass after wait.
func rateLimited(wait time.Duration, tool string, tools map[string]Limit) error {
	ms := int64(math.Ceil(float64(wait) / float64(time.Millisecond)))
	return jsonrpc.Errorf(CodeRateLimited, "Rate limit exceeded: too many requests%s; retry in %d ms", forTool(tool, tools), ms).
		WithData(map[string]any{"retryAfterMs": ms})
}

// tooManyInFlight is the refusal of a request past n in flight.
func tooManyInFlight(n int) error {
	return jsonrpc.Errorf(CodeRateLimited, "Rate limit exceeded: %d requests already in flight, the most allowed; retry when one ends", n).
		WithData(map[string]any{"retryAfterMs": 100})
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
