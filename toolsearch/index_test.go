package toolsearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/mcp"
)

// tool is a definition with string parameters.
func tool(name, desc string, params ...string) *mcp.Tool {
	props := map[string]any{}
	for _, p := range params {
		props[p] = map[string]any{"type": "string", "description": "The " + p + "."}
	}
	return &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object", "properties": props}}
}

func entriesOf(tools ...*mcp.Tool) []Entry {
	es := make([]Entry, len(tools))
	for i, t := range tools {
		es[i] = Entry{Tool: t}
	}
	return es
}

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Name
	}
	return out
}

func search(ix *Index, text string) []string {
	return names(ix.Search(context.Background(), Query{Text: text}))
}

func TestSetServerReplaces(t *testing.T) {
	ix := New(nil)
	ix.SetServer("other", entriesOf(tool("zeta_widget", "A widget of another server")))
	ix.SetServer("files", entriesOf(
		tool("read_widget", "Read a widget"),
		tool("write_widget", "Write a widget"),
		tool("delete_widget", "Delete a widget"),
		tool("list_widgets", "List the widgets"),
	))
	if got := ix.Len(); got != 5 {
		t.Fatalf("Len = %d, want 5", got)
	}
	ix.SetServer("files", entriesOf(tool("move_widget", "Move a widget")))
	got := search(ix, "widget")
	slices.Sort(got)
	if want := []string{"move_widget", "zeta_widget"}; !slices.Equal(got, want) {
		t.Errorf("after SetServer, search(widget) = %q, want %q", got, want)
	}
	if got := ix.Len(); got != 2 {
		t.Errorf("Len = %d, want 2", got)
	}
	for _, name := range []string{"read_widget", "write_widget", "delete_widget", "list_widgets"} {
		if _, _, ok := ix.Tool(name); ok {
			t.Errorf("Tool(%q) found after its server was replaced", name)
		}
	}
	if _, _, ok := ix.Tool("zeta_widget"); !ok {
		t.Error("Tool(zeta_widget), of another server, lost")
	}
	// No entries remove the server.
	ix.SetServer("files", nil)
	if got := search(ix, "widget"); !slices.Equal(got, []string{"zeta_widget"}) {
		t.Errorf("after removing the server, search(widget) = %q", got)
	}
	if got := ix.Len(); got != 1 {
		t.Errorf("Len = %d, want 1", got)
	}
}

func TestSetServerSetsServer(t *testing.T) {
	ix := New(nil)
	ix.SetServer("files", []Entry{{Server: "wrong", Tool: tool("read_file", "Read a file")}})
	if server, _, _ := ix.Tool("read_file"); server != "files" {
		t.Errorf("server = %q, want files", server)
	}
}

func TestAddReplacesSameName(t *testing.T) {
	ix := New(nil)
	ix.Add(Entry{Server: "a", Tool: tool("fetch", "Fetch a web page")})
	ix.Add(Entry{Server: "b", Tool: tool("fetch", "Fetch a weather forecast")})
	if got := ix.Len(); got != 1 {
		t.Errorf("Len = %d, want 1", got)
	}
	if got := search(ix, "web page"); len(got) != 0 {
		t.Errorf("search(web page) = %q: the replaced definition is still found", got)
	}
	hits := ix.Search(context.Background(), Query{Text: "weather"})
	if len(hits) != 1 || hits[0].Server != "b" {
		t.Errorf("search(weather) = %+v, want fetch of b", hits)
	}
	// An Entry's Name, not the tool's, is its key.
	ix.Add(Entry{Server: "a", Name: "a_fetch", Tool: tool("fetch", "Fetch a web page")})
	if got := search(ix, "fetch"); len(got) != 2 {
		t.Errorf("search(fetch) = %q, want both keys", got)
	}
}

