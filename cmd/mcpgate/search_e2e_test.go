package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Tool search through the real binary: a gateway (serve --config) whose
// upstreams are this binary's task store ("work") and the client fixture
// ("fx", with a tool that never finishes), and the CLI against it.

// startSearchGateway starts an HTTP gateway whose tools are listed in
// listing mode (full, minimal or search) and waits until both upstreams'
// tools are known to its tool search.
func startSearchGateway(t *testing.T, listing string) *httpProc {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			"work": map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "work.db")}},
			// The fixture's slow tool never finishes: the gateway's
			// timeout ends it.
			"fx": map[string]any{"command": exe, "env": map[string]string{fixtureEnv: "stdio", "GORACE": "atexit_sleep_ms=0"}, "timeout": "500ms"},
		},
		"toolSearch": map[string]any{"listing": listing},
	})
	cfg := filepath.Join(dir, "gw.json")
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startHTTP(t, "--config", cfg)
	cs := connectHTTP(t, p.url)
	for _, name := range []string{"work_create_task", "fx_slow"} {
		for deadline := time.Now().Add(waitFor); ; time.Sleep(50 * time.Millisecond) {
			err := cs.Call(context.Background(), "tools/getSchema", map[string]any{"name": name}, nil)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the gateway does not know %s: %v\n%s", name, err, p.log())
			}
		}
	}
	return p
}

func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// tools/discover without its query is an error naming the parameter, not
// an empty result that reads as "no tool fits"; standard methods still
// ignore members they do not know.
func TestDiscoverWithoutQueryIsInvalidParamsE2E(t *testing.T) {
	p := startSearchGateway(t, "full")
	cs := connectHTTP(t, p.url)
	ctx := context.Background()
	for _, tt := range []struct {
		params any
		words  []string
	}{
		{map[string]any{"q": "write"}, []string{`needs "query"`, `got "q"`}},
		{map[string]any{}, []string{`needs "query"`}},
		{nil, []string{`needs "query"`}},
		{map[string]any{"query": "  "}, []string{`needs "query"`}},
	} {
		err := cs.Call(ctx, "tools/discover", tt.params, nil)
		var ce *mcp.CallError
		if !errors.As(err, &ce) || ce.Err.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("tools/discover %v: %v, want -32602", tt.params, err)
			continue
		}
		for _, w := range tt.words {
			if !strings.Contains(ce.Err.Message, w) {
				t.Errorf("tools/discover %v: %q lacks %q", tt.params, ce.Err.Message, w)
			}
		}
	}
	var found struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := cs.Call(ctx, "tools/discover", map[string]any{"query": "add a task to my list", "futureMember": 1}, &found); err != nil || len(found.Tools) == 0 || found.Tools[0].Name != "work_create_task" {
		t.Errorf("tools/discover with a query: %v %+v", err, found)
	}
	if err := cs.Call(ctx, "tools/list", map[string]any{"q": "write"}, nil); err != nil {
		t.Errorf("tools/list with an unknown member: %v", err)
	}
}

// In search mode the gateway lists only its meta-tools, yet calls every
// tool: the CLI shows a hidden tool's own error (invalid arguments, a
// timeout), and "not found" only for a tool the gateway does not have.
func TestToolsCallShowsAHiddenToolsRealErrorE2E(t *testing.T) {
	p := startSearchGateway(t, "search")
	if out := ok(t, "tools", "list", p.url); !strings.Contains(out, "search_tools") || strings.Contains(out, "work_create_task") {
		t.Fatalf("search mode lists:\n%s", out)
	}
	for _, tt := range []struct {
		args  []string
		words []string
	}{
		{[]string{"work_create_task", "--args", `{"priority":"urgent"}`}, []string{`tool "work_create_task" reported an error`, "title", "priority"}},
		{[]string{"fx_fail"}, []string{`tool "fx_fail" reported an error`}},
		{[]string{"fx_slow"}, []string{"the server answered tools/call with error", "within its timeout"}},
	} {
		r := fails(t, tt.words, "tools", "call", p.url, tt.args)
		if strings.Contains(r.stderr, "not found") {
			t.Errorf("tools call %s: a hidden tool reported as not found:\n%s", tt.args[0], r.stderr)
		}
	}
	if out := ok(t, "tools", "call", p.url, "work_create_task", "--args", `{"title":"hidden but callable"}`); !strings.Contains(out, "hidden but callable") {
		t.Errorf("a hidden tool's result:\n%s", out)
	}
	fails(t, []string{`tool "work_create_tasks" not found; did you mean work_create_task`, "mcpgate tools search " + p.url}, "tools", "call", p.url, "work_create_tasks")
}

