package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// TestListingTokenCost measures what a session's tool definitions cost a
// model in each listing mode, over a real corpus of tool catalogs
// (MCPGATE_TOKEN_CORPUS, a catalog file or directory; by default the
// published servers' tools in ../../shared/eval/tools). A typical session
// lists the tools, then needs three of them:
//   - full: the list alone;
//   - minimal: the list, and three tools/getSchema;
//   - search: the list (pinned none, meta-tools only), three search_tools
//     calls of five results each.
//
// Run: go test -run TestListingTokenCost -v ./gateway/
func TestListingTokenCost(t *testing.T) {
	if raceEnabled {
		// 74 servers and 2,331 tools take over half a minute to
		// publish under the race detector on a busy machine.
		t.Skip("a measurement: run it without -race (see above)")
	}
	corpus := os.Getenv("MCPGATE_TOKEN_CORPUS")
	if corpus == "" {
		corpus = filepath.Join("..", "..", "shared", "eval", "tools")
	}
	es, err := toolsearch.LoadCatalog(corpus)
	if err != nil {
		t.Skipf("no corpus (%v): set MCPGATE_TOKEN_CORPUS to a catalog", err)
	}
	byServer := map[string][]*mcp.Tool{}
	for _, e := range es {
		byServer[e.Server] = append(byServer[e.Server], e.Tool)
	}
	builtins := map[string]*mcp.Server{}
	for name, tools := range byServer {
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
		for _, tool := range tools {
			tt := *tool
			tt.Unvalidated = true
			// A tool the engine refuses is left out, as a gateway would.
			_ = s.AddTool(&tt, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.TextResult("ok"), nil
			})
		}
		builtins[sanitizeName(name)] = s
	}
	queries := []string{"create an issue in a repository", "read a file", "search the web for recent news"}
	cost := map[string]int{}
	for _, mode := range []string{config.ListingFull, config.ListingMinimal, config.ListingSearch} {
		cfg := &config.Config{Servers: map[string]*config.Server{}, ToolSearch: config.ToolSearch{Listing: mode}}
		g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger(), Builtins: builtins})
		waitState(t, g, StateReady)
		cs := connectTo(t, g.Server(), nil)
		var list []*mcp.Tool
		for tool, err := range cs.Tools(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, tool)
		}
		tokens := tokensOf(t, map[string]any{"tools": list})
		listed := tokens
		switch mode {
		case config.ListingMinimal:
			for _, q := range queries {
				res := discover(t, cs, DiscoverParams{Query: q, Context: DiscoverContext{MaxTools: 1}})
				var tool mcp.Tool
				if err := cs.Call(context.Background(), MethodGetSchema, GetSchemaParams{Name: res.Tools[0].Name}, &tool); err != nil {
					t.Fatal(err)
				}
				tokens += tokensOf(t, &tool)
			}
		case config.ListingSearch:
			for _, q := range queries {
				res, err := cs.CallTool(context.Background(), MetaSearchTools, map[string]any{"query": q, "k": 5})
				if err != nil {
					t.Fatal(err)
				}
				tokens += tokensOf(t, res)
			}
		}
		cost[mode] = tokens
		t.Logf("%-7s %5d tools listed, %8d tokens listed, %8d tokens in the session", mode, len(list), listed, tokens)
		cs.Close()
		g.Close()
	}
	t.Logf("corpus %s: %d servers, %d tools; session cost minimal/full %.3f, search/full %.4f",
		corpus, len(byServer), len(es), float64(cost[config.ListingMinimal])/float64(cost[config.ListingFull]), float64(cost[config.ListingSearch])/float64(cost[config.ListingFull]))
	// Which of minimal and search costs less depends on the catalog: with
	// few tools of long schemas, fifteen full schemas from search_tools
	// weigh more than a short list and three schemas.
	if cost[config.ListingSearch] >= cost[config.ListingFull] || cost[config.ListingMinimal] >= cost[config.ListingFull] {
		t.Errorf("a session costs no less in minimal or search mode than in full: %v", cost)
	}
}

func tokensOf(t *testing.T, v any) int {
	t.Helper()
	data, err := jsonv2.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return toolsearch.EstimateTextTokens(string(data))
}

// sanitizeName makes a catalog's server name a gateway server name.
func sanitizeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	return string(b)
}