func TestRemovedNeverFound(t *testing.T) {
	ix := New(nil)
	ix.SetServer("old", entriesOf(tool("alpha_report", "Build an alpha report"), tool("alpha_chart", "Draw an alpha chart")))
	ix.SetServer("old", nil)
	// The new docs take the removed ones' ids; their postings must not
	// count for the old docs' terms.
	ix.SetServer("new", entriesOf(tool("beta_report", "Build a beta report"), tool("beta_chart", "Draw a beta chart"), tool("gamma", "Gamma rays")))
	if got := search(ix, "alpha"); len(got) != 0 {
		t.Errorf("search(alpha) = %q after the alpha tools were removed", got)
	}
	got := search(ix, "report")
	if !slices.Equal(got, []string{"beta_report"}) {
		t.Errorf("search(report) = %q, want [beta_report]", got)
	}
	for _, h := range ix.Search(context.Background(), Query{Text: "alpha beta gamma report chart"}) {
		if strings.HasPrefix(h.Name, "alpha") || h.Server != "new" {
			t.Errorf("hit %s of %s: removed", h.Name, h.Server)
		}
	}
}

// A catalog that changes all day (an upstream that republishes its list)
// must keep answering right, and its postings must not grow without end.
func TestCompaction(t *testing.T) {
	ix := New(nil)
	ix.SetServer("steady", entriesOf(tool("steady_lookup", "Look up a record")))
	for round := range 200 {
		es := entriesOf(
			tool(fmt.Sprintf("tool_%d", round), fmt.Sprintf("Round%d record report", round)),
			tool("common", fmt.Sprintf("The common tool, round%d", round)),
			tool("extra", "A record of the extra kind"),
		)
		ix.SetServer("churn", es)
		if ix.dead*4 >= ix.total && ix.dead > 0 {
			t.Fatalf("round %d: %d dead postings of %d left after an update", round, ix.dead, ix.total)
		}
		n := 0
		for _, t := range ix.terms {
			n += len(t.postings)
		}
		if n != ix.total {
			t.Fatalf("round %d: %d postings, total says %d", round, n, ix.total)
		}
	}
	if got := search(ix, "round199"); !slices.Equal(got, []string{"common", "tool_199"}) && !slices.Equal(got, []string{"tool_199", "common"}) {
		t.Errorf("search(round199) = %q", got)
	}
	if got := search(ix, "round150"); len(got) != 0 {
		t.Errorf("search(round150) = %q: a replaced round", got)
	}
	got := search(ix, "record")
	slices.Sort(got)
	if want := []string{"extra", "steady_lookup", "tool_199"}; !slices.Equal(got, want) {
		t.Errorf("search(record) = %q, want %q", got, want)
	}
	if ix.Len() != 4 {
		t.Errorf("Len = %d, want 4", ix.Len())
	}
	if len(ix.terms) > 100 {
		t.Errorf("%d terms for 4 tools: the terms of removed tools are kept", len(ix.terms))
	}
	if len(ix.docs) > 16 {
		t.Errorf("%d doc slots for 4 tools: removed ids are not reused", len(ix.docs))
	}
}

func TestAllow(t *testing.T) {
	ix := New(nil)
	ix.SetServer("db", entriesOf(tool("query_sql", "Run a SQL query"), tool("drop_table", "Drop a SQL table")))
	hits := ix.Search(context.Background(), Query{Text: "sql", Allow: func(name string) bool { return name != "drop_table" }})
	if got := names(hits); !slices.Equal(got, []string{"query_sql"}) {
		t.Errorf("search with Allow = %q", got)
	}
	hits = ix.Search(context.Background(), Query{Text: "sql", Allow: func(string) bool { return false }})
	if len(hits) != 0 {
		t.Errorf("search allowing nothing = %q", names(hits))
	}
}

func TestK(t *testing.T) {
	ix := New(nil)
	var es []Entry
	for i := range 30 {
		es = append(es, Entry{Tool: tool(fmt.Sprintf("note_%02d", i), "Write a note")})
	}
	ix.SetServer("notes", es)
	for _, tc := range []struct{ k, want int }{{0, 10}, {-1, 10}, {1, 1}, {5, 5}, {30, 30}, {100, 30}} {
		if got := len(ix.Search(context.Background(), Query{Text: "note", K: tc.k})); got != tc.want {
			t.Errorf("K %d: %d hits, want %d", tc.k, got, tc.want)
		}
	}
	if hits := ix.Search(context.Background(), Query{}); len(hits) != 0 {
		t.Errorf("an empty query found %q", names(hits))
	}
}

