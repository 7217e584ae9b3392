package gateway

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

const catalogEnv = "MCPGATE_TEST_CATALOG"

// catalogUpstream serves the tools of a catalog file; each call answers
// with the tool's name and the arguments it got, after the engine has
// validated them against the tool's schema.
func catalogUpstream(path string) *mcp.Server {
	es, err := toolsearch.LoadCatalog(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "catalog", Version: "1"}, nil)
	for _, e := range es {
		name := e.Tool.Name
		if err := s.AddTool(e.Tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.TextResult(fmt.Sprintf("%s called with %s", name, req.Params.Arguments)), nil
		}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	return s
}

// catalogServers configures the testdata catalogs as stdio upstreams.
func catalogServers(t *testing.T) map[string]*config.Server {
	t.Helper()
	out := map[string]*config.Server{}
	for _, name := range []string{"github", "files", "calendar"} {
		path, err := filepath.Abs(filepath.Join("testdata", "catalogs", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = &config.Server{Name: name, Command: os.Args[0], Env: map[string]string{catalogEnv: path}}
	}
	return out
}

func searchGateway(t *testing.T, ts config.ToolSearch, copts *mcp.ClientOptions) (*Gateway, *mcp.ClientSession) {
	t.Helper()
	cfg := &config.Config{Servers: catalogServers(t), ToolSearch: ts}
	cfg.Servers["github"].Tools.Meta = map[string]map[string]any{"create_issue": {"related": []any{"github_list_issues"}, "category": "issues"}}
	cfg.ApplyDefaults()
	for _, s := range cfg.Servers {
		s.Start = "eager"
	}
	g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger()})
	waitState(t, g, StateReady)
	return g, connectTo(t, g.Server(), copts)
}

func discover(t *testing.T, cs *mcp.ClientSession, p DiscoverParams) *DiscoverResult {
	t.Helper()
	var res DiscoverResult
	if err := cs.Call(context.Background(), MethodDiscover, p, &res); err != nil {
		t.Fatal(err)
	}
	return &res
}

