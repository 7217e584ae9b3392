package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/toolsearch"
)

func newToolSearchCmd() *cobra.Command {
	var (
		catalogs []string
		k        int
		servers  int
		asJSON   bool
		queries  string
		out      string
	)
	cmd := &cobra.Command{
		Use:   "search --catalog PATH... [QUERY]",
		Short: "Search tool catalogs offline, as the gateway's tool search would",
		Long: `Rank the tools of catalog files for a query with the gateway's search
engine (field-weighted BM25 with stemming), offline.

A catalog file is {"server": NAME, "tools": [...]} or a plain tools/list
result {"tools": [...]}, whose server is named after the file; a directory
is read whole. Repeat --catalog for more.

With --queries FILE.jsonl (lines {"id": ..., "query": ...}) every query is
answered in one run; --out FILE.jsonl (default: standard output) receives
lines {"id": ..., "results": [{"server", "tool", "score"}, ...]}, best
first.`,
		Example: `  mcpgate tools search --catalog ./catalogs "open a pull request"
  mcpgate tools search --catalog github.json --k 3 --json "list my issues"
  mcpgate tools search --catalog ./catalogs --queries q.jsonl --out ranked.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(catalogs) == 0 {
				return errors.New("--catalog is required: a catalog file or directory of them")
			}
			if (queries == "") == (len(args) == 0) {
				return errors.New("give one QUERY, or --queries FILE.jsonl, not both")
			}
			if k <= 0 {
				return fmt.Errorf("--k %d: must be at least 1", k)
			}
			ix := toolsearch.New(nil)
			for _, c := range catalogs {
				es, err := toolsearch.LoadCatalog(c)
				if err != nil {
					return err
				}
				ix.Add(es...)
			}
			q := toolsearch.Query{K: k, Servers: servers}
			if queries != "" {
				return searchBatch(cmd.Context(), ix, q, queries, out, cmd.OutOrStdout())
			}
			q.Text = strings.Join(args, " ")
			return printHits(cmd.OutOrStdout(), ix.Search(ctxOr(cmd.Context()), q), asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&catalogs, "catalog", nil, "catalog file or directory (repeatable)")
	fl.IntVar(&k, "k", 10, "how many tools to return")
	fl.IntVar(&servers, "servers", 0, "rank servers first and keep the tools of the best N (two-stage); 0 ranks all tools together")
	fl.BoolVar(&asJSON, "json", false, "print the hits as JSON")
	fl.StringVar(&queries, "queries", "", "answer every query of this JSONL file ({\"id\", \"query\"} per line)")
	fl.StringVar(&out, "out", "", "with --queries: write the results here (JSONL) instead of standard output")
	return cmd
}

func ctxOr(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

type searchResult struct {
	Server string  `json:"server"`
	Tool   string  `json:"tool"`
	Score  float64 `json:"score"`
}

func results(hits []toolsearch.Hit) []searchResult {
	out := make([]searchResult, len(hits))
	for i, h := range hits {
		out[i] = searchResult{Server: h.Server, Tool: h.Tool.Name, Score: h.Score}
	}
	return out
}

func printHits(w io.Writer, hits []toolsearch.Hit, asJSON bool) error {
	if asJSON {
		data, err := jsonv2.Marshal(struct {
			Results []searchResult `json:"results"`
		}{results(hits)})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	if len(hits) == 0 {
		fmt.Fprintln(os.Stderr, "no tool matches")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCORE\tSERVER\tTOOL\tTOKENS\tDESCRIPTION")
	for _, h := range hits {
		fmt.Fprintf(tw, "%.2f\t%s\t%s\t%d\t%s\n", h.Score, h.Server, h.Tool.Name, h.Tokens, truncate(oneLine(h.Tool.Description), 60))
	}
	return tw.Flush()
}

// searchBatch answers every query of a JSONL file, one result line per
// query line, in order.
func searchBatch(ctx context.Context, ix *toolsearch.Index, q toolsearch.Query, in, outPath string, stdout io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	w := stdout
	if outPath != "" {
		of, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer of.Close()
		w = of
	}
	bw := bufio.NewWriter(w)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec struct {
			ID    any    `json:"id"`
			Query string `json:"query"`
		}
		if err := jsonv2.Unmarshal(sc.Bytes(), &rec, jsonv2.RejectUnknownMembers(false)); err != nil {
			return fmt.Errorf("%s:%d: want {\"id\": ..., \"query\": \"...\"}: %v", in, line, err)
		}
		q.Text = rec.Query
		data, err := jsonv2.Marshal(struct {
			ID      any            `json:"id"`
			Results []searchResult `json:"results"`
		}{rec.ID, results(ix.Search(ctxOr(ctx), q))})
		if err != nil {
			return err
		}
		bw.Write(data)
		bw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v", in, line+1, err)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if c, ok := w.(*os.File); ok && outPath != "" {
		return c.Sync()
	}
	return nil
}
