package wordvec_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
	"github.com/mcpgate/mcpgate/toolsearch/wordvec"
)

const waitFor = time.Minute // a bound on a hang

var _ toolsearch.Embedder = wordvec.Embedder{}

func tool(name, desc string) toolsearch.Entry {
	return toolsearch.Entry{Server: "demo", Tool: &mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}}}
}

var demoTools = []toolsearch.Entry{
	tool("get_forecast", "Current weather forecast for a city: temperature and wind."),
	tool("send_email", "Send a mail message to a recipient."),
	tool("resize_image", "Scale a photo down to the given width and height."),
	tool("create_payment", "Charge a customer's card."),
	tool("qqzx_sync", "Synchronise the qqzx cache."),
}

func names(hits []toolsearch.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Name)
	}
	return out
}

func newIndex(t testing.TB, opts *toolsearch.Options, entries []toolsearch.Entry) *toolsearch.Index {
	t.Helper()
	ix := toolsearch.New(opts)
	ix.Add(entries...)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := ix.WaitEmbedded(ctx); err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestAnIndexFindsToolsByMeaningWithTheEmbedder(t *testing.T) {
	// Without the lexical bridges, so that the control is words alone:
	// the everyday list knows rain for weather.
	const noBridges = toolsearch.BridgeWordNet | toolsearch.BridgeDomain | toolsearch.BridgeEveryday
	lexical := newIndex(t, &toolsearch.Options{NoBridges: noBridges}, demoTools)
	hybrid := newIndex(t, &toolsearch.Options{Embedder: wordvec.Embedder{}, NoBridges: noBridges}, demoTools)
	for _, tc := range []struct {
		query string
		want  string // first with the embedder
		// lexical is what BM25 alone returns: the control, showing that
		// the embedder is what finds want.
		lexical []string
	}{
		{"will it rain in paris tomorrow", "get_forecast", nil},
		// A query the model knows no word of is left to BM25.
		{"qqzx", "qqzx_sync", []string{"qqzx_sync"}},
	} {
		ctx := context.Background()
		if got := names(lexical.Search(ctx, toolsearch.Query{Text: tc.query})); !slices.Equal(got, tc.lexical) {
			t.Errorf("BM25 alone: search(%q) = %q, want %q", tc.query, got, tc.lexical)
		}
		got := names(hybrid.Search(ctx, toolsearch.Query{Text: tc.query}))
		if len(got) == 0 || got[0] != tc.want {
			t.Errorf("with the embedder: search(%q) = %q, want %s first", tc.query, got, tc.want)
		}
	}
}

func FuzzEmbed(f *testing.F) {
	for _, s := range []string{"", "make the picture smaller", "getFileContents", "HTTPServer", "日本語", "a\x00b\xffc", "The_Quick-brown.fox"} {
		f.Add(s)
	}
	m, err := wordvec.Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v := m.Embed(text)
		if len(v) != m.Dims() {
			t.Fatalf("%d dimensions, want %d", len(v), m.Dims())
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if ss != 0 && math.Abs(ss-1) > 1e-4 || math.IsNaN(ss) {
			t.Fatalf("squared norm %v, want 0 or 1", ss)
		}
		if !slices.Equal(v, m.Embed(text)) {
			t.Fatal("a second embedding differs")
		}
	})
}

// evalTools is the corpus of real tool definitions beside the repository
// (74 published servers, 2,331 tools).
const evalTools = "../../../shared/eval/tools"

var corpus = sync.OnceValues(func() ([]toolsearch.Entry, error) {
	if _, err := os.Stat(evalTools); err != nil {
		return nil, err
	}
	return toolsearch.LoadCatalog(evalTools)
})

// catalog is the corpus, its servers copied under other names until
// there are n tools (all of it for n 0).
func catalog(b *testing.B, n int) []toolsearch.Entry {
	all, err := corpus()
	if err != nil {
		b.Skipf("no evaluation corpus at %s (it lies in shared/ beside the repository): %v", evalTools, err)
	}
	if n == 0 {
		return all
	}
	out := make([]toolsearch.Entry, 0, n)
	for copyNo := 1; len(out) < n; copyNo++ {
		for _, e := range all[:min(len(all), n-len(out))] {
			server := fmt.Sprintf("%s-%d", e.Server, copyNo)
			out = append(out, toolsearch.Entry{Server: server, Name: server + "/" + e.Tool.Name, Tool: e.Tool})
		}
	}
	return out
}

var benchQueries = []string{
	"create a github issue for this bug",
	"make the picture smaller",
	"list the pods in my kubernetes cluster",
	"send a message to the team slack channel",
	"how much room is this folder taking",
	"read the contents of a file",
	"jot this down so I don't lose it",
	"find emails from Alice last week",
	"schedule a meeting on my google calendar",
	"will it rain in Lisbon tomorrow",
}

// BenchmarkEmbedQuery is the embedding of a query.
func BenchmarkEmbedQuery(b *testing.B) {
	m, _ := wordvec.Default()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m.Embed(benchQueries[i%len(benchQueries)])
		i++
	}
}

// BenchmarkEmbedCorpus embeds the corpus's tools (name, server and
// description, as the index gives them): the embedder's share of a build.
func BenchmarkEmbedCorpus(b *testing.B) {
	cat := catalog(b, 0)
	texts := make([]string, len(cat))
	for i, e := range cat {
		texts[i] = "tool: " + e.Tool.Name + "\nserver: " + e.Server + "\ndescription: " + e.Tool.Description
	}
	wordvec.Default()
	for b.Loop() {
		if _, err := (wordvec.Embedder{}).Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(texts)), "µs/tool")
}

// BenchmarkBuild indexes a catalog with the embedder, waiting for every
// tool's vector, and without: the corpus (2,331 tools) and 10,000.
func BenchmarkBuild(b *testing.B) {
	wordvec.Default()
	for _, n := range []int{0, 10000} {
		cat := catalog(b, n)
		for _, bc := range []struct {
			name string
			opts *toolsearch.Options
		}{
			{"bm25", nil},
			{"wordvec", &toolsearch.Options{Embedder: wordvec.Embedder{}}},
		} {
			b.Run(fmt.Sprintf("%s/tools=%d", bc.name, len(cat)), func(b *testing.B) {
				for b.Loop() {
					newIndex(b, bc.opts, cat)
				}
			})
		}
	}
}

// BenchmarkSearch is a search of 10,000 tools with the embedder, and
// without; p50-µs and p99-µs are the latency's percentiles.
func BenchmarkSearch(b *testing.B) {
	cat := catalog(b, 10000)
	for _, bc := range []struct {
		name string
		opts *toolsearch.Options
	}{
		{"bm25", nil},
		{"wordvec", &toolsearch.Options{Embedder: wordvec.Embedder{}}},
	} {
		b.Run(fmt.Sprintf("%s/tools=%d", bc.name, len(cat)), func(b *testing.B) {
			ix := newIndex(b, bc.opts, cat)
			runtime.GC()
			ctx := context.Background()
			var took []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				ix.Search(ctx, toolsearch.Query{Text: benchQueries[i%len(benchQueries)], K: 10})
				took = append(took, time.Since(start))
				i++
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
		})
	}
}