type searchOutput struct {
	Results []struct {
		Server string  `json:"server"`
		Tool   string  `json:"tool"`
		Score  float64 `json:"score"`
		Tokens int     `json:"tokens"`
	} `json:"results"`
}

// tools search TARGET QUERY searches a running gateway with its
// tools/discover (hidden tools included) and any other server by ranking
// its tools/list, with no catalog file; --catalog searches files.
func TestToolsSearchLiveE2E(t *testing.T) {
	gw := startSearchGateway(t, "search")
	plain := startHTTP(t)
	dir := t.TempDir()
	for _, tt := range []struct {
		name   string
		target []string
		first  string // the best hit for "add a task to my list"
		server string
	}{
		{"gateway", []string{gw.url}, "work_create_task", "work"},
		{"plain server over HTTP", []string{plain.url}, "create_task", "mcpgate"},
		{"plain server over stdio", []string{"--", binary, "serve", "--stdio", "--db", filepath.Join(dir, "stdio.db")}, "create_task", "mcpgate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, cmd := tt.target, []string(nil)
			if tt.target[0] == "--" {
				url, cmd = nil, tt.target
			}
			out := ok(t, "tools", "search", url, "add a task to my list", cmd)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) < 2 || !strings.HasPrefix(lines[0], "SCORE") || !strings.Contains(lines[1], " "+tt.first+" ") || !strings.Contains(lines[1], " "+tt.server+" ") {
				t.Errorf("table:\n%s", out)
			}
			res := decode[searchOutput](t, ok(t, "tools", "search", "--json", "--k", "2", url, "add a task to my list", cmd))
			if len(res.Results) == 0 || len(res.Results) > 2 || res.Results[0].Tool != tt.first || res.Results[0].Server != tt.server || res.Results[0].Tokens <= 0 || res.Results[0].Score <= 0 {
				t.Errorf("--json: %+v", res)
			}
			if out := ok(t, "tools", "search", url, "zzzz qqqq", cmd); strings.TrimSpace(out) != "(no tool matches)" {
				t.Errorf("no match:\n%s", out)
			}
		})
	}
	// The gateway's search finds the fixture's tools too, which its
	// listing hides.
	if out := ok(t, "tools", "search", gw.url, "a tool that never finishes"); !strings.Contains(out, "fx_slow") {
		t.Errorf("gateway search:\n%s", out)
	}

	// Offline, from a catalog: the plain server's tools/list result.
	catalog := filepath.Join(dir, "tasks.json")
	os.WriteFile(catalog, []byte(ok(t, "tools", "list", "--json", plain.url)), 0o600)
	res := decode[searchOutput](t, ok(t, "tools", "search", "--catalog", catalog, "--json", "add a task to my list"))
	if len(res.Results) == 0 || res.Results[0].Tool != "create_task" || res.Results[0].Server != "tasks" {
		t.Errorf("--catalog: %+v", res)
	}
	fails(t, []string{"either a TARGET", "or --catalog"}, "tools", "search", "--catalog", catalog, plain.url, "add a task")
	fails(t, []string{"--queries", "--catalog"}, "tools", "search", "--queries", "q.jsonl", plain.url, "x")
	fails(t, []string{`no TARGET to search for "add a task"`, "--catalog PATH"}, "tools", "search", "add a task")
}