func TestRankingPrefersName(t *testing.T) {
	ix := New(nil)
	ix.SetServer("s", entriesOf(
		tool("list_buckets", "List the storage buckets of an account"),
		tool("get_object", "Get an object from a bucket; see list_buckets for the buckets"),
		tool("create_bucket", "Create a bucket"),
	))
	hits := ix.Search(context.Background(), Query{Text: "list buckets"})
	if len(hits) == 0 || hits[0].Name != "list_buckets" {
		t.Fatalf("search(list buckets) = %q, want list_buckets first", names(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits out of order: %v", hits)
		}
	}
}

func TestTwoStage(t *testing.T) {
	ix := New(nil)
	ix.SetServer("github", entriesOf(
		tool("search_issues", "Search issues in GitHub repositories"),
		tool("create_issue", "Create an issue in a GitHub repository"),
		tool("list_issues", "List issues of a repository"),
	))
	ix.SetServer("jira", entriesOf(
		tool("search", "Search Jira with JQL"),
		tool("get_issue", "Get a Jira issue"),
	))
	ix.SetServer("web", entriesOf(tool("search", "Search the web")))
	q := Query{Text: "search github issues", K: 10}
	if hits := ix.Search(context.Background(), q); len(slices.Compact(servers(hits))) < 2 {
		t.Fatalf("one stage found %q of %q only; the test needs several servers", names(hits), servers(hits))
	}
	q.Servers = 1
	hits := ix.Search(context.Background(), q)
	if len(hits) == 0 {
		t.Fatal("two-stage search found nothing")
	}
	for _, h := range hits {
		if h.Server != "github" {
			t.Errorf("two-stage search with Servers 1 returned %s of %s", h.Name, h.Server)
		}
	}
	if hits[0].Name != "search_issues" {
		t.Errorf("best hit %s, want search_issues", hits[0].Name)
	}
	q.Servers = 2
	got := slices.Compact(slices.Sorted(slices.Values(servers(ix.Search(context.Background(), q)))))
	if len(got) != 2 || !slices.Contains(got, "github") {
		t.Errorf("Servers 2: servers %q", got)
	}
}

func servers(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Server
	}
	return out
}

func TestRelated(t *testing.T) {
	ix := New(nil)
	withMeta := tool("deploy_app", "Deploy an application")
	withMeta.Meta = mcp.Meta{MetaKey: map[string]any{"related": []any{"get_logs", "rollback"}, "category": "operations", "keywords": []any{"ship"}}}
	ix.SetServer("ops", []Entry{
		{Tool: tool("build_app", "Build an application"), Related: []string{"deploy_app"}},
		{Tool: withMeta},
		{Tool: tool("get_logs", "Get the logs of an application")},
		{Tool: tool("rollback", "Roll an application back")},
		{Tool: tool("scale_app", "Scale an application")},
	})
	if got := ix.Related("build_app"); !slices.Equal(got, []string{"deploy_app"}) {
		t.Errorf("Related(build_app) = %q: configured in the Entry", got)
	}
	if got := ix.Related("deploy_app"); !slices.Equal(got, []string{"get_logs", "rollback"}) {
		t.Errorf("Related(deploy_app) = %q: configured in _meta", got)
	}
	// _meta's keywords and category find the tool.
	if got := search(ix, "ship"); !slices.Equal(got, []string{"deploy_app"}) {
		t.Errorf("search(ship) = %q: a _meta keyword", got)
	}
	if got := search(ix, "operations"); !slices.Equal(got, []string{"deploy_app"}) {
		t.Errorf("search(operations) = %q: a _meta category", got)
	}

	// One call together may be chance; two make them related, both ways.
	ix.AddCoCall("scale_app", "get_logs")
	if got := ix.Related("scale_app"); len(got) != 0 {
		t.Errorf("Related(scale_app) after one co-call = %q", got)
	}
	ix.AddCoCall("get_logs", "scale_app")
	if got := ix.Related("scale_app"); !slices.Equal(got, []string{"get_logs"}) {
		t.Errorf("Related(scale_app) after two co-calls = %q", got)
	}
	if got := ix.Related("get_logs"); !slices.Equal(got, []string{"scale_app"}) {
		t.Errorf("Related(get_logs) = %q", got)
	}
	// Configured ones first, then the most called with it; no repeats.
	for range 3 {
		ix.AddCoCall("deploy_app", "scale_app")
		ix.AddCoCall("deploy_app", "get_logs")
	}
	ix.AddCoCall("deploy_app", "scale_app")
	if got, want := ix.Related("deploy_app"), []string{"get_logs", "rollback", "scale_app"}; !slices.Equal(got, want) {
		t.Errorf("Related(deploy_app) = %q, want %q", got, want)
	}
	// Hits carry them.
	hits := ix.Search(context.Background(), Query{Text: "scale"})
	if len(hits) != 1 || !slices.Equal(hits[0].Related, []string{"deploy_app", "get_logs"}) {
		t.Errorf("hit of scale = %+v", hits)
	}
	// Tools that are gone are not offered from calls.
	ix.SetServer("ops", entriesOf(tool("scale_app", "Scale an application")))
	if got := ix.Related("scale_app"); len(got) != 0 {
		t.Errorf("Related(scale_app) = %q after its partners were removed", got)
	}
	// Calls of one tool with itself, or with no tool, say nothing.
	ix.AddCoCall("scale_app", "scale_app")
	ix.AddCoCall("scale_app", "scale_app")
	ix.AddCoCall("", "scale_app")
	ix.AddCoCall("", "scale_app")
	if got := ix.Related("scale_app"); len(got) != 0 {
		t.Errorf("Related(scale_app) = %q", got)
	}
	if got := ix.Related("nonesuch"); got != nil {
		t.Errorf("Related(nonesuch) = %q", got)
	}
}

