package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/toolsearch"
)

// The project's own development set (devset/): queries over the 74
// published servers of ../shared/eval/tools, written blind in three
// passes (tasks from server names alone, then the words a person would
// type, then the gold tools labelled from the definitions). Half of each
// kind is for tuning (dev), the other half for reporting (test).

// A devQuery is one query of the set with its gold tools ("server/tool").
type devQuery struct {
	id, kind, text string
	gold           []string
	test           bool // in the test half
}

// kinds are the kinds of query, in report order.
var kinds = []string{"direct", "parameter-heavy", "cross-server", "ambiguous", "paraphrase"}

// loadDevset joins tasks.jsonl, queries.jsonl and gold.jsonl by id,
// leaving out queries with no gold tool; within each kind, queries
// alternate between the dev and the test half in id order.
func loadDevset(dir string) ([]devQuery, error) {
	var tasks []struct{ ID, Kind string }
	var texts []struct{ ID, Query string }
	var golds []struct {
		ID   string
		Gold []string
	}
	if err := readJSONL(filepath.Join(dir, "tasks.jsonl"), &tasks); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "queries.jsonl"), &texts); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "gold.jsonl"), &golds); err != nil {
		return nil, err
	}
	byID := func(id string) int {
		return slices.IndexFunc(texts, func(t struct{ ID, Query string }) bool { return t.ID == id })
	}
	gold := map[string][]string{}
	for _, g := range golds {
		gold[g.ID] = g.Gold
	}
	seen := map[string]int{}
	var out []devQuery
	for _, t := range tasks {
		i := byID(t.ID)
		if i < 0 {
			return nil, fmt.Errorf("%s: task %s has no query", dir, t.ID)
		}
		g, ok := gold[t.ID]
		if !ok {
			return nil, fmt.Errorf("%s: query %s has no gold line", dir, t.ID)
		}
		if len(g) == 0 {
			continue // no tool of the corpus serves it
		}
		n := seen[t.Kind]
		seen[t.Kind]++
		out = append(out, devQuery{id: t.ID, kind: t.Kind, text: texts[i].Query, gold: g, test: n%2 == 1})
	}
	return out, nil
}

// readJSONL decodes each line of path into a new element of *into.
func readJSONL[T any](path string, into *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var v T
		if err := jsonv2.Unmarshal(sc.Bytes(), &v, jsonv2.RejectUnknownMembers(false), jsonv2.MatchCaseInsensitiveNames(true)); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
		*into = append(*into, v)
	}
	return sc.Err()
}

// runDevset searches the catalog of toolsDir for each query in process
// and returns each query's rank of its first gold tool (0: not in the
// top 10) and its first hit.
func runDevset(qs []devQuery, toolsDir string, opts *toolsearch.Options, servers int) ([]int, []string, int, error) {
	es, err := toolsearch.LoadCatalog(toolsDir)
	if err != nil {
		return nil, nil, 0, err
	}
	ix := toolsearch.New(opts)
	ix.Add(es...)
	if err := ix.WaitEmbedded(context.Background()); err != nil {
		return nil, nil, 0, err
	}
	ranks := make([]int, len(qs))
	firsts := make([]string, len(qs))
	for i, q := range qs {
		for r, h := range ix.Search(context.Background(), toolsearch.Query{Text: q.text, K: 10, Servers: servers}) {
			if r == 0 {
				firsts[i] = h.Server + "/" + h.Tool.Name
			}
			if slices.Contains(q.gold, h.Server+"/"+h.Tool.Name) {
				ranks[i] = r + 1
				break
			}
		}
	}
	return ranks, firsts, len(es), nil
}

// reportDevset prints both halves, all kinds and each.
func reportDevset(qs []devQuery, ranks []int) {
	for _, half := range []struct {
		name string
		test bool
	}{{"dev", false}, {"test", true}} {
		fmt.Printf("%s half:\n", half.name)
		report("  all", ranks, func(i int) bool { return qs[i].test == half.test })
		for _, k := range kinds {
			report("  "+k, ranks, func(i int) bool { return qs[i].test == half.test && qs[i].kind == k })
		}
	}
}

// devMisses prints up to n queries of the dev half whose gold tool is
// not first, with the tool that came first (never the test half: it is
// for reporting only).
func devMisses(qs []devQuery, ranks []int, firsts []string, n int) {
	for i, q := range qs {
		if n == 0 {
			return
		}
		if !q.test && ranks[i] != 1 {
			n--
			fmt.Printf("  rank %2d  %-16s %-60s %s  (first: %s)\n", ranks[i], q.kind, q.text, strings.Join(q.gold, " "), firsts[i])
		}
	}
}
