package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// tools search answers one question, which tools fit a task, from
// whichever source the user has: a running server or gateway (TARGET, as
// for the other client commands) or catalog files (--catalog, offline).
// One command rather than two because the question, the ranking and the
// output are the same; the source is only where the tools come from.

func newToolSearchCmd() *cobra.Command {
	f := &clientFlags{}
	var (
		catalogs []string
		k        int
		servers  int
		queries  string
		out      string
	)
	cmd := &cobra.Command{
		Use:   "search {URL QUERY | QUERY -- COMMAND [ARG...] | --catalog PATH... QUERY}",
		Short: "Find the tools for a task on a running server or gateway, or in catalog files",
		Long: `Rank tools for QUERY, what you want to do in a few words, best first.

The tools are those of a running server or gateway (TARGET):
  - a server that offers tool search (the io.mcpgate/toolSearch extension,
    as mcpgate's gateway does) ranks them itself with tools/discover: every
    tool you may call, those its listing hides included;
  - any other server's tools/list is ranked here, with the gateway's search
    engine (field-weighted BM25 with stemming).
TARGET is an http(s) URL given first, or a server command after "--" (put
QUERY and this command's flags before "--").

With --catalog, no server is contacted: the tools are those of catalog
files. A catalog file is {"server": NAME, "tools": [...]} or a plain
tools/list result {"tools": [...]}, whose server is named after the file;
a directory is read whole. Repeat --catalog for more. With --queries
FILE.jsonl (lines {"id": ..., "query": ...}) every query is answered in one
run; --out FILE.jsonl (default: standard output) receives lines
{"id": ..., "results": [{"server", "tool", "score"}, ...]}, best first.

With --json, print {"results": [{"server", "tool", "score", "tokens",
"description"}, ...]}.`,
		Example: `  mcpgate tools search http://127.0.0.1:8765/mcp "read a file"
  mcpgate tools search "add a task to my list" -- mcpgate serve --stdio
  mcpgate tools search --k 3 --json http://127.0.0.1:8765/mcp "list my issues"
  mcpgate tools search --catalog ./catalogs "open a pull request"
  mcpgate tools search --catalog ./catalogs --queries q.jsonl --out ranked.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if k <= 0 {
				return fmt.Errorf("--k %d: must be at least 1", k)
			}
			if len(catalogs) > 0 {
				return searchCatalogs(cmd, f, args, catalogs, toolsearch.Query{K: k, Servers: servers}, queries, out)
			}
			switch {
			case queries != "" || out != "":
				return errors.New("--queries and --out answer queries from catalog files: add --catalog PATH")
			case servers > 0:
				return errors.New("--servers ranks the servers of catalog files (--catalog); a running gateway ranks its servers' tools itself")
			}
			if cmd.ArgsLenAtDash() < 0 && len(args) == 1 && !isURL(args[0]) {
				// A QUERY alone: parseTarget would take it for a command.
				return fmt.Errorf("no TARGET to search for %[2]q: give a server URL first (%[1]s URL %[2]q), a server command after \"--\" (%[1]s %[2]q -- COMMAND), or catalog files (%[1]s --catalog PATH %[2]q)", cmd.CommandPath(), args[0])
			}
			t, ops, err := parseTarget(cmd, args, "QUERY")
			if err != nil {
				return err
			}
			if strings.TrimSpace(ops[0]) == "" {
				return errors.New("QUERY is empty: say what you want to do, such as \"read a file\"")
			}
			if f.apiKey == "" && t.url != "" && !f.oauth {
				f.apiKey = os.Getenv("MCPGATE_API_KEY")
			}
			if err := f.check(t); err != nil {
				return err
			}
			return f.withSession(cmd, t, func(ctx context.Context, c *clientConn) error {
				hits, err := c.searchTools(ctx, toolsearch.Query{Text: ops[0], K: k})
				if err != nil {
					return err
				}
				return printHits(cmd.OutOrStdout(), hits, f.json)
			})
		},
	}
	f.register(cmd.Flags())
	fl := cmd.Flags()
	fl.StringArrayVar(&catalogs, "catalog", nil, "search this catalog file or directory instead of a server (repeatable)")
	fl.IntVar(&k, "k", 10, "how many tools to return")
	fl.IntVar(&servers, "servers", 0, "with --catalog: rank servers first and keep the tools of the best N (two-stage); 0 ranks all tools together")
	fl.StringVar(&queries, "queries", "", "with --catalog: answer every query of this JSONL file ({\"id\", \"query\"} per line)")
	fl.StringVar(&out, "out", "", "with --queries: write the results here (JSONL) instead of standard output")
	return cmd
}

// searchCatalogs is tools search --catalog: offline, so the flags that
// reach a server do not apply.
func searchCatalogs(cmd *cobra.Command, f *clientFlags, args, catalogs []string, q toolsearch.Query, queries, out string) error {
	switch {
	case cmd.ArgsLenAtDash() >= 0 || len(args) > 0 && isURL(args[0]):
		return errors.New("give either a TARGET (a URL, or a command after \"--\") or --catalog, not both")
	case len(f.headers) > 0 || f.apiKey != "" || f.oauth || len(f.env) > 0:
		return errors.New("--catalog searches files: --header, --api-key, --oauth and --env apply to a TARGET")
	case (queries == "") == (len(args) == 0):
		return errors.New("give one QUERY, or --queries FILE.jsonl, not both")
	}
	ix := toolsearch.New(nil)
	for _, c := range catalogs {
		es, err := toolsearch.LoadCatalog(c)
		if err != nil {
			return err
		}
		ix.Add(es...)
	}
	if queries != "" {
		return searchBatch(cmd.Context(), ix, q, queries, out, cmd.OutOrStdout())
	}
	q.Text = strings.Join(args, " ")
	return printHits(cmd.OutOrStdout(), ix.Search(ctxOr(cmd.Context()), q), f.json)
}

// searchTools ranks the tools of a running server for q: with the
// server's own tools/discover where it offers tool search, since only it
// knows the tools its listing hides; else by indexing its tools/list here.
func (c *clientConn) searchTools(ctx context.Context, q toolsearch.Query) ([]toolsearch.Hit, error) {
	if c.offersToolSearch() {
		var res gateway.DiscoverResult
		cctx, cancel := c.callCtx(ctx)
		err := c.cs.Call(cctx, gateway.MethodDiscover, gateway.DiscoverParams{Query: q.Text, Context: gateway.DiscoverContext{MaxTools: q.K}}, &res)
		cancel()
		var ce *mcp.CallError
		switch {
		case err == nil:
			hits := make([]toolsearch.Hit, 0, len(res.Tools))
			for _, t := range res.Tools {
				if t.Tool != nil {
					hits = append(hits, toolsearch.Hit{Server: t.Server, Name: t.Name, Score: t.Score, Tokens: t.Tokens, Related: t.Related, Tool: t.Tool})
				}
			}
			return hits, nil
		case !errors.As(err, &ce) || ce.Err.Code != jsonrpc.CodeMethodNotFound:
			return nil, err
		}
		// Announced but not answered: rank its listing instead.
	}
	tools, err := listAll(c.cs.Tools(ctx))
	if err != nil && !errors.Is(err, mcp.ErrNotSupported) {
		return nil, err
	}
	server := "server"
	if si := c.cs.InitializeResult().ServerInfo; si != nil && si.Name != "" {
		server = si.Name
	}
	es := make([]toolsearch.Entry, len(tools))
	for i, t := range tools {
		es[i] = toolsearch.Entry{Server: server, Tool: t}
	}
	ix := toolsearch.New(nil)
	ix.Add(es...)
	return ix.Search(ctx, q), nil
}

// offersToolSearch reports whether the server announced mcpgate's tool
// search extension (tools/discover, tools/getSchema).
func (c *clientConn) offersToolSearch() bool {
	_, ok := c.cs.InitializeResult().Capabilities.Experimental[gateway.ExtensionToolSearch]
	return ok
}

// toolNotFoundBySearch asks a server with tool search whether it has a
// tool called name, for a call of a tool that its tools/list does not
// name: in search mode that listing holds the meta-tools only, and a tool
// it hides still runs when called. The answer is authoritative (handled)
// unless the server does not offer tool search. Found, or when the
// server cannot say, the error is nil, so that the server's own answer to
// the call (a validation error, a timeout) is what the user sees.
func (c *clientConn) toolNotFoundBySearch(ctx context.Context, name string) (handled bool, err error) {
	if !c.offersToolSearch() {
		return false, nil
	}
	cctx, cancel := c.callCtx(ctx)
	var tool mcp.Tool
	err = c.cs.Call(cctx, gateway.MethodGetSchema, gateway.GetSchemaParams{Name: name}, &tool)
	cancel()
	var ce *mcp.CallError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ce) && ce.Err.Code == jsonrpc.CodeMethodNotFound:
		return false, nil // announced but not served: the listing must do
	case ce == nil || ce.Err.Code != jsonrpc.CodeInvalidParams:
		return true, nil
	}
	msg := fmt.Sprintf("tool %q not found", name)
	words := strings.NewReplacer("_", " ", "-", " ", ".", " ", "/", " ").Replace(name)
	if hits, err := c.searchTools(ctx, toolsearch.Query{Text: words, K: 3}); err == nil && len(hits) > 0 {
		names := make([]string, len(hits))
		for i, h := range hits {
			names[i] = h.Tool.Name
		}
		msg += "; did you mean " + strings.Join(names, ", ") + "?"
	}
	return true, plainErrorf("%s (find tools with: %s)", msg, c.searchHint())
}

// searchHint is the tools search command for this target.
func (c *clientConn) searchHint() string {
	if c.t.url != "" {
		return fmt.Sprintf("mcpgate tools search %s \"what the tool should do\"", c.t.url)
	}
	return fmt.Sprintf("mcpgate tools search \"what the tool should do\" -- %s", shortCommand(c.t.command))
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

// printHits prints hits as a table, the description cut to the width of
// the terminal, or as JSON.
func printHits(w io.Writer, hits []toolsearch.Hit, asJSON bool) error {
	if asJSON {
		type result struct {
			Server      string  `json:"server"`
			Tool        string  `json:"tool"`
			Score       float64 `json:"score"`
			Tokens      int     `json:"tokens"`
			Description string  `json:"description,omitzero"`
		}
		rs := make([]result, len(hits))
		for i, h := range hits {
			rs[i] = result{h.Server, h.Tool.Name, h.Score, h.Tokens, h.Tool.Description}
		}
		return printJSON(w, struct {
			Results []result `json:"results"`
		}{rs})
	}
	t := &table{header: []string{"SCORE", "SERVER", "TOOL", "TOKENS", "DESCRIPTION"}}
	for _, h := range hits {
		t.add(fmt.Sprintf("%.2f", h.Score), h.Server, h.Tool.Name, strconv.Itoa(h.Tokens), describe(h.Tool.Title, h.Tool.Description))
	}
	t.print(w, "no tool matches")
	return nil
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