func TestToolLookup(t *testing.T) {
	ix := New(nil)
	def := tool("read_file", "Read a file", "path")
	ix.SetServer("fs", []Entry{{Name: "fs_read_file", Tool: def}})
	server, got, ok := ix.Tool("fs_read_file")
	if !ok || server != "fs" || got != def {
		t.Errorf("Tool(fs_read_file) = %q, %p, %v; want fs, %p, true", server, got, ok, def)
	}
	if _, _, ok := ix.Tool("read_file"); ok {
		t.Error("Tool(read_file) found: the key is the Entry's Name")
	}
	hits := ix.Search(context.Background(), Query{Text: "read file"})
	if len(hits) != 1 || hits[0].Tool != def || hits[0].Tokens != EstimateTokens(def) || hits[0].Tokens == 0 {
		t.Errorf("hit = %+v", hits)
	}
}

// Server prefixes of published names are the server field's, not the
// name's: "github_search" of github is found by its name as "search".
func TestServerPrefix(t *testing.T) {
	ix := New(nil)
	ix.SetServer("github", []Entry{{Name: "github_search_code", Tool: tool("search_code", "Search code")}})
	ix.SetServer("gitlab", []Entry{{Name: "gitlab_search_code", Tool: tool("search_code", "Search code")}})
	hits := ix.Search(context.Background(), Query{Text: "github search code"})
	if len(hits) == 0 || hits[0].Name != "github_search_code" {
		t.Errorf("search = %q, want github_search_code first", names(hits))
	}
}

// Only a whole word of the name is the server's: server "s" strips
// nothing from "start_job" ("tart job" would never be found by "start").
func TestStripServerTakesWholeWords(t *testing.T) {
	tests := []struct{ name, server, want string }{
		{"github_search_code", "github", "_search_code"},
		{"slackGetChannel", "slack", "GetChannel"},
		{"n8n-validate", "n8n", "-validate"},
		{"start_job", "s", "start_job"},
		{"gitignore_create", "git", "gitignore_create"},
		{"s3_list", "s", "s3_list"},
		{"github", "github", "github"},
	}
	for _, tt := range tests {
		if got := stripServer(tt.name, tt.server); got != tt.want {
			t.Errorf("stripServer(%q, %q) = %q, want %q", tt.name, tt.server, got, tt.want)
		}
	}
}

