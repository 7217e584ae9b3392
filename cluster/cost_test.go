package cluster_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/redis/go-redis/v9"
)

// commands returns how many commands Redis has run (INFO commandstats),
// less the INFO calls themselves.
func commands(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		v, _ := strconv.Atoi(calls)
		n += v
	}
	return n
}

// TestRedisCostOfWarmCalls counts the Redis commands that tools/call costs
// on a warm session (every replica holds a copy): the hot path is meant
// to cost none, the liveness heartbeats aside. It also reports the Redis
// memory an idle session takes.
func TestRedisCostOfWarmCalls(t *testing.T) {
	rd := testservice.Redis(t)
	rs, url := replicas(t, rd.URL(), 3)
	ctx := context.Background()
	rdb := rs[0].c.Redis()
	c := mcp.NewClient(&mcp.Implementation{Name: "cost-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 6 { // a copy on every replica
		if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
			t.Fatal(err)
		}
	}
	const calls = 300
	before := commands(t, rdb)
	for range calls {
		if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
			t.Fatal(err)
		}
	}
	used := commands(t, rdb) - before
	// Each replica renews its liveness key once a second; the calls take
	// well under a second each, so the count is bounded by the calls
	// (touches are at most one a minute per copy).
	perCall := float64(used) / calls
	t.Logf("Redis commands per warm tools/call: %.3f (%d for %d calls, heartbeats included)", perCall, used, calls)
	if perCall > 1 {
		t.Errorf("a warm tools/call costs %.2f Redis commands, want at most 1", perCall)
	}

	// The sessions' own keys, each sized by MEMORY USAGE: used_memory
	// over a few sessions moves with Redis's allocator and can even fall.
	keys := func() map[string]bool {
		out := map[string]bool{}
		iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			out[iter.Val()] = true
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const idle = 50
	keysBefore := keys()
	for range idle {
		c := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
		s, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
		if err != nil {
			t.Fatal(err)
		}
		_ = s // left open: idle
	}
	var bytes, added int64
	for k := range keys() {
		if keysBefore[k] {
			continue
		}
		n, err := rdb.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		bytes += n
		added++
	}
	perSession := bytes / idle
	t.Logf("Redis memory per idle session with its GET stream open: %d bytes (%d new keys over %d sessions, MEMORY USAGE)", perSession, added, idle)
	// A bound, not a timing: a session record that grew tenfold would
	// cost a 10,000-session cluster its Redis.
	if perSession <= 0 || perSession > 4096 {
		t.Errorf("an idle session takes %d bytes of Redis, want between 1 and 4096", perSession)
	}
}
