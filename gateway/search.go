package gateway

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// Tool search. Every published tool is indexed (toolsearch, BM25 by
// default) as its upstream publishes it. Clients that know our extension
// (announced under capabilities.experimental) ask tools/discover,
// tools/getSchema and tools/getFullSchema; standard clients get the same
// through the tool list itself: in minimal mode it carries names and
// one-line descriptions only, and in search mode only pinned tools and
// three meta-tools (search_tools, describe_tool, call_tool).

// ExtensionToolSearch is the capabilities.experimental key of the tool
// search methods.
const ExtensionToolSearch = "io.mcpgate/toolSearch"

// The extension's methods.
const (
	MethodDiscover      = "tools/discover"
	MethodGetSchema     = "tools/getSchema"
	MethodGetFullSchema = "tools/getFullSchema"
)

// MetaSchema marks, in a minimal listing, a tool whose schema is left
// out: {"io.mcpgate/schema": "deferred"} under _meta.
const MetaSchema = "io.mcpgate/schema"

// DiscoverParams are the params of tools/discover.
type DiscoverParams struct {
	Query   string          `json:"query"`
	Context DiscoverContext `json:"context,omitzero"`
}

// DiscoverContext bounds what tools/discover returns.
type DiscoverContext struct {
	// MaxTools is the most tools returned; zero means 10, at most 50.
	MaxTools int `json:"maxTools,omitzero"`
	// TokenBudget, when set, is the most estimated tokens the returned
	// definitions may cost together; tools that do not fit are skipped.
	TokenBudget int `json:"tokenBudget,omitzero"`
}

// DiscoveredTool is one tool of a tools/discover result: the full
// definition, with its rank's score, estimated token cost, server and
// related tools.
type DiscoveredTool struct {
	*mcp.Tool `json:",inline"`
	Score     float64  `json:"score"`
	Tokens    int      `json:"tokens"`
	Server    string   `json:"server"`
	Related   []string `json:"related,omitempty"`
}

// DiscoverResult is the result of tools/discover.
type DiscoverResult struct {
	Tools []DiscoveredTool `json:"tools"`
	// TotalTokens is the estimated cost of the returned definitions.
	TotalTokens int `json:"totalTokens"`
	// Omitted counts good matches left out to keep within the budget.
	Omitted int `json:"omitted,omitzero"`
}

// GetSchemaParams are the params of tools/getSchema and
// tools/getFullSchema.
type GetSchemaParams struct {
	Name string `json:"name"`
}

// FullSchemaResult is the result of tools/getFullSchema.
type FullSchemaResult struct {
	Tool *mcp.Tool `json:"tool"`
	// Examples are example arguments: configured ones (the tool's
	// _meta["io.mcpgate/tool"].examples), or one built from the schema.
	Examples []any `json:"examples"`
	// Documentation is the tool's documentation in Markdown: what it
	// does, then each parameter.
	Documentation string `json:"documentation"`
	// Related are tools worth knowing with this one.
	Related []RelatedTool `json:"related,omitempty"`
	Tokens  int           `json:"tokens"`
}

// RelatedTool names a related tool.
type RelatedTool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// visible is the downstream server's filter: the tenant's view, and the
// meta-tools only for callers that see some server in search mode.
func (g *Gateway) visible(ctx context.Context, kind mcp.ItemKind, name string) bool {
	if kind == mcp.KindTool && isMetaTool(name) {
		_, search := g.listings(ctx)
		return search
	}
	return g.filter(ctx, kind, name)
}

// setupSearch announces the extension and serves its methods.
func (g *Gateway) setupSearch() error {
	for method, h := range map[string]mcp.MethodHandler{
		MethodDiscover:      g.discover,
		MethodGetSchema:     g.getSchema,
		MethodGetFullSchema: g.getFullSchema,
	} {
		if err := g.server.HandleMethod(method, h); err != nil {
			return err
		}
	}
	return g.addMetaTools()
}

// indexTools replaces the indexed tools of server.
func (g *Gateway) indexTools(server string, tools []*mcp.Tool) {
	es := make([]toolsearch.Entry, len(tools))
	for i, t := range tools {
		es[i] = toolsearch.Entry{Name: t.Name, Tool: t}
	}
	g.search.SetServer(server, es)
}

// listingFor is how tools/list shows server's tools to the caller: the
// tenant's choice, else the server's, else the gateway's, else full.
func (g *Gateway) listingFor(ctx context.Context, server string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.listingLocked(ctx, server)
}

func (g *Gateway) listingLocked(ctx context.Context, server string) string {
	if tn, ok := TenantFrom(ctx); ok {
		if t := g.cfg.Tenants[tn]; t != nil && t.ToolListing != "" {
			return t.ToolListing
		}
	}
	ts := &g.cfg.ToolSearch
	if ts.Servers[server] == "" && ts.Listing == "" {
		if u := g.upstreams[server]; u != nil && u.largeAPI.Load() {
			return config.ListingSearch
		}
	}
	return cmp.Or(ts.Servers[server], ts.Listing, config.ListingFull)
}

