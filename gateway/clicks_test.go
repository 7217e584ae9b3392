package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// clickQuery ranks github_get_file_contents first and files_list_directory
// second over the test catalogs, close enough for one click to swap them.
const clickQuery = "show me the file"

// searchNames calls search_tools for five tools and returns their names,
// in order.
func searchNames(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	return searchTop(t, cs, query, 5)
}

func searchTop(t *testing.T, cs *mcp.ClientSession, query string, k int) []string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), MetaSearchTools, map[string]any{"query": query, "k": k})
	if err != nil || res.IsError {
		t.Fatalf("search_tools %q: %v %+v", query, err, res)
	}
	var found foundTools
	data, _ := jsonv2.Marshal(res.StructuredContent)
	if err := jsonv2.Unmarshal(data, &found); err != nil {
		t.Fatalf("search_tools structured result %s: %v", data, err)
	}
	out := make([]string, len(found.Tools))
	for i, f := range found.Tools {
		out[i] = f.Name
	}
	return out
}

func firstOf(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// wantLexicalOrder fails the test unless the catalogs still rank as the
// tests need: if the ranking changes, pick another query.
func wantLexicalOrder(t *testing.T, got []string) {
	t.Helper()
	if len(got) < 2 || got[0] != "github_get_file_contents" || got[1] != "files_list_directory" {
		t.Fatalf("%q gives %v before any call; the test needs github_get_file_contents, then files_list_directory", clickQuery, got)
	}
}

// learningConfig serves the test catalogs in search mode, their servers
// started at once, to two tenants: acme (alice, carol, dave) and globex
// (bob), who see the same tools.
func learningConfig(t *testing.T, learn *bool) *config.Config {
	t.Helper()
	cfg := &config.Config{
		Servers: catalogServers(t),
		Tenants: map[string]*config.Tenant{
			"acme":   {Principals: []string{"apikey:alice", "apikey:carol", "apikey:dave"}},
			"globex": {Principals: []string{"apikey:bob"}},
		},
		ToolSearch: config.ToolSearch{Listing: config.ListingSearch, Learn: learn},
	}
	cfg.ApplyDefaults()
	for _, s := range cfg.Servers {
		s.Start = "eager"
	}
	return cfg
}

// learningGateway serves learningConfig.
func learningGateway(t *testing.T, learn *bool) (*Gateway, func(user string) *mcp.ClientSession) {
	t.Helper()
	g := runConfigured(t, learningConfig(t, learn), &Options{Logger: (&logBuffer{}).logger()})
	waitState(t, g, StateReady)
	srv := serveTenants(t, g)
	return g, func(user string) *mcp.ClientSession {
		cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"X-User": {user}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
}

// A search, then a call of one of its tools, raises that tool in the
// tenant's next searches with the same words: for its other callers too,
// never for another tenant's, and not once learning is reset.
func TestSearchLearnsFromCallsForTheCallersTenantOnly(t *testing.T) {
	g, connect := learningGateway(t, nil)
	alice, carol, bob := connect("alice"), connect("carol"), connect("bob")
	wantLexicalOrder(t, searchNames(t, alice, clickQuery))
	callText(t, alice, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
	for _, tt := range []struct {
		who  string
		cs   *mcp.ClientSession
		want string
	}{
		{"alice, who called it", alice, "files_list_directory"},
		{"carol, of the same tenant", carol, "files_list_directory"},
		{"bob, of another tenant", bob, "github_get_file_contents"},
	} {
		if got := firstOf(searchNames(t, tt.cs, clickQuery)); got != tt.want {
			t.Errorf("%s: %q ranks %s first, want %s", tt.who, clickQuery, got, tt.want)
		}
	}
	// The operator resets a tenant's learning through the admin API,
	// which is closed without the admin token.
	ops := httptest.NewServer(g.OpsHandler(prometheus.NewRegistry(), &OpsOptions{AdminToken: testAdminToken}))
	t.Cleanup(ops.Close)
	for _, token := range []string{"", testAdminToken} {
		req, _ := http.NewRequest(http.MethodPost, ops.URL+"/admin/learning/reset?tenant=acme", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{false: http.StatusUnauthorized, true: http.StatusOK}[token != ""]; resp.StatusCode != want {
			t.Fatalf("POST /admin/learning/reset with token %q: %d, want %d", token, resp.StatusCode, want)
		}
		if token == "" && firstOf(searchNames(t, alice, clickQuery)) != "files_list_directory" {
			t.Fatal("a reset without the admin token forgot what was learnt")
		}
	}
	if got := firstOf(searchNames(t, alice, clickQuery)); got != "github_get_file_contents" {
		t.Errorf("after the reset of acme, %q ranks %s first for alice, want the index's own order", clickQuery, got)
	}
}

// testClock is a clock the test moves; handlers read it concurrently.
type testClock struct{ ns atomic.Int64 }

func (c *testClock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// Only a call that follows a search of the same caller, within the window,
// of a tool that search showed, is taken as chosen from it; a direct
// tools/call counts as call_tool does; learn: false learns nothing.
func TestSearchLearnsOnlyFromCallsThatFollowItsResults(t *testing.T) {
	off := false
	for _, tt := range []struct {
		name  string
		learn *bool
		steps func(t *testing.T, a, b *mcp.ClientSession, clock *testClock)
		want  string
	}{
		{"a direct call of a tool the search showed", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			searchNames(t, a, clickQuery)
			callText(t, a, "files_list_directory", map[string]any{"path": "/tmp"})
		}, "files_list_directory"},
		{"tools/discover's results, then a direct call", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			var res DiscoverResult
			if err := a.Call(context.Background(), MethodDiscover, DiscoverParams{Query: clickQuery}, &res); err != nil {
				t.Fatal(err)
			}
			callText(t, a, "files_list_directory", map[string]any{"path": "/tmp"})
		}, "files_list_directory"},
		{"learning switched off", &off, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			searchNames(t, a, clickQuery)
			callText(t, a, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
		}, "github_get_file_contents"},
		{"a call after the window", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			searchNames(t, a, clickQuery)
			clock.advance(clickWindow + time.Second)
			callText(t, a, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
		}, "github_get_file_contents"},
		{"a call by another caller", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			searchNames(t, a, clickQuery)
			callText(t, b, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
		}, "github_get_file_contents"},
		{"a call of a tool the search did not show", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			if got := searchTop(t, a, clickQuery, 1); len(got) != 1 || got[0] == "files_list_directory" {
				t.Fatalf("the first tool alone: %v", got)
			}
			callText(t, a, MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{"path": "/tmp"}})
		}, "github_get_file_contents"},
		{"a call that fails", nil, func(t *testing.T, a, b *mcp.ClientSession, clock *testClock) {
			searchNames(t, a, clickQuery)
			res, err := a.CallTool(context.Background(), MetaCallTool, map[string]any{"name": "files_list_directory", "arguments": map[string]any{}})
			if err != nil || !res.IsError {
				t.Fatalf("call_tool without its required argument: %v %+v, want an error result", err, res)
			}
		}, "github_get_file_contents"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, connect := learningGateway(t, tt.learn)
			clock := &testClock{}
			clock.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
			g.clicks.now = clock.Now // before the first search
			// Three users of one tenant: dave only checks the ranking
			// the others' calls change.
			alice, carol, dave := connect("alice"), connect("carol"), connect("dave")
			wantLexicalOrder(t, searchNames(t, dave, clickQuery))
			tt.steps(t, alice, carol, clock)
			if got := firstOf(searchNames(t, dave, clickQuery)); got != tt.want {
				t.Errorf("%q then ranks %s first, want %s", clickQuery, got, tt.want)
			}
		})
	}
}

// Many callers, each searching many times, are remembered within bounds.
func TestClickTrackerBounded(t *testing.T) {
	var c clickTracker
	for i := range maxCallers + 100 {
		caller := fmt.Sprint("s:", i)
		for range searchesPerCaller + 2 {
			c.remember(caller, &shownSearch{query: "q", tools: []string{"t"}})
		}
		if n := len(c.last[caller]); n != searchesPerCaller {
			t.Fatalf("caller %d: %d searches remembered, want the last %d", i, n, searchesPerCaller)
		}
	}
	if n := len(c.last); n > maxCallers {
		t.Errorf("%d callers remembered, bound %d", n, maxCallers)
	}
}