// The extension's methods, in both eras: discover ranks with scores and
// keeps to the budget, getSchema and getFullSchema give the definition.
func TestToolSearchMethods(t *testing.T) {
	for _, version := range []string{"2025-06-18", mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			_, cs := searchGateway(t, config.ToolSearch{}, &mcp.ClientOptions{ProtocolVersion: version})
			if _, ok := cs.InitializeResult().Capabilities.Experimental[ExtensionToolSearch]; !ok {
				t.Fatalf("capabilities.experimental lacks %s", ExtensionToolSearch)
			}
			for q, want := range map[string]string{
				"open an issue in my repository":     "github_create_issue",
				"open a pull request":                "github_create_pull_request",
				"read the text of a file on disk":    "files_read_file",
				"schedule a meeting with my team":    "calendar_create_event",
				"when are we all free for a meeting": "calendar_find_free_time",
				"rename a file":                      "files_move_file",
			} {
				res := discover(t, cs, DiscoverParams{Query: q})
				if len(res.Tools) == 0 || res.Tools[0].Name != want {
					t.Errorf("discover %q: got %v, want %s first", q, discoveredNames(res), want)
					continue
				}
				top := res.Tools[0]
				if top.Score <= 0 || top.Tokens <= 0 || top.Server == "" || top.InputSchema == nil {
					t.Errorf("discover %q: first hit lacks score, tokens, server or schema: %+v", q, top)
				}
			}
			res := discover(t, cs, DiscoverParams{Query: "issue", Context: DiscoverContext{MaxTools: 1}})
			if len(res.Tools) != 1 {
				t.Errorf("maxTools 1: %d tools", len(res.Tools))
			}
			if !slices.Contains(res.Tools[0].Related, "github_list_issues") {
				t.Errorf("create_issue's configured related tools missing: %+v", res.Tools[0].Related)
			}
			all := discover(t, cs, DiscoverParams{Query: "file repository issue meeting", Context: DiscoverContext{MaxTools: 50}})
			budget := all.TotalTokens / 2
			half := discover(t, cs, DiscoverParams{Query: "file repository issue meeting", Context: DiscoverContext{MaxTools: 50, TokenBudget: budget}})
			if half.TotalTokens > budget || len(half.Tools) == 0 || half.Omitted == 0 {
				t.Errorf("budget %d: %d tokens in %d tools, %d omitted", budget, half.TotalTokens, len(half.Tools), half.Omitted)
			}
			sum := 0
			for _, tool := range half.Tools {
				sum += tool.Tokens
			}
			if sum != half.TotalTokens {
				t.Errorf("totalTokens %d, tools sum to %d", half.TotalTokens, sum)
			}

			var tool mcp.Tool
			if err := cs.Call(context.Background(), MethodGetSchema, GetSchemaParams{Name: "github_create_issue"}, &tool); err != nil {
				t.Fatal(err)
			}
			props, _ := tool.InputSchema.(map[string]any)["properties"].(map[string]any)
			if tool.Name != "github_create_issue" || len(props) != 4 {
				t.Errorf("getSchema: %+v", tool)
			}
			var full FullSchemaResult
			if err := cs.Call(context.Background(), MethodGetFullSchema, GetSchemaParams{Name: "github_create_issue"}, &full); err != nil {
				t.Fatal(err)
			}
			ex, _ := full.Examples[0].(map[string]any)
			if full.Tool == nil || len(ex) != 3 || !strings.Contains(full.Documentation, "`title` (string, required)") ||
				len(full.Related) != 1 || full.Related[0].Name != "github_list_issues" || full.Tokens <= 0 {
				t.Errorf("getFullSchema: examples %v, related %+v, tokens %d, documentation:\n%s", full.Examples, full.Related, full.Tokens, full.Documentation)
			}
			for _, m := range []string{MethodGetSchema, MethodGetFullSchema} {
				err := cs.Call(context.Background(), m, GetSchemaParams{Name: "github_nope"}, &tool)
				if rpcCode(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("%s of an unknown tool: %v, want -32602", m, err)
				}
			}
			if err := cs.Call(context.Background(), MethodDiscover, map[string]any{"query": 7}, nil); rpcCode(err) != jsonrpc.CodeInvalidParams {
				t.Errorf("discover with a number for query: %v, want -32602", err)
			}
			// A misspelt query is no empty search; a standard method
			// still ignores members it does not know.
			for _, p := range []any{map[string]any{"q": "write"}, map[string]any{}, map[string]any{"query": " "}} {
				err := cs.Call(context.Background(), MethodDiscover, p, nil)
				if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `needs "query"`) {
					t.Errorf("discover with %v: %v, want -32602 naming query", p, err)
				}
			}
			// A query past what a search reads is refused, not cut short
			// unseen.
			long := strings.Repeat("read a file ", toolsearch.MaxQueryLen/12+1)
			if err := cs.Call(context.Background(), MethodDiscover, DiscoverParams{Query: long}, nil); rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "at most 4096") {
				t.Errorf("discover with %d characters: %v, want -32602 saying the limit", len(long), err)
			}
			if err := cs.Call(context.Background(), "tools/list", map[string]any{"q": "write"}, nil); err != nil {
				t.Errorf("tools/list with an unknown member: %v", err)
			}
		})
	}
}

func discoveredNames(res *DiscoverResult) []string {
	var out []string
	for _, t := range res.Tools {
		out = append(out, t.Name)
	}
	return out
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// Per-server listing modes: minimal tools lose their schemas, search-mode
// tools leave the list (but the pinned one), the meta-tools appear, and
// a full-mode server is untouched.
func TestToolListingModes(t *testing.T) {
	_, cs := searchGateway(t, config.ToolSearch{
		Servers: map[string]string{"github": config.ListingMinimal, "files": config.ListingSearch},
		Pinned:  []string{"files_read_file"},
	}, nil)
	tools := listTools(t, cs)
	var names []string
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"calendar_create_event", "calendar_delete_event", "calendar_find_free_time", "calendar_list_events",
		"call_tool", "describe_tool", "files_read_file",
		"github_create_issue", "github_create_pull_request", "github_get_file_contents", "github_list_issues", "github_merge_pull_request", "github_search_code",
		"search_tools"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools/list:\n got %v\nwant %v", names, want)
	}
	gh := tools["github_create_issue"]
	if props := gh.InputSchema.(map[string]any)["properties"]; props != nil || gh.Meta[MetaSchema] != "deferred" || strings.Contains(gh.Description, "\n") {
		t.Errorf("minimal tool: %+v", gh)
	}
	if props := tools["calendar_create_event"].InputSchema.(map[string]any)["properties"]; props == nil {
		t.Errorf("full-mode tool lost its schema")
	}
	if props := tools["files_read_file"].InputSchema.(map[string]any)["properties"]; props == nil {
		t.Errorf("pinned tool lost its schema")
	}
	// A minimal tool is still called by its name, and its upstream still
	// checks the arguments.
	if got := callText(t, cs, "github_create_issue", map[string]any{"owner": "o", "repo": "r", "title": "t"}); !strings.Contains(got, "create_issue called with") {
		t.Errorf("call of a minimal tool: %s", got)
	}
}

