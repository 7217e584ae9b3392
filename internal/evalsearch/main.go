// Command evalsearch measures tool search on the public Azure MCP
// tool-selection set (../shared/eval/azure-mcp): it converts the set's
// tools into a catalog and its prompts into queries, runs
// "mcpgate tools search" in batch mode over them, and prints Recall@1,
// Recall@5 and MRR. "make eval-search" runs it.
//
// The set is for measuring, never for tuning on its wording. To see
// whether a change to the ranker generalises, -split reports the prompts
// at even and odd positions separately: a change judged on one half
// should hold on the other.
package main

import (
	"bufio"
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpgate/mcpgate/toolsearch"
	"github.com/mcpgate/mcpgate/toolsearch/wordvec"
)

func main() {
	dir := flag.String("data", "../shared/eval/azure-mcp", "the Azure MCP evaluation folder (tools.json, prompts.json)")
	bin := flag.String("mcpgate", "", "the mcpgate binary (default: build it)")
	split := flag.Bool("split", false, "also report even and odd prompts separately")
	misses := flag.Int("misses", 0, "print this many prompts whose tool is not first")
	servers := flag.Int("servers", 0, "pass --servers N (two-stage ranking)")
	weights := flag.String("weights", "", "with -inproc: field weights server,name,title,summary,description,params,paramdocs,meta")
	k1 := flag.Float64("k1", 0, "with -inproc: BM25 k1")
	inproc := flag.Bool("inproc", false, "search in this process instead of running mcpgate (for quick experiments)")
	devset := flag.String("devset", "", "also report the project's development set in this folder (tasks.jsonl, queries.jsonl, gold.jsonl), by half and kind")
	tools := flag.String("tools", "../shared/eval/tools", "with -devset: the folder of the 74 servers' tool definitions")
	noBridges := flag.Uint("no-bridges", 0, "with -inproc and -devset: toolsearch.Options.NoBridges, the lexical bridges left out (a bit mask: 1 WordNet, 2 the domain map, 4 the everyday list)")
	feedback := flag.Bool("feedback", false, "with -inproc and -devset: toolsearch.Options.Feedback (pseudo-relevance feedback)")
	wordVectors := flag.Bool("wordvec", false, "with -inproc and -devset: fuse BM25 with the offline word vectors of toolsearch/wordvec (Options.Embedder)")
	embedURL := flag.String("embeddings", "", "with -inproc: fuse BM25 with the vectors of this OpenAI-compatible embeddings endpoint (Options.Embedder), such as contrib/use-embeddings at http://127.0.0.1:11435/v1/embeddings")
	embedModel := flag.String("embeddings-model", "use-lite", "with -embeddings: the model to ask for")
	devMissN := flag.Int("dev-misses", 0, "with -devset: print this many dev-half queries whose gold tool is not first")
	flag.Parse()
	log.SetFlags(0)

	tmp, err := os.MkdirTemp("", "evalsearch")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	catalog := filepath.Join(tmp, "azure.json")
	n, err := convertTools(filepath.Join(*dir, "tools.json"), catalog)
	if err != nil {
		log.Fatalf("%v (is the evaluation data at %s? set -data)", err, *dir)
	}
	qs, err := loadPrompts(filepath.Join(*dir, "prompts.json"))
	if err != nil {
		log.Fatal(err)
	}
	queries := filepath.Join(tmp, "queries.jsonl")
	var qb strings.Builder
	for i, q := range qs {
		data, _ := jsonv2.Marshal(map[string]any{"id": i, "query": q.prompt})
		qb.Write(data)
		qb.WriteByte('\n')
	}
	if err := os.WriteFile(queries, []byte(qb.String()), 0o600); err != nil {
		log.Fatal(err)
	}
	out := filepath.Join(tmp, "out.jsonl")
	if *inproc {
		opts := &toolsearch.Options{K1: *k1, NoBridges: toolsearch.Bridge(*noBridges), Feedback: *feedback}
		if *weights != "" {
			w := &opts.Weights
			if _, err := fmt.Sscanf(*weights, "%g,%g,%g,%g,%g,%g,%g,%g", &w.Server, &w.Name, &w.Title, &w.Summary, &w.Description, &w.Params, &w.ParamDocs, &w.Meta); err != nil {
				log.Fatalf("-weights: %v", err)
			}
		}
		if *wordVectors {
			opts.Embedder = wordvec.Embedder{}
		}
		if *embedURL != "" {
			opts.Embedder = &toolsearch.EmbedOptions{Embedder: &toolsearch.OpenAIEmbedder{Endpoint: *embedURL, Model: *embedModel}, QueryTimeout: time.Minute}
		}
		err = searchHere(catalog, qs, out, *servers, opts)
	} else {
		err = searchWithCLI(*bin, tmp, catalog, queries, out, *servers)
	}
	if err != nil {
		log.Fatal(err)
	}
	ranks, err := readRanks(out, qs)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Azure MCP tool selection: %d tools, %d prompts, BM25 (mcpgate tools search)\n", n, len(qs))
	report("all", ranks, func(int) bool { return true })
	if *split {
		report("even", ranks, func(i int) bool { return i%2 == 0 })
		report("odd", ranks, func(i int) bool { return i%2 == 1 })
	}
	shown := 0
	for i, r := range ranks {
		if r != 1 && shown < *misses {
			shown++
			fmt.Printf("  rank %2d  %-40s %s\n", r, qs[i].tool, qs[i].prompt)
		}
	}
	if *devset != "" {
		dq, err := loadDevset(*devset)
		if err != nil {
			log.Fatal(err)
		}
		dopts := &toolsearch.Options{K1: *k1, NoBridges: toolsearch.Bridge(*noBridges), Feedback: *feedback}
		if *weights != "" {
			w := &dopts.Weights
			if _, err := fmt.Sscanf(*weights, "%g,%g,%g,%g,%g,%g,%g,%g", &w.Server, &w.Name, &w.Title, &w.Summary, &w.Description, &w.Params, &w.ParamDocs, &w.Meta); err != nil {
				log.Fatalf("-weights: %v", err)
			}
		}
		if *wordVectors {
			dopts.Embedder = wordvec.Embedder{}
		}
		if *embedURL != "" {
			dopts.Embedder = &toolsearch.EmbedOptions{Embedder: &toolsearch.OpenAIEmbedder{Endpoint: *embedURL, Model: *embedModel}, QueryTimeout: time.Minute}
		}
		dr, firsts, nt, err := runDevset(dq, *tools, dopts, *servers)
		if err != nil {
			log.Fatalf("%v (set -tools)", err)
		}
		fmt.Printf("\nDevelopment set: %d queries over %d tools (in process)\n", len(dq), nt)
		reportDevset(dq, dr)
		devMisses(dq, dr, firsts, *devMissN)
	}
}