func TestEstimateTokens(t *testing.T) {
	def := &mcp.Tool{
		Name:        "search_repositories",
		Title:       "Search repositories",
		Description: "Search for GitHub repositories by name, topic or language. Returns up to 100 results per page, newest first.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":   map[string]any{"type": "string", "description": "Search query (see GitHub search syntax)"},
				"page":    map[string]any{"type": "number", "description": "Page number for pagination (default: 1)"},
				"perPage": map[string]any{"type": "number", "description": "Number of results per page (default: 30, max: 100)"},
			},
			"required": []any{"query"},
		},
	}
	data, err := jsonv2.Marshal(def)
	if err != nil {
		t.Fatal(err)
	}
	got, rough := EstimateTokens(def), float64(len(data))/4
	if float64(got) < 0.6*rough || float64(got) > 1.4*rough {
		t.Errorf("EstimateTokens = %d for %d bytes of JSON; want within 0.6–1.4 of %.0f", got, len(data), rough)
	}
	// More text costs more.
	prev := got
	for range 5 {
		def.Description += " Results include the owner, the stars and the last push."
		n := EstimateTokens(def)
		if n <= prev {
			t.Errorf("EstimateTokens = %d after the description grew, was %d", n, prev)
		}
		prev = n
	}
	for _, tc := range []struct {
		text     string
		min, max int
	}{
		{"", 0, 0},
		{"hello", 1, 1},
		{"hello world", 2, 2},
		{"internationalization", 3, 6},
		{"1234567890", 3, 4},
		{"{\"a\":1}", 5, 7},
		{"日本語", 3, 3},
	} {
		if n := EstimateTextTokens(tc.text); n < tc.min || n > tc.max {
			t.Errorf("EstimateTextTokens(%q) = %d, want %d–%d", tc.text, n, tc.min, tc.max)
		}
	}
}

func TestLoadCatalog(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cat := write("a.json", `{"server": "github", "version": "1", "tools": [
		{"name": "search_code", "description": "Search code", "inputSchema": {"type": "object"}},
		{"name": "get_issue", "inputSchema": {"type": "object"}}]}`)
	list := write("b-server.json", `{"tools": [{"name": "read_file", "inputSchema": {"type": "object"}}], "nextCursor": ""}`)

	es, err := LoadCatalog(cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Server != "github" || es[0].Name != "github/search_code" || es[0].Tool.Description != "Search code" {
		t.Errorf("catalog file: %+v", es)
	}
	es, err = LoadCatalog(list)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Server != "b-server" || es[0].Name != "b-server/read_file" {
		t.Errorf("tools/list file: %+v", es)
	}
	write("notes.txt", "not a catalog, not read")
	es, err = LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(es); got != 3 || es[0].Server != "github" || es[2].Server != "b-server" {
		t.Errorf("directory: %d entries %+v", got, es)
	}
	ix := New(nil)
	ix.Add(es...)
	if got := search(ix, "file"); !slices.Equal(got, []string{"b-server/read_file"}) {
		t.Errorf("search(file) = %q", got)
	}

	bad := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"broken.json", `{"tools": [`, "not a catalog"},
		{"array.json", `[{"name": "x"}]`, "not a catalog"},
		{"empty.json", `{"server": "x"}`, `no "tools" array`},
		{"noname.json", `{"tools": [{"description": "nameless"}]}`, "tools[0] has no name"},
		{"null.json", `{"tools": [null]}`, "tools[0] has no name"},
	} {
		p := filepath.Join(bad, tc.name)
		if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadCatalog(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", tc.name, err, tc.want)
		}
	}
	// A directory with a bad file fails as that file does.
	if _, err := LoadCatalog(bad); err == nil || !strings.Contains(err.Error(), "array.json") {
		t.Errorf("directory with bad files: %v", err)
	}
	if _, err := LoadCatalog(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := LoadCatalog(filepath.Join(dir, "missing.json")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
}

// Searches run in parallel with updates of the servers they search; run
// with -race.
func TestConcurrentSearchAndUpdate(t *testing.T) {
	ix := New(nil)
	ix.SetServer("fixed", entriesOf(tool("fixed_search", "Search the fixed records")))
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			server := fmt.Sprintf("s%d", w)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				es := entriesOf(
					tool(fmt.Sprintf("%s_search_%d", server, i%3), "Search records, version "+fmt.Sprint(i)),
					tool(fmt.Sprintf("%s_get", server), "Get a record"),
				)
				if i%5 == 4 {
					es = nil
				}
				ix.SetServer(server, es)
				ix.AddCoCall(server+"_get", "fixed_search")
			}
		})
	}
	var searchers sync.WaitGroup
	for range 4 {
		searchers.Go(func() {
			for i := range 300 {
				// Two-stage ranking may leave the fixed server out.
				hits := ix.Search(ctx, Query{Text: "search records", K: 5, Servers: i % 2 * 2})
				if i%2 == 0 && !slices.Contains(names(hits), "fixed_search") && len(hits) < 5 {
					t.Errorf("search lost fixed_search: %q", names(hits))
					return
				}
				for _, h := range hits {
					if h.Tool == nil || h.Server == "" {
						t.Errorf("bad hit %+v", h)
					}
				}
				ix.Related("fixed_search")
				ix.Tool("fixed_search")
				ix.Len()
			}
		})
	}
	searchers.Wait()
	close(stop)
	wg.Wait()
}