// A client that knows only tools/list and tools/call finds a tool with
// search_tools and calls it through call_tool; bad arguments and unknown
// names get errors the model can act on.
func TestMetaToolsForStandardClients(t *testing.T) {
	_, cs := searchGateway(t, config.ToolSearch{Listing: config.ListingSearch}, nil)
	tools := listTools(t, cs)
	if len(tools) != 3 || tools[MetaSearchTools] == nil || tools[MetaDescribeTool] == nil || tools[MetaCallTool] == nil {
		t.Fatalf("search mode lists %v", tools)
	}
	for _, mt := range tools {
		if strings.Contains(mt.Description, "github") || strings.Contains(mt.Description, "calendar") {
			t.Errorf("meta-tool %s names a tool: %q", mt.Name, mt.Description)
		}
	}
	res, err := cs.CallTool(context.Background(), MetaSearchTools, map[string]any{"query": "create an issue in a repository", "k": 3})
	if err != nil || res.IsError {
		t.Fatalf("search_tools: %v %+v", err, res)
	}
	var found foundTools
	data, _ := jsonv2.Marshal(res.StructuredContent)
	if err := jsonv2.Unmarshal(data, &found); err != nil || len(found.Tools) == 0 || len(found.Tools) > 3 {
		t.Fatalf("search_tools structured result %s: %v", data, err)
	}
	first := found.Tools[0]
	if first.Name != "github_create_issue" || first.InputSchema == nil {
		t.Fatalf("search_tools first hit %+v", first)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, "github_create_issue") || !strings.Contains(text, "inputSchema") {
		t.Errorf("search_tools text lacks the tool and its schema: %s", text)
	}
	got := callText(t, cs, MetaCallTool, map[string]any{"name": first.Name, "arguments": map[string]any{"owner": "me", "repo": "r", "title": "Crash on start"}})
	if !strings.HasPrefix(got, "create_issue called with {") || !strings.Contains(got, `"owner":"me"`) || !strings.Contains(got, `"repo":"r"`) || !strings.Contains(got, `"title":"Crash on start"`) {
		t.Errorf("call_tool result %q", got)
	}
	for args, want := range map[string]string{
		`{"name": "github_create_issue", "arguments": {"owner": "me"}}`: "Invalid arguments for tool \"github_create_issue\"",
		`{"name": "github_nope"}`:                           "Unknown tool \"github_nope\"",
		`{"name": "call_tool", "arguments": {"name": "x"}}`: "not itself",
	} {
		res, err := cs.CallTool(context.Background(), MetaCallTool, jsontext.Value(args))
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, want) {
			t.Errorf("call_tool %s: %v %+v, want an error result with %q", args, err, res, want)
		}
	}
	// The schema says how long a query may be, and a longer one is an
	// error result the model can act on.
	if ml := tools[MetaSearchTools].InputSchema.(map[string]any)["properties"].(map[string]any)["query"].(map[string]any)["maxLength"]; ml != float64(toolsearch.MaxQueryLen) {
		t.Errorf("search_tools query maxLength %v, want %d", ml, toolsearch.MaxQueryLen)
	}
	long, err := cs.CallTool(context.Background(), MetaSearchTools, map[string]any{"query": strings.Repeat("x", toolsearch.MaxQueryLen+1)})
	if err != nil || !long.IsError || !strings.Contains(long.Content[0].(*mcp.TextContent).Text, "query") {
		t.Errorf("search_tools with a query past the limit: %v %+v, want an error result naming query", err, long)
	}
	d, err := cs.CallTool(context.Background(), MetaDescribeTool, map[string]any{"name": "files_move_file"})
	if err != nil || d.IsError || !strings.Contains(d.Content[0].(*mcp.TextContent).Text, "destination") {
		t.Errorf("describe_tool: %v %+v", err, d)
	}
	// Tools hidden by search mode are still there for a direct call.
	if got := callText(t, cs, "files_read_file", map[string]any{"path": "/tmp/x"}); !strings.Contains(got, "read_file called") {
		t.Errorf("direct call in search mode: %q", got)
	}
}

