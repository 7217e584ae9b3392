package gateway

import (
	"bufio"
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
)

// replica is one of several gateways sharing a Redis, as the replicas of
// a deployment do, each with its own connection to it.
type replica struct {
	g    *Gateway
	c    *cluster.Cluster
	logs *logBuffer
}

// replicas starts n gateways for the configuration cfg makes, sharing
// the Redis at url.
func replicas(t *testing.T, n int, url string, cfg func() *config.Config) []*replica {
	t.Helper()
	var rs []*replica
	for i := range n {
		logs := &logBuffer{}
		c, err := cluster.Open(context.Background(), cluster.Options{URL: url, ReplicaID: "gw-" + strconv.Itoa(i), Logger: logs.logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		g := runConfigured(t, cfg(), &Options{Logger: logs.logger(), Cluster: c})
		waitState(t, g, StateReady)
		rs = append(rs, &replica{g, c, logs})
	}
	return rs
}

// sessions connects a client for tenant to each replica.
func sessions(t *testing.T, rs []*replica, tenant string) []*mcp.ClientSession {
	t.Helper()
	var css []*mcp.ClientSession
	for _, r := range rs {
		css = append(css, connectAs(t, r.g.Server(), tenant, nil))
	}
	return css
}

// callRound calls tool n times, through the sessions in turn, and counts
// the calls that passed; any failure but a rate limit fails the test.
func callRound(t *testing.T, css []*mcp.ClientSession, tool string, n int) (ok int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		_, err := css[i%len(css)].CallTool(ctx, tool, map[string]string{"text": "x"})
		cancel()
		switch {
		case err == nil:
			ok++
		case rpcCode(err) != CodeRateLimited:
			t.Fatalf("call %d of %s failed otherwise than by a rate limit: %v", i, tool, err)
		}
	}
	return ok
}

// refilled bounds what a bucket refills in d at perMinute: the calls a
// test may see pass beyond the burst, however slow the machine.
func refilled(perMinute int, d time.Duration) int {
	return int(math.Ceil(d.Minutes() * float64(perMinute)))
}

// scripts counts the scripts Redis has run (EVALSHA and EVAL): the
// round trips of shared rate-limit checks.
func scripts(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	return redisCalls(t, rdb, "evalsha", "eval")
}

// redisCalls counts the commands of the names given that Redis has run.
func redisCalls(t *testing.T, rdb *redis.Client, commands ...string) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, stats, ok := strings.Cut(sc.Text(), ":")
		if !ok || !slices.Contains(commands, strings.TrimPrefix(name, "cmdstat_")) {
			continue
		}
		for f := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				c, _ := strconv.Atoi(v)
				n += c
			}
		}
	}
	return n
}

// Issue 23: a tenant limited to N calls a minute gets N (plus at most
// the burst) across three replicas, not three times that; a tool's own
// limit likewise, and a tool without one is not held back by it.
func TestRateLimitsHoldAcrossReplicas(t *testing.T) {
	rs := testservice.Redis(t)
	up := httpServer(t, "alpha")
	for _, tc := range []struct {
		name      string
		limits    config.Limits
		tool      string
		burst     int
		perMinute int
		free      string // a tool the limit leaves alone
	}{
		{"a tenant's calls", config.Limits{Calls: config.Rate{PerMinute: 6, Burst: 5}}, "alpha_echo", 5, 6, ""},
		{"a tool's calls", config.Limits{Tools: map[string]config.Rate{"alpha_echo": {PerMinute: 6, Burst: 2}}}, "alpha_echo", 2, 6, "alpha_pid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := func() *config.Config {
				l := tc.limits
				return &config.Config{
					Servers: map[string]*config.Server{"alpha": up},
					Tenants: map[string]*config.Tenant{"acme": {Limits: &l}},
				}
			}
			css := sessions(t, replicas(t, 3, rs.URL(), cfg), "acme")
			start := time.Now()
			ok := callRound(t, css, tc.tool, 10*tc.burst)
			if most := tc.burst + refilled(tc.perMinute, time.Since(start)); ok < tc.burst || ok > most {
				t.Errorf("%d calls passed across 3 replicas; want %d to %d (the burst, and what refilled meanwhile), not %d per replica",
					ok, tc.burst, most, tc.burst)
			}
			if tc.free != "" {
				if n := callRound(t, css, tc.free, 3*tc.burst); n != 3*tc.burst {
					t.Errorf("%s has no limit, yet %d of %d calls passed", tc.free, n, 3*tc.burst)
				}
			}
		})
	}
}