// An update analyses its tools outside the index's lock and takes it only
// to add them: searches do not wait while it waits for another's analysis.
func TestSearchWhileUpdateWaits(t *testing.T) {
	ix := New(nil)
	ix.SetServer("a", entriesOf(tool("a_search", "Search the records")))
	ix.an.mu.RLock() // another update's analysis, under way
	done := make(chan struct{})
	go func() {
		ix.SetServer("b", entriesOf(tool("b_search", "Search archived records")))
		close(done)
	}()
	answered := make(chan []Hit)
	go func() { answered <- ix.Search(context.Background(), Query{Text: "search records"}) }()
	select {
	case hits := <-answered:
		if len(hits) == 0 {
			t.Error("no hits")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a search waited for an update's analysis")
	}
	ix.an.mu.RUnlock()
	<-done
	if got := search(ix, "archived"); !slices.Equal(got, []string{"b_search"}) {
		t.Errorf("search(archived) = %q after the update", got)
	}
}

// A doc analysed while a term was in the vocabulary, added after
// compaction took the term out, must not be added to the dropped term.
func TestTermDroppedDuringAnalysis(t *testing.T) {
	ix := New(nil)
	ix.SetServer("a", entriesOf(tool("a_zebra", "Zebra crossing")))
	server := "b"
	docs, learnt := ix.analyzeEntries(entriesOf(tool("b_zebra", "Zebra stripes")), &server)
	ix.SetServer("a", nil) // every posting dead: compaction drops zebra
	if _, ok := ix.terms["zebra"]; ok {
		t.Fatal("the test means compaction to drop zebra")
	}
	ix.an.mu.Lock()
	ix.mu.Lock()
	for _, l := range learnt {
		ix.an.merge(l)
	}
	ix.addDocsLocked(docs)
	ix.mu.Unlock()
	ix.an.mu.Unlock()
	if got := search(ix, "zebra"); !slices.Equal(got, []string{"b_zebra"}) {
		t.Errorf("search(zebra) = %q, want [b_zebra]", got)
	}
}

// A search reads a query's first MaxQueryLen characters, so that
// megabytes of query cost what 4,096 characters do; words past the
// limit are not read.
func TestSearchReadsAQueryUpToMaxQueryLen(t *testing.T) {
	ix := New(nil)
	ix.Add(Entry{Server: "fs", Name: "read_file", Tool: &mcp.Tool{Name: "read_file", Description: "Read a file."}})
	filler := strings.Repeat("qq ", MaxQueryLen/3)
	if got := names(ix.Search(context.Background(), Query{Text: "read a file " + filler})); len(got) != 1 {
		t.Errorf("words within the limit: hits %q, want read_file", got)
	}
	if got := names(ix.Search(context.Background(), Query{Text: filler + "read a file"})); len(got) != 0 {
		t.Errorf("words past the limit: hits %q, want none", got)
	}
}

func TestClipQueryCutsAtAWordWithinMaxQueryLenCharacters(t *testing.T) {
	long := strings.Repeat("é", MaxQueryLen+10) // 2 bytes a character
	for _, tt := range []struct {
		name, text string
		want       int // characters kept
	}{
		{"short", "read a file", 11},
		{"exactly the limit", strings.Repeat("a", MaxQueryLen), MaxQueryLen},
		{"one word too long", long, MaxQueryLen},
		// The last whole word within the limit ends at character 4094.
		{"cut at a space", strings.Repeat("abcd ", MaxQueryLen), MaxQueryLen/5*5 - 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := clipQuery(tt.text)
			if n := utf8.RuneCountInString(got); n != tt.want || !utf8.ValidString(got) || !strings.HasPrefix(tt.text, got) {
				t.Errorf("clipQuery kept %d characters (valid %v), want a prefix of %d", n, utf8.ValidString(got), tt.want)
			}
		})
	}
}
