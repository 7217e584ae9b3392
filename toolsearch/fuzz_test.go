package toolsearch

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// FuzzSearch indexes a tool of arbitrary text beside ordinary ones and
// searches with an arbitrary query, lexically and with (fake) vectors:
// no panic, at most K hits, best first, each a live tool once.
func FuzzSearch(f *testing.F) {
	f.Add("list files", "read_file", "Read a file. Then more.", 3)
	f.Add("", "", "", 0)
	f.Add("MySQL ÉCOLE s3Bucket EC2Instance", "getHTTP2Server", "Ünïcödé\x00\xff text.\nAnother sentence", 1)
	f.Add("the a of", "list_files", "the of a", -5)
	f.Add("aks kv appconfig cosmosdb", "aks_kv_list", "Azure Kubernetes Service key-value", 25)
	f.Add("fetch http://127.0.0.1:43685/ then read /tmp/a.txt, mail bob@x.io about PROJ-12 on 2025-03-14 at 10:00 for $5",
		"get_page2", "Read a page (e.g. ABC-123, 2025-01-01, a@b.co, /srv/x.md).", 5)
	discard := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, query, name, desc string, k int) {
		k %= 30
		want := k
		if want <= 0 {
			want = 10
		}
		for _, embed := range []bool{false, true} {
			var opts Options
			if embed {
				opts.Embedder = &EmbedOptions{Embedder: fakeFuncEmbedder(), Logger: discard}
			}
			ix := New(&opts)
			ix.SetServer("base", entriesOf(
				tool("list_files", "List the files of a directory.", "path"),
				tool("search_code", "Search code in repositories.", "query"),
				tool("get_weather", "Get the weather forecast.", "city"),
			))
			fuzzed := &mcp.Tool{
				Name: name, Title: name, Description: desc,
				InputSchema: map[string]any{"type": "object", "properties": map[string]any{
					desc: map[string]any{"type": "string", "description": query},
				}},
			}
			ix.SetServer("fuzz", []Entry{{Tool: fuzzed, Keywords: []string{query}, Category: desc}})
			if embed {
				settle(t, ix)
			}
			for _, servers := range []int{0, 1} {
				check(t, ix, Query{Text: query, K: k, Servers: servers}, want)
			}
			check(t, ix, Query{Text: name + " " + desc, K: k}, want)
			ix.SetServer("fuzz", nil)
			for _, h := range check(t, ix, Query{Text: query + " " + name, K: k}, want) {
				if h.Server == "fuzz" {
					t.Errorf("hit %q of a removed server", h.Name)
				}
			}
		}
	})
}

func check(t *testing.T, ix *Index, q Query, k int) []Hit {
	t.Helper()
	hits := ix.Search(context.Background(), q)
	if len(hits) > k {
		t.Errorf("%d hits for K %d", len(hits), q.K)
	}
	seen := map[string]bool{}
	for i, h := range hits {
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score <= 0 {
			t.Errorf("hit %q: score %v", h.Name, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("hits out of order: %v then %v", hits[i-1].Score, h.Score)
		}
		if seen[h.Name] {
			t.Errorf("hit %q twice", h.Name)
		}
		seen[h.Name] = true
		if server, tool, ok := ix.Tool(h.Name); !ok || server != h.Server || tool != h.Tool {
			t.Errorf("hit %q of %q is not the indexed tool", h.Name, h.Server)
		}
	}
	return hits
}