// A reload applies to the shared buckets: a new limit is a fresh bucket
// shared by the replicas, and no limit costs no round trip.
func TestSharedRateLimitsFollowAReload(t *testing.T) {
	rs := testservice.Redis(t)
	up := httpServer(t, "alpha")
	withBurst := func(burst int) func() *config.Config {
		return func() *config.Config {
			c := &config.Config{Servers: map[string]*config.Server{"alpha": up}}
			if burst > 0 {
				c.Limits.Calls = config.Rate{PerMinute: 6, Burst: burst}
			}
			return c
		}
	}
	reps := replicas(t, 3, rs.URL(), withBurst(2))
	var css []*mcp.ClientSession
	for _, r := range reps {
		css = append(css, connectTo(t, r.g.Server(), nil))
	}
	for _, tc := range []struct {
		name     string
		burst    int // 0: no limit
		wantMost int
		scripts  bool
	}{
		{"the first limit", 2, 2, true},
		{"a reload to a larger burst", 4, 4, true},
		{"a reload to no limit", 0, 12, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.burst != 2 {
				for _, r := range reps {
					r.g.Reload(withBurst(tc.burst)())
				}
			}
			before := scripts(t, reps[0].c.Redis())
			start := time.Now()
			ok := callRound(t, css, "alpha_echo", 12)
			ran := scripts(t, reps[0].c.Redis()) - before
			most := tc.wantMost
			if tc.burst > 0 {
				most += refilled(6, time.Since(start))
			}
			if ok < tc.wantMost || ok > most {
				t.Errorf("%d of 12 calls passed across 3 replicas; want %d to %d", ok, tc.wantMost, most)
			}
			if (ran > 0) != tc.scripts {
				t.Errorf("the calls ran %d scripts in Redis", ran)
			}
		})
	}
}

// The cost in Redis of a call: one round trip for each rate that
// applies to it, none when none does.
func TestSharedRateLimitsCostOneRoundTripPerBucket(t *testing.T) {
	rs := testservice.Redis(t)
	up := httpServer(t, "alpha")
	lots := config.Rate{PerMinute: 60000, Burst: 1000}
	for _, tc := range []struct {
		name    string
		limits  config.Limits
		perCall int
	}{
		{"no limit", config.Limits{}, 0},
		{"a concurrency bound only, held by the replica", config.Limits{Concurrent: 4}, 0},
		{"a caller limit", config.Limits{Calls: lots}, 1},
		{"a tool's limit", config.Limits{Tools: map[string]config.Rate{"alpha_echo": lots}}, 1},
		{"another tool's limit", config.Limits{Tools: map[string]config.Rate{"alpha_pid": lots}}, 0},
		{"both", config.Limits{Calls: lots, Tools: map[string]config.Rate{"alpha_echo": lots}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := func() *config.Config {
				return &config.Config{Servers: map[string]*config.Server{"alpha": up}, Limits: tc.limits}
			}
			r := replicas(t, 1, rs.URL(), cfg)[0]
			css := []*mcp.ClientSession{connectTo(t, r.g.Server(), nil)}
			callRound(t, css, "alpha_echo", 1) // loads the script in Redis
			before := scripts(t, r.c.Redis())
			const n = 10
			if ok := callRound(t, css, "alpha_echo", n); ok != n {
				t.Fatalf("%d of %d calls passed", ok, n)
			}
			if got := scripts(t, r.c.Redis()) - before; got != n*tc.perCall {
				t.Errorf("%d calls ran %d scripts in Redis; want %d", n, got, n*tc.perCall)
			}
		})
	}
}