func searchWithCLI(bin, tmp, catalog, queries, out string, servers int) error {
	if bin == "" {
		bin = filepath.Join(tmp, "mcpgate")
		build := exec.Command("go", "build", "-o", bin, "./cmd/mcpgate")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			return fmt.Errorf("building mcpgate: %v", err)
		}
	}
	args := []string{"tools", "search", "--catalog", catalog, "--queries", queries, "--out", out, "--k", "10"}
	if servers > 0 {
		args = append(args, "--servers", fmt.Sprint(servers))
	}
	run := exec.Command(bin, args...)
	run.Stderr = os.Stderr
	if err := run.Run(); err != nil {
		return fmt.Errorf("mcpgate tools search: %v", err)
	}
	return nil
}

func searchHere(catalog string, qs []query, out string, servers int, opts *toolsearch.Options) error {
	es, err := toolsearch.LoadCatalog(catalog)
	if err != nil {
		return err
	}
	ix := toolsearch.New(opts)
	ix.Add(es...)
	if err := ix.WaitEmbedded(context.Background()); err != nil {
		return err
	}
	var b strings.Builder
	for i, q := range qs {
		var res []map[string]any
		for _, h := range ix.Search(context.Background(), toolsearch.Query{Text: q.prompt, K: 10, Servers: servers}) {
			res = append(res, map[string]any{"server": h.Server, "tool": h.Tool.Name, "score": h.Score})
		}
		data, _ := jsonv2.Marshal(map[string]any{"id": i, "results": res})
		b.Write(data)
		b.WriteByte('\n')
	}
	return os.WriteFile(out, []byte(b.String()), 0o600)
}