// Tools called one after the other by the same caller, twice, are
// offered beside each other; the audit log teaches a new gateway the same.
func TestRelatedByCoCalls(t *testing.T) {
	dir := t.TempDir()
	audit, err := OpenAudit(filepath.Join(dir, "audit.db"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Servers: catalogServers(t)}
	cfg.ApplyDefaults()
	g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger(), Audit: audit})
	waitState(t, g, StateReady, StateIdle)
	cs := connectTo(t, g.Server(), nil)
	related := func(g *Gateway) []string {
		return g.search.Related("calendar_find_free_time")
	}
	for i := range 2 {
		callText(t, cs, "calendar_find_free_time", map[string]any{"attendees": []string{"a@example.com"}, "duration": 30})
		if i == 0 && len(related(g)) > 0 {
			t.Errorf("related after one co-call: %v", related(g))
		}
		callText(t, cs, "calendar_create_event", map[string]any{"title": "sync", "start": "2026-11-23T10:00:00Z", "end": "2026-11-23T10:30:00Z"})
	}
	if got := related(g); !slices.Equal(got, []string{"calendar_create_event"}) {
		t.Fatalf("related of find_free_time: %v", got)
	}
	res := discover(t, cs, DiscoverParams{Query: "free time for a meeting", Context: DiscoverContext{MaxTools: 1}})
	if len(res.Tools) != 1 || !slices.Contains(res.Tools[0].Related, "calendar_create_event") {
		t.Errorf("discover does not offer the co-called tool: %+v", res.Tools)
	}
	// Anonymous callers' co-calls live in memory only; a principal's are
	// in the audit log, which a new gateway learns from.
	audit.Record(AuditRecord{Time: time.Now().Add(-2 * time.Minute), Principal: "ann", Tool: "files_read_file", Upstream: "files", Outcome: "ok"})
	audit.Record(AuditRecord{Time: time.Now().Add(-time.Minute), Principal: "ann", Tool: "files_write_file", Upstream: "files", Outcome: "ok"})
	audit.Record(AuditRecord{Time: time.Now().Add(-50 * time.Second), Principal: "ann", Tool: "files_read_file", Upstream: "files", Outcome: "ok"})
	audit.Record(AuditRecord{Time: time.Now().Add(-40 * time.Second), Principal: "ann", Tool: "files_write_file", Upstream: "files", Outcome: "ok"})
	audit.Close()
	audit2, err := OpenAudit(filepath.Join(dir, "audit.db"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer audit2.Close()
	g2 := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger(), Audit: audit2})
	waitState(t, g2, StateReady, StateIdle)
	waitUntil(t, func() bool { _, _, ok := g2.search.Tool("files_read_file"); return ok }, "files indexed")
	if got := g2.search.Related("files_read_file"); !slices.Equal(got, []string{"files_write_file"}) {
		t.Errorf("related learnt from the audit log: %v", got)
	}
}

// A tenant's toolListing overrides the servers' modes for its callers
// only; tools/discover and the meta-tools see only the tenant's tools.
func TestToolListingPerTenant(t *testing.T) {
	cfg := &config.Config{
		Servers: catalogServers(t),
		Tenants: map[string]*config.Tenant{
			"acme":   {Principals: []string{"apikey:alice"}, Servers: []string{"github", "files"}, ToolListing: config.ListingSearch},
			"globex": {Principals: []string{"apikey:bob"}},
		},
		ToolSearch: config.ToolSearch{Servers: map[string]string{"github": config.ListingMinimal}},
	}
	cfg.ApplyDefaults()
	for _, s := range cfg.Servers {
		s.Start = "eager"
	}
	g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger()})
	waitState(t, g, StateReady)
	srv := serveTenants(t, g)
	connect := func(user string) *mcp.ClientSession { return connectUser(t, srv, user) }
	alice, bob := connect("alice"), connect("bob")
	if got := toolNames(t, alice); !slices.Equal(got, []string{"call_tool", "describe_tool", "search_tools"}) {
		t.Errorf("acme (search mode) lists %v", got)
	}
	bobTools := listTools(t, bob)
	if len(bobTools) != 15 || bobTools[MetaSearchTools] != nil {
		t.Errorf("globex lists %d tools (meta-tools: %v)", len(bobTools), bobTools[MetaSearchTools] != nil)
	}
	if gh := bobTools["github_create_issue"]; gh == nil || gh.Meta[MetaSchema] != "deferred" {
		t.Errorf("github is minimal for globex: %+v", gh)
	}
	res, err := alice.CallTool(context.Background(), MetaSearchTools, map[string]any{"query": "schedule a meeting", "k": 10})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; strings.Contains(text, "calendar_") {
		t.Errorf("acme's search shows calendar tools, which acme cannot see: %s", text)
	}
	r, err := alice.CallTool(context.Background(), MetaCallTool, map[string]any{"name": "calendar_list_events", "arguments": map[string]any{"from": "a", "to": "b"}})
	if err != nil || !r.IsError {
		t.Errorf("acme called a calendar tool through call_tool: %v %+v", err, r)
	}
	var d DiscoverResult
	if err := alice.Call(context.Background(), MethodDiscover, DiscoverParams{Query: "meeting calendar event"}, &d); err != nil {
		t.Fatal(err)
	}
	for _, tool := range d.Tools {
		if strings.HasPrefix(tool.Name, "calendar_") {
			t.Errorf("discover shows acme %s", tool.Name)
		}
	}
}

