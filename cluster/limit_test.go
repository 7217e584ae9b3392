package cluster_test

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/internal/testservice"
)

const waitFor = 20 * time.Second // a bound on a hang, never a timing assertion

// slow is a rate that refills nothing while a test runs: one an hour.
const slow = 1.0 / 3600

// logBuffer collects a cluster's log.
type logBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// open connects one replica to the Redis at url, closed with the test.
func open(t *testing.T, url, replica string, logs *logBuffer) *cluster.Cluster {
	t.Helper()
	opts := cluster.Options{URL: url, ReplicaID: replica}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}
	c, err := cluster.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// scriptCalls counts the scripts Redis has run (EVALSHA and EVAL): the
// round trips of rate-limit checks.
func scriptCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, stats, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
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

// Three replicas drawing from one bucket get its burst between them,
// not the burst each; keys and limits tell buckets apart.
func TestLimiterBucketsAreSharedByReplicas(t *testing.T) {
	rs := testservice.Redis(t)
	var ls []*cluster.Limiter
	for i := range 3 {
		ls = append(ls, open(t, rs.URL(), "r"+strconv.Itoa(i), nil).Limiter())
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		key    string
		burst  int
		calls  int // spread over the replicas in turn
		wantOK int
	}{
		{"a burst of five", "alice", 5, 30, 5},
		{"a burst of one", "bob", 1, 9, 1},
		{"another key is another bucket", "carol", 5, 12, 5},
		{"the same key with another limit is a fresh bucket", "alice", 7, 30, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok := 0
			for i := range tc.calls {
				allowed, wait, err := ls[i%3].Allow(ctx, tc.key, slow, tc.burst)
				if err != nil {
					t.Fatal(err)
				}
				if allowed {
					ok++
				} else if wait <= 0 {
					t.Errorf("a refusal without a time to wait: %v", wait)
				}
			}
			if ok != tc.wantOK {
				t.Errorf("%d of %d calls allowed across 3 replicas; want %d", ok, tc.calls, tc.wantOK)
			}
		})
	}
}

// A check costs one Redis round trip (one script call), and a check
// without a limit none.
func TestLimiterCostsOneRoundTripAndNoneWithoutALimit(t *testing.T) {
	rs := testservice.Redis(t)
	c := open(t, rs.URL(), "r", nil)
	l := c.Limiter()
	ctx := context.Background()
	// The first check after Redis starts loads the script (EVALSHA is
	// refused with NOSCRIPT, then EVAL): not the steady state measured.
	if _, _, err := l.Allow(ctx, "warm", 1, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		perSecond float64
		want      int
	}{
		{"a limit", 10, 1},
		{"a limit, refusing", slow, 1},
		{"no limit", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := scriptCalls(t, c.Redis())
			const n = 20
			for range n {
				if _, _, err := l.Allow(ctx, "k", tc.perSecond, 1); err != nil {
					t.Fatal(err)
				}
			}
			if got := scriptCalls(t, c.Redis()) - before; got != n*tc.want {
				t.Errorf("%d checks ran %d scripts in Redis; want %d", n, got, n*tc.want)
			}
		})
	}
}

// Redis stopped: checks fail fast with ErrUnavailable (for the caller to
// fall back on its own bucket), one warning says so; Redis back: checks
// succeed again without anyone's help, and one line says so.
func TestLimiterFailsFastWhileRedisIsDownAndRecovers(t *testing.T) {
	rs := testservice.Redis(t)
	var logs logBuffer
	l := open(t, rs.URL(), "r", &logs).Limiter()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if ok, _, err := l.Allow(ctx, "k", slow, 1); !ok || err != nil {
		t.Fatalf("before the outage: %v %v", ok, err)
	}
	rs.Stop()
	for range 50 {
		_, _, err := l.Allow(ctx, "k", slow, 1)
		if !errors.Is(err, cluster.ErrUnavailable) {
			t.Fatalf("with Redis stopped: %v, want ErrUnavailable", err)
		}
	}
	if n := strings.Count(logs.String(), "each replica holds rate limits alone"); n != 1 {
		t.Errorf("the outage was logged %d times; want once:\n%s", n, logs.String())
	}
	rs.Start()
	for {
		ok, _, err := l.Allow(ctx, "after", slow, 1)
		if err == nil {
			if !ok {
				t.Error("a fresh bucket refused the first call")
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Redis restarted, yet checks still fail: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := strings.Count(logs.String(), "rate limits are shared by the replicas again"); n != 1 {
		t.Errorf("the recovery was logged %d times; want once:\n%s", n, logs.String())
	}
}
