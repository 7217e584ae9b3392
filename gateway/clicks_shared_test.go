package gateway

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/testservice"
)

// Behind a load balancer a search and the call it leads to reach
// different replicas: the call still counts as chosen from the search.
// While Redis is down, a search and a call on the same replica still
// count.
func TestClicksCountAcrossReplicas(t *testing.T) {
	rs := testservice.Redis(t)
	reps := replicas(t, 2, rs.URL(), func() *config.Config { return learningConfig(t, nil) })
	alice0 := connectUser(t, serveTenants(t, reps[0].g), "alice")
	alice1 := connectUser(t, serveTenants(t, reps[1].g), "alice")
	bob0 := connectUser(t, serveTenants(t, reps[0].g), "bob")
	rdb := reps[0].c.Redis()

	// A caller who has not searched costs Redis no lookup.
	lookups := redisCalls(t, rdb, "lrange")
	for range 5 {
		callText(t, bob0, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
	}
	if n := redisCalls(t, rdb, "lrange") - lookups; n != 0 {
		t.Errorf("calls of a caller who never searched made %d lookups in Redis, want none", n)
	}

	wantLexicalOrder(t, searchNames(t, alice0, clickQuery))
	// Replica 1 hears of the search over pub/sub; a call before that
	// would not look for it.
	waitUntil(t, func() bool {
		return reps[1].g.clicks.shared.searchedRecently(`p:apikey:alice`+"\x00acme", reps[1].g.clicks.clock())
	}, "replica 1 to hear that alice searched")
	callText(t, alice1, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
	waitUntil(t, func() bool { return firstOf(searchNames(t, alice1, clickQuery)) == "files_list_directory" },
		"the call on replica 1 to count as chosen from the search on replica 0")

	if redisCalls(t, rdb, "lrange") == lookups {
		t.Error("the call that made the click made no lookup in Redis")
	}

	rs.Stop()
	wantLexicalOrder(t, searchNames(t, bob0, clickQuery))
	callText(t, bob0, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
	waitUntil(t, func() bool { return firstOf(searchNames(t, bob0, clickQuery)) == "files_list_directory" },
		"with Redis down, a call to count as chosen from a search on the same replica")
	if n := strings.Count(reps[0].logs.String(), "tool search learning: Redis failed"); n != 1 {
		t.Errorf("replica 0 logged the outage %d times; want once", n)
	}
	for _, line := range strings.Split(reps[0].logs.String(), "\n") {
		if strings.Contains(line, "learning") && strings.Contains(line, clickQuery) {
			t.Errorf("a log line holds the query: %s", line)
		}
	}
}

// A search is credited with each of its tools once, whichever replica
// asks, within the window only, and for the tools it showed only.
func TestSharedSearchesCreditEachToolOnce(t *testing.T) {
	rs := testservice.Redis(t)
	ctx := context.Background()
	var shared []*sharedSearches
	for _, id := range []string{"a", "b"} {
		c, err := cluster.Open(ctx, cluster.Options{URL: rs.URL(), ReplicaID: id})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		shared = append(shared, newSharedSearches(c))
	}
	at := time.Now()
	if err := shared[0].remember(ctx, "p:alice", &shownSearch{tenant: "acme", query: "read a file", tools: []string{"read_file", "list_dir"}, at: at}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		who, caller, tool string
		after             time.Duration
		want              bool
	}{
		{"another caller", "p:bob", "read_file", 0, false},
		{"a tool not shown", "p:alice", "write_file", 0, false},
		{"after the window", "p:alice", "read_file", clickWindow + time.Second, false},
		{"the other replica", "p:alice", "read_file", time.Second, true},
		{"again", "p:alice", "read_file", 2 * time.Second, false},
		{"another tool shown", "p:alice", "list_dir", 3 * time.Second, true},
	} {
		ss, err := shared[1].chosen(ctx, tt.caller, tt.tool, at.Add(tt.after))
		if err != nil {
			t.Fatal(err)
		}
		if got := ss != nil; got != tt.want {
			t.Errorf("%s: credited %v, want %v", tt.who, got, tt.want)
		}
		if ss != nil && (ss.Tenant != "acme" || ss.Query != "read a file") {
			t.Errorf("%s: search %+v, want acme's \"read a file\"", tt.who, ss)
		}
	}
}