// Redis stopped while the replicas run: calls go on, each replica
// limiting them by its own buckets (the burst each, no more), with one
// warning each; Redis back: each replica finds it again by itself, and
// the limit holds across them again.
func TestSharedRateLimitsFallBackWhileRedisIsDown(t *testing.T) {
	rs := testservice.Redis(t)
	up := httpServer(t, "alpha")
	const burst, perMinute = 3, 6
	cfg := func() *config.Config {
		l := config.Limits{Calls: config.Rate{PerMinute: perMinute, Burst: burst}}
		return &config.Config{
			Servers: map[string]*config.Server{"alpha": up},
			Tenants: map[string]*config.Tenant{"during": {Limits: &l}, "probe": {Limits: &l}, "after": {Limits: &l}},
		}
	}
	reps := replicas(t, 3, rs.URL(), cfg)
	during, probe, after := sessions(t, reps, "during"), sessions(t, reps, "probe"), sessions(t, reps, "after")

	rs.Stop()
	start := time.Now()
	for i, r := range reps {
		ok := callRound(t, during[i:i+1], "alpha_echo", 3*burst)
		if most := burst + refilled(perMinute, time.Since(start)); ok < burst || ok > most {
			t.Errorf("replica %d passed %d calls with Redis down; want its own burst, %d to %d", i, ok, burst, most)
		}
		if n := strings.Count(r.logs.String(), "each replica holds rate limits alone"); n != 1 {
			t.Errorf("replica %d logged the outage %d times; want once", i, n)
		}
	}

	rs.Start()
	rdb := reps[0].c.Redis()
	for i, r := range reps {
		// Until a call of this replica runs a script in Redis, it has
		// not tried Redis again.
		waitUntil(t, func() bool {
			n := scripts(t, rdb)
			callRound(t, probe[i:i+1], "alpha_echo", 1)
			return scripts(t, rdb) > n
		}, "replica %d to share its limits again", i)
		if n := strings.Count(r.logs.String(), "rate limits are shared by the replicas again"); n != 1 {
			t.Errorf("replica %d logged the recovery %d times; want once", i, n)
		}
	}
	start = time.Now()
	ok := callRound(t, after, "alpha_echo", 10*burst)
	if most := burst + refilled(perMinute, time.Since(start)); ok < burst || ok > most {
		t.Errorf("after the outage %d calls passed across 3 replicas; want %d to %d", ok, burst, most)
	}
}

// Sampling relays are limited across the replicas too, per server and
// per caller, in buckets of their own: a caller's sampling does not
// take from its tool calls.
func TestSharedSamplingLimitsHoldAcrossReplicas(t *testing.T) {
	rs := testservice.Redis(t)
	up := httpServer(t, "alpha")
	const burst = 3
	cfg := func() *config.Config {
		return &config.Config{Servers: map[string]*config.Server{"alpha": up}, Limits: config.Limits{
			Calls:    config.Rate{PerMinute: 6, Burst: burst},
			Sampling: config.Rate{PerMinute: 6, Burst: burst},
		}}
	}
	reps := replicas(t, 3, rs.URL(), cfg)
	start := time.Now()
	// The keys relaySampling uses, the server's and the caller's, and
	// the key the calls of an anonymous caller with no tenant use.
	for _, key := range []string{"server\x00alpha", "caller\x00acme\x00alice", "\x00"} {
		ok := 0
		for i := range 10 * burst {
			release, err := reps[i%3].g.sampling.admit("acme", key, "")
			switch {
			case err == nil:
				ok++
				release()
			case rpcCode(err) != CodeRateLimited:
				t.Fatalf("sampling %q: %v", key, err)
			}
		}
		if most := burst + refilled(6, time.Since(start)); ok < burst || ok > most {
			t.Errorf("%d sampling requests of %q passed across 3 replicas; want %d to %d", ok, key, burst, most)
		}
	}
	// That caller's calls have a bucket of their own, full.
	css := sessions(t, reps, "")
	if ok := callRound(t, css, "alpha_echo", 10*burst); ok < burst {
		t.Errorf("sampling took from the tool calls' bucket of the same key: %d calls passed, want at least %d", ok, burst)
	}
}