type query struct{ tool, prompt string }

// convertTools writes the set's tools as a catalog: "acr registry list"
// is the tool acr_registry_list, and its options are the properties of
// its input schema.
func convertTools(in, out string) (int, error) {
	data, err := os.ReadFile(in)
	if err != nil {
		return 0, err
	}
	var src struct {
		Results []struct {
			Description string `json:"description"`
			Command     string `json:"command"`
			Option      []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Type        string `json:"type"`
				Required    *bool  `json:"required"`
			} `json:"option"`
		} `json:"results"`
	}
	if err := jsonv2.Unmarshal(data, &src, jsonv2.RejectUnknownMembers(false)); err != nil {
		return 0, fmt.Errorf("%s: %v", in, err)
	}
	tools := make([]map[string]any, 0, len(src.Results))
	for _, r := range src.Results {
		props := map[string]any{}
		required := []string{}
		for _, o := range r.Option {
			name := strings.TrimLeft(o.Name, "-")
			props[name] = map[string]any{"type": cmp.Or(o.Type, "string"), "description": o.Description}
			if o.Required != nil && *o.Required {
				required = append(required, name)
			}
		}
		tools = append(tools, map[string]any{
			"name":        strings.ReplaceAll(r.Command, " ", "_"),
			"description": r.Description,
			"inputSchema": map[string]any{"type": "object", "properties": props, "required": required},
		})
	}
	data, err = jsonv2.Marshal(map[string]any{"server": "azure", "tools": tools}, jsonv2.Deterministic(true))
	if err != nil {
		return 0, err
	}
	return len(tools), os.WriteFile(out, data, 0o600)
}

// loadPrompts reads {tool: [prompt, ...]} in file order.
func loadPrompts(path string) ([]query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := jsontext.NewDecoder(strings.NewReader(string(data)))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, fmt.Errorf("%s: want an object of tool names to prompts", path)
	}
	var qs []query
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		tool := tok.String()
		var prompts []string
		if err := jsonv2.UnmarshalDecode(dec, &prompts); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		for _, p := range prompts {
			qs = append(qs, query{tool: tool, prompt: p})
		}
	}
	return qs, nil
}

// readRanks returns, per query, the rank of the right tool (1 is first),
// or 0 when it is not in the results.
func readRanks(path string, qs []query) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ranks := make([]int, len(qs))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	seen := 0
	for sc.Scan() {
		var rec struct {
			ID      int `json:"id"`
			Results []struct {
				Tool string `json:"tool"`
			} `json:"results"`
		}
		if err := jsonv2.Unmarshal(sc.Bytes(), &rec, jsonv2.RejectUnknownMembers(false)); err != nil {
			return nil, fmt.Errorf("%s: %v", path, err)
		}
		if rec.ID < 0 || rec.ID >= len(qs) {
			return nil, fmt.Errorf("%s: unknown id %d", path, rec.ID)
		}
		ranks[rec.ID] = 1 + slices.IndexFunc(rec.Results, func(r struct {
			Tool string `json:"tool"`
		}) bool {
			return r.Tool == qs[rec.ID].tool
		})
		seen++
	}
	if seen != len(qs) {
		return nil, fmt.Errorf("%s: %d results for %d queries", path, seen, len(qs))
	}
	return ranks, sc.Err()
}

func report(label string, ranks []int, keep func(int) bool) {
	var n, r1, r5 int
	var mrr float64
	for i, r := range ranks {
		if !keep(i) {
			continue
		}
		n++
		if r == 1 {
			r1++
		}
		if r >= 1 && r <= 5 {
			r5++
		}
		if r >= 1 {
			mrr += 1 / float64(r)
		}
	}
	fmt.Printf("%-18s n=%3d  Recall@1 %.3f (%d)  Recall@5 %.3f (%d)  MRR@10 %.3f\n", label, n, float64(r1)/float64(n), r1, float64(r5)/float64(n), r5, mrr/float64(n))
}