// listings says which modes the caller sees any server in.
func (g *Gateway) listings(ctx context.Context) (minimal, search bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for name := range g.upstreams {
		switch g.listingLocked(ctx, name) {
		case config.ListingMinimal:
			minimal = true
		case config.ListingSearch:
			search = true
		}
	}
	return minimal, search
}

// pinned says whether a published tool stays listed in search mode.
func (g *Gateway) pinned(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.cfg.ToolSearch.Pinned {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// allowFor is the index filter of a caller: the tools it may see.
func (g *Gateway) allowFor(ctx context.Context) func(string) bool {
	return func(name string) bool { return g.filter(ctx, mcp.KindTool, name) }
}

func (g *Gateway) discover(ctx context.Context, req *mcp.Request) (any, error) {
	var p DiscoverParams
	if err := req.DecodeParams(&p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Query) == "" {
		// Unknown members are ignored, for forward compatibility, but a
		// misspelt query ({"q": ...}) must not read as "no tool fits".
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, `Invalid params: %s needs "query", a non-empty string saying what the tool should do, such as {"query": "read a file"}%s`, MethodDiscover, memberNames(req.RawParams))
	}
	if n := utf8.RuneCountInString(p.Query); n > toolsearch.MaxQueryLen {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: query is %d characters; at most %d are read. Say in a few words what the tool should do.", n, toolsearch.MaxQueryLen)
	}
	maxTools := p.Context.MaxTools
	switch {
	case maxTools < 0 || p.Context.TokenBudget < 0:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: context.maxTools and context.tokenBudget must not be negative")
	case maxTools == 0:
		maxTools = 10
	case maxTools > 50:
		maxTools = 50
	}
	// Ask for more than fit, so that a budget can skip a large tool and
	// still fill up with smaller good ones.
	hits := g.rankTools(ctx, toolsearch.Query{Text: p.Query, K: maxTools * 3, Allow: g.allowFor(ctx)})
	res := &DiscoverResult{Tools: []DiscoveredTool{}}
	shown := make([]toolsearch.Hit, 0, maxTools)
	for _, h := range hits {
		if len(res.Tools) == maxTools {
			break
		}
		if p.Context.TokenBudget > 0 && res.TotalTokens+h.Tokens > p.Context.TokenBudget {
			res.Omitted++
			continue
		}
		res.TotalTokens += h.Tokens
		res.Tools = append(res.Tools, DiscoveredTool{Tool: h.Tool, Score: math.Round(h.Score*1000) / 1000, Tokens: h.Tokens, Server: h.Server, Related: g.visibleNames(ctx, h.Related)})
		shown = append(shown, h)
	}
	// Only what the caller was shown can be what it then chose.
	g.searched(ctx, req, p.Query, shown)
	return res, nil
}

// memberNames lists the members of params, for an error that says what
// came instead of what was expected.
func memberNames(params []byte) string {
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(params, &m) != nil {
		return ""
	}
	delete(m, "_meta")
	if len(m) == 0 {
		return ""
	}
	names := slices.Sorted(maps.Keys(m))
	more := ""
	if len(names) > 5 {
		names, more = names[:5], fmt.Sprintf(" and %d more", len(names)-5)
	}
	for i, n := range names {
		names[i] = strconv.Quote(truncate(n, 40))
	}
	return "; got " + strings.Join(names, ", ") + more
}

// visibleNames keeps the names the caller may see.
func (g *Gateway) visibleNames(ctx context.Context, names []string) []string {
	return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !g.filter(ctx, mcp.KindTool, n) })
}

// lookupTool finds a published tool the caller may see.
func (g *Gateway) lookupTool(ctx context.Context, name string) (*mcp.Tool, error) {
	if name == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: name is required")
	}
	_, t, ok := g.search.Tool(name)
	if !ok || !g.filter(ctx, mcp.KindTool, name) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown tool %q; use tools/discover to find tools", name)
	}
	return t, nil
}

func (g *Gateway) getSchema(ctx context.Context, req *mcp.Request) (any, error) {
	var p GetSchemaParams
	if err := req.DecodeParams(&p); err != nil {
		return nil, err
	}
	return g.lookupTool(ctx, p.Name)
}

func (g *Gateway) getFullSchema(ctx context.Context, req *mcp.Request) (any, error) {
	var p GetSchemaParams
	if err := req.DecodeParams(&p); err != nil {
		return nil, err
	}
	t, err := g.lookupTool(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	res := &FullSchemaResult{Tool: t, Examples: examplesOf(t), Documentation: documentation(t), Related: []RelatedTool{}, Tokens: toolsearch.EstimateTokens(t)}
	for _, n := range g.visibleNames(ctx, g.search.Related(t.Name)) {
		if _, rt, ok := g.search.Tool(n); ok {
			res.Related = append(res.Related, RelatedTool{Name: n, Description: firstLine(rt.Description)})
		}
	}
	return res, nil
}