// A tool published under a meta-tool's name (server "call", tool renamed
// "tool") does not replace the meta-tool: it is left out and logged, in
// either listing mode, and tool search keeps working.
func TestMetaToolNameCollision(t *testing.T) {
	for _, mode := range []string{config.ListingSearch, config.ListingFull} {
		t.Run(mode, func(t *testing.T) {
			var logs logBuffer
			up := stdioServer("call")
			up.Start = "eager"
			up.Tools.Rename = map[string]string{"echo": "tool"}
			cfg := &config.Config{Servers: map[string]*config.Server{"call": up}, ToolSearch: config.ToolSearch{Listing: mode}}
			g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
			waitState(t, g, StateReady)
			cs := connectTo(t, g.Server(), nil)
			tools := listTools(t, cs)
			if !strings.Contains(logs.String(), "collides with one of the gateway's tool search tools") {
				t.Error("the collision was not logged")
			}
			if mode == config.ListingFull {
				if _, ok := tools[MetaCallTool]; ok {
					t.Errorf("full mode lists %s", MetaCallTool)
				}
				if _, err := cs.CallTool(context.Background(), MetaCallTool, map[string]any{"text": "x"}); rpcCode(err) != jsonrpc.CodeInvalidParams {
					t.Errorf("calling %s in full mode: %v, want -32602", MetaCallTool, err)
				}
				return
			}
			if len(tools) != 3 || tools[MetaCallTool] == nil || tools[MetaSearchTools] == nil {
				t.Fatalf("search mode lists %v", tools)
			}
			pid := callText(t, cs, MetaCallTool, map[string]any{"name": "call_pid", "arguments": map[string]any{}})
			if _, err := strconv.Atoi(pid); err != nil {
				t.Errorf("call_tool reached %q, not call_pid", pid)
			}
		})
	}
}

// The co-call tracker stays bounded under many callers, all recent, and
// keeps the caller it just saw.
func TestCoCallTrackerBounded(t *testing.T) {
	var c coCallTracker
	now := time.Now()
	for i := range maxCallers + 100 {
		caller := fmt.Sprint("s:", i)
		c.called(nil, caller, "t", now)
		if _, ok := c.last[caller]; !ok {
			t.Fatalf("caller %d forgotten as soon as seen", i)
		}
	}
	if n := len(c.last); n > maxCallers {
		t.Errorf("%d callers remembered, bound %d", n, maxCallers)
	}
}

// Issue 20: calls of the meta-tools are counted under their own names in
// the metrics, not as tool="unknown".
func TestMetaToolCallsCountedByName(t *testing.T) {
	var logs logBuffer
	reg := prometheus.NewRegistry()
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": stdioServer("alpha")}, ToolSearch: config.ToolSearch{Listing: config.ListingSearch}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), Metrics: reg})
	waitState(t, g, StateReady, StateIdle)
	cs := connectTo(t, g.Server(), nil)
	for _, call := range []struct {
		name string
		args map[string]any
	}{{MetaSearchTools, map[string]any{"query": "echo"}}, {MetaDescribeTool, map[string]any{"name": "alpha_echo"}}} {
		if _, err := cs.CallTool(context.Background(), call.name, call.args); err != nil {
			t.Fatal(err)
		}
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "mcpgate_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tool" {
					seen[l.GetValue()] = true
				}
			}
		}
	}
	if !seen[MetaSearchTools] || !seen[MetaDescribeTool] || seen["unknown"] {
		t.Errorf("tool labels: %v", seen)
	}
}
