package interop

// Tool search through the gateway, with a standard client: the
// TypeScript SDK 1.x's, knowing only tools/list and tools/call, completes
// tasks on real upstreams (server-everything, server-filesystem,
// server-memory, our fixtures, the task tools) when the gateway lists
// nothing but its meta-tools: it finds each tool with search_tools, reads
// the schema that came with the hit, and calls it through call_tool. The
// same client then calls the extension's methods (tools/discover,
// tools/getSchema, tools/getFullSchema) with client.request. The client
// runs node/ts-search-client.mjs, which reports each step as JSON; the
// assertions are here.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
)

const tsSearchClient = "TS SDK 1.32.2 client (tools/list + tools/call only)"

// tsSearchReport is what node/ts-search-client.mjs prints.
type tsSearchReport struct {
	OK           bool
	Error        string
	Stderr       string
	Negotiated   string
	ServerInfo   struct{ Name string }
	Capabilities struct{ Experimental map[string]json.RawMessage }
	Steps        map[string]*tsStep
	ClientErrors []string
}

// tsStep is one step's outcome; which fields are set depends on its op.
type tsStep struct {
	Error *struct {
		Code    int
		Message string
	}
	ElapsedMs int
	// list
	Tools []tsListedTool
	Pages int
	// waitTools
	Tries int
	// task
	Hits       []string
	Chosen     string
	Schema     toolSchema
	Problems   []string
	SearchText string
	Source     string // where the schema was read: structuredContent or text
	// task, call, request
	Result json.RawMessage
	// call with progress, cancel
	Progress  []progressEvent
	Late      []progressEvent
	Rejection string
}

type tsListedTool struct {
	Name        string
	Description string
	InputSchema toolSchema
	Meta        map[string]any `json:"_meta"`
}

type toolSchema struct {
	Type       string
	Properties map[string]json.RawMessage
	Required   []string
}

type tsToolResult struct {
	Content           []tsContent
	IsError           bool
	StructuredContent json.RawMessage
}

func (c *tsToolResult) text() string { return strings.Join(tsTexts(c.Content), "\n") }

// runTSSearch runs the script with plan and returns its report.
func runTSSearch(ctx context.Context, t *testing.T, plan map[string]any) (*tsSearchReport, error) {
	t.Helper()
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, env.node, filepath.Join(env.dir, "node", "ts-search-client.mjs"), string(b))
	cmd.SysProcAttr = sysProcAttr()
	// The script's own process group: a stdio gateway it started, and that
	// gateway's upstreams, end with it.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout bytes.Buffer
	stderr := newTailBuffer()
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	runErr := cmd.Run()
	var rep tsSearchReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		return nil, fmt.Errorf("ts-search-client.mjs: %v, its output %q (%v); its stderr: %s", runErr, stdout.String(), err, stderr)
	}
	if !rep.OK {
		return &rep, fmt.Errorf("ts-search-client.mjs: %s (the server's stderr: %s)", rep.Error, rep.Stderr)
	}
	return &rep, nil
}

// step returns a step's outcome, failing the test when it failed.
func (rep *tsSearchReport) step(t *testing.T, r *row, id string) *tsStep {
	t.Helper()
	s := rep.Steps[id]
	switch {
	case s == nil:
		fatalf(t, r, "step %s: no outcome", id)
	case s.Error != nil:
		fatalf(t, r, "step %s: error %d: %s", id, s.Error.Code, s.Error.Message)
	}
	return s
}

// call decodes a step's tools/call result.
func (s *tsStep) call(t *testing.T, r *row, id string) *tsToolResult {
	t.Helper()
	var res tsToolResult
	if err := json.Unmarshal(s.Result, &res); err != nil || s.Result == nil {
		fatalf(t, r, "step %s: no tools/call result (%v): %s", id, err, s.Result)
	}
	return &res
}

// callFailed says whether a tools/call step failed, as a JSON-RPC error
// or as an isError result, and with which text.
func (rep *tsSearchReport) callFailed(id string) (bool, string) {
	s := rep.Steps[id]
	if s == nil {
		return false, "no outcome"
	}
	if s.Error != nil {
		return true, s.Error.Message
	}
	var res tsToolResult
	if json.Unmarshal(s.Result, &res) != nil {
		return false, string(s.Result)
	}
	return res.IsError, res.text()
}

// searchTask is a task the client does with the meta-tools alone.
type searchTask struct {
	id, query string
	values    map[string]any
	want      string // the tool search_tools must rank first
	check     func(res *tsToolResult) bool
}

func (k searchTask) step() map[string]any {
	return map[string]any{"id": k.id, "op": "task", "query": k.query, "k": 5, "values": k.values}
}

// checkTask: search_tools ranked the wanted tool first, with a schema
// the task's values fit, and call_tool returned its real result.
func (rep *tsSearchReport) checkTask(t *testing.T, r *row, k searchTask) {
	t.Helper()
	s := rep.step(t, r, k.id)
	if len(s.Hits) == 0 || len(s.Hits) > 5 {
		fatalf(t, r, "%s: search_tools %q found %v (k 5): %s", k.id, k.query, s.Hits, s.SearchText)
	}
	if s.Chosen != k.want {
		fatalf(t, r, "%s: search_tools %q ranked %v, want %s first", k.id, k.query, s.Hits, k.want)
	}
	if len(s.Problems) > 0 {
		fatalf(t, r, "%s: the schema search_tools gave for %s does not fit the task: %q (%+v)", k.id, s.Chosen, s.Problems, s.Schema)
	}
	if s.Schema.Type != "object" || len(s.Schema.Properties) == 0 || len(s.Schema.Required) == 0 {
		fatalf(t, r, "%s: search_tools gave %s without its full schema: %+v", k.id, s.Chosen, s.Schema)
	}
	// structuredContent came in 2025-06-18; before, the text carries it all.
	want := "structuredContent"
	if i := slices.Index(revisions, rep.Negotiated); i >= 0 && i < slices.Index(revisions, "2025-06-18") {
		want = "text"
	}
	if s.Source != want {
		fatalf(t, r, "%s: at %s the client read the schema from %s, want %s", k.id, rep.Negotiated, s.Source, want)
	}
	res := s.call(t, r, k.id)
	if res.IsError || !k.check(res) {
		fatalf(t, r, "%s: call_tool %s: %+v", k.id, s.Chosen, res)
	}
}

// searchConfig adds a toolSearch section (and whatever else extra has)
// to a gateway configuration writeGatewayConfig wrote.
func searchConfig(t *testing.T, g *gatewaySetup, extra map[string]any) {
	t.Helper()
	b, err := os.ReadFile(g.config)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range extra {
		m[k] = v
	}
	if b, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g.config, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

var metaTools = []string{"call_tool", "describe_tool", "search_tools"}

var toolSearchMethods = []string{"tools/discover", "tools/getSchema", "tools/getFullSchema"}

// checkExtensionAnnounced: capabilities.experimental["io.mcpgate/toolSearch"]
// names the three methods.
func checkExtensionAnnounced(t *testing.T, r *row, rep *tsSearchReport) {
	t.Helper()
	var ext struct{ Methods []string }
	raw, ok := rep.Capabilities.Experimental["io.mcpgate/toolSearch"]
	if !ok || json.Unmarshal(raw, &ext) != nil {
		fatalf(t, r, "capabilities.experimental lacks io.mcpgate/toolSearch: %v", rep.Capabilities.Experimental)
	}
	for _, m := range toolSearchMethods {
		if !slices.Contains(ext.Methods, m) {
			fatalf(t, r, "io.mcpgate/toolSearch announces %v, not %s", ext.Methods, m)
		}
	}
	r.check("experimental")
}

// TestToolSearchGateway: the gateway in search mode (every upstream's
// tools hidden behind the meta-tools, the task tools pinned) over HTTP
// and over stdio, and one with API keys where a tenant without a listing
// of its own sees the minimal listing and another its own search mode.
// The three gateways (each with three node upstreams) run one after the
// other, beside the rest of the suite, to keep the load down.
func TestToolSearchGateway(t *testing.T) {
	t.Parallel()
	upstreams := []string{"everything", "filesystem", "memory", "fixtures"}
	search := map[string]any{"toolSearch": map[string]any{"listing": "search", "pinned": []string{"tasks_*"}}}
	const label = "mcpgate gateway, toolSearch listing search, tasks_* pinned (everything, filesystem, memory, fixtures, tasks)"

	t.Run("search/http", func(t *testing.T) {
		g := writeGatewayConfig(t, upstreams...)
		searchConfig(t, g, search)
		gw, url := startGateway(t, g)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the gateway's log:\n%s", gw.out)
			}
		})
		// The SDK's newest revision, and 2025-03-26, which has no
		// structuredContent: the client reads search_tools' text.
		for _, v := range []string{"default", "2025-03-26"} {
			t.Run(v, func(t *testing.T) {
				r := record(t, tsSearchClient, label, transportLabel["http"], v)
				plan := map[string]any{"transport": "http", "url": url}
				if v != "default" {
					plan["protocolVersion"] = v
				}
				searchModeScenario(testCtx(t, 120*time.Second), t, r, plan, g)
			})
		}
	})
	t.Run("search/stdio", func(t *testing.T) {
		// mcpgate serve --stdio --config, started by the TS client.
		g := writeGatewayConfig(t, upstreams...)
		searchConfig(t, g, search)
		r := record(t, tsSearchClient, label, transportLabel["stdio"], "")
		searchModeScenario(testCtx(t, 120*time.Second), t, r,
			map[string]any{"transport": "stdio", "command": env.mcpgate, "args": []string{"serve", "--stdio", "--config", g.config}}, g)
	})
	t.Run("tenants", func(t *testing.T) {
		tenantListings(t, upstreams)
	})
}

// searchModeScenario: a task per upstream done through search_tools and
// call_tool, the meta-tools' errors, a hidden tool called by name, then
// the extension's methods.
func searchModeScenario(ctx context.Context, t *testing.T, r *row, plan map[string]any, g *gatewaySetup) {
	t.Helper()
	entity := "Grace " + uniqueKey(t)
	cancelKey := uniqueKey(t)
	tasks := []searchTask{
		{id: "echo", query: "echo a message back", values: map[string]any{"message": "héllo through search_tools ✓"}, want: "everything_echo",
			check: func(res *tsToolResult) bool { return res.text() == "Echo: héllo through search_tools ✓" }},
		{id: "sum", query: "add two numbers", values: map[string]any{"a": 2, "b": 3.5}, want: "everything_get-sum",
			check: func(res *tsToolResult) bool { return strings.Contains(res.text(), "5.5") }},
		{id: "remember", query: "create entities in the knowledge graph", want: "memory_create_entities",
			values: map[string]any{"entities": []map[string]any{{"name": entity, "entityType": "person", "observations": []string{"found through search_tools"}}}},
			check:  func(res *tsToolResult) bool { return strings.Contains(res.text(), entity) }},
		{id: "recall", query: "search the knowledge graph for nodes", values: map[string]any{"query": entity}, want: "memory_search_nodes",
			check: func(res *tsToolResult) bool { return strings.Contains(res.text(), "found through search_tools") }},
		{id: "read", query: "read a text file", values: map[string]any{"path": filepath.Join(g.sandbox, "hello.txt")}, want: "filesystem_read_text_file",
			check: func(res *tsToolResult) bool { return strings.Contains(res.text(), "hello through the gateway") }},
	}
	steps := []map[string]any{
		// The gateway connects its upstreams in the background: wait, with
		// describe_tool, until it knows a tool of each.
		{"id": "wait", "op": "waitTools", "via": "describe_tool", "timeoutMs": 60000,
			"names": []string{"everything_echo", "filesystem_read_text_file", "memory_search_nodes", "fixtures_test_simple_text", "tasks_create_task"}},
		{"id": "list", "op": "list"},
	}
	for _, k := range tasks {
		steps = append(steps, k.step())
	}
	steps = append(steps,
		map[string]any{"id": "badType", "op": "call", "name": "call_tool", "arguments": map[string]any{"name": "everything_get-sum", "arguments": map[string]any{"a": 2, "b": "three"}}},
		map[string]any{"id": "badMissing", "op": "call", "name": "call_tool", "arguments": map[string]any{"name": "memory_search_nodes", "arguments": map[string]any{}}},
		map[string]any{"id": "badName", "op": "call", "name": "call_tool", "arguments": map[string]any{"name": "everything_no-such-tool", "arguments": map[string]any{}}},
		map[string]any{"id": "describe", "op": "call", "name": "describe_tool", "arguments": map[string]any{"name": "memory_search_nodes"}},
		map[string]any{"id": "hidden", "op": "call", "name": "everything_echo", "arguments": map[string]any{"message": "called by name"}},
		// Progress and cancellation reach the tool behind call_tool.
		map[string]any{"id": "progress", "op": "call", "name": "call_tool", "progress": true,
			"arguments": map[string]any{"name": "everything_trigger-long-running-operation", "arguments": map[string]any{"duration": 0.3, "steps": 3}}},
		map[string]any{"id": "cancel", "op": "cancel", "name": "call_tool", "arguments": map[string]any{"name": "fixtures_interop_slow", "arguments": map[string]any{"key": cancelKey}}},
		map[string]any{"id": "cancelState", "op": "call", "name": "call_tool",
			"arguments": map[string]any{"name": "fixtures_interop_cancel_state", "arguments": map[string]any{"key": cancelKey, "waitMs": 3000}}},
		map[string]any{"id": "pinned", "op": "call", "name": "tasks_create_task", "arguments": map[string]any{"title": "pinned " + uniqueKey(t)}},
		map[string]any{"id": "discover", "op": "request", "method": "tools/discover", "params": map[string]any{"query": "knowledge graph entities", "context": map[string]any{"maxTools": 10}}},
		map[string]any{"id": "discoverBudget", "op": "request", "method": "tools/discover", "params": map[string]any{"query": "knowledge graph entities", "context": map[string]any{"maxTools": 10, "tokenBudget": discoverBudget}}},
		map[string]any{"id": "getSchema", "op": "request", "method": "tools/getSchema", "params": map[string]any{"name": "memory_create_entities"}},
		map[string]any{"id": "getFullSchema", "op": "request", "method": "tools/getFullSchema", "params": map[string]any{"name": "everything_get-sum"}},
		map[string]any{"id": "getSchemaUnknown", "op": "request", "method": "tools/getSchema", "params": map[string]any{"name": "everything_no-such-tool"}},
	)
	plan["steps"] = steps
	rep, err := runTSSearch(ctx, t, plan)
	if err != nil {
		fatalf(t, r, "%v", err)
	}
	if rep.Negotiated != "" {
		r.setNegotiated(rep.Negotiated)
	}
	if rep.ServerInfo.Name != "mcpgate" {
		t.Errorf("serverInfo.name = %q, want mcpgate", rep.ServerInfo.Name)
	}
	wait := rep.step(t, r, "wait")

	// tools/list: the meta-tools and the pinned task tools, nothing else.
	list := rep.step(t, r, "list")
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		switch {
		case slices.Contains(metaTools, tool.Name):
			for _, srv := range g.servers {
				if strings.Contains(tool.Description, srv+"_") {
					t.Errorf("the meta-tool %s names a tool of %s: %q", tool.Name, srv, tool.Description)
				}
			}
		case strings.HasPrefix(tool.Name, "tasks_"):
			if len(tool.InputSchema.Properties) == 0 {
				t.Errorf("the pinned %s is listed without its schema: %+v", tool.Name, tool.InputSchema)
			}
		default:
			fatalf(t, r, "search mode lists %s, neither a meta-tool nor pinned: %v", tool.Name, names)
		}
	}
	for _, want := range append(slices.Clone(metaTools), "tasks_create_task") {
		if !slices.Contains(names, want) {
			fatalf(t, r, "search mode does not list %s: %v", want, names)
		}
	}
	r.check("tools/list(meta+pinned)")

	for _, k := range tasks {
		rep.checkTask(t, r, k)
	}
	r.check("search_tools→call_tool")

	if failed, text := rep.callFailed("badType"); !failed || !strings.Contains(text, `Invalid arguments for tool "everything_get-sum"`) || !strings.Contains(text, "/b") {
		fatalf(t, r, "call_tool with a string for the number b: want an error naming b, got failed=%v %q", failed, text)
	}
	if failed, text := rep.callFailed("badMissing"); !failed || !strings.Contains(text, `Invalid arguments for tool "memory_search_nodes"`) || !strings.Contains(text, "query") {
		fatalf(t, r, "call_tool without the required query: want an error naming query, got failed=%v %q", failed, text)
	}
	if failed, text := rep.callFailed("badName"); !failed || !strings.Contains(text, `Unknown tool "everything_no-such-tool"`) {
		fatalf(t, r, "call_tool of an unknown tool: want an error naming it, got failed=%v %q", failed, text)
	}
	r.check("call_tool(errors)")

	d := rep.step(t, r, "describe").call(t, r, "describe")
	var described struct {
		Name        string
		InputSchema toolSchema
	}
	if d.IsError || json.Unmarshal([]byte(d.text()), &described) != nil || described.Name != "memory_search_nodes" || described.InputSchema.Properties["query"] == nil {
		fatalf(t, r, "describe_tool memory_search_nodes: %+v", d)
	}
	r.check("describe_tool")

	if res := rep.step(t, r, "hidden").call(t, r, "hidden"); res.IsError || res.text() != "Echo: called by name" {
		fatalf(t, r, "everything_echo, hidden by search mode, called by name: %+v", res)
	}
	if res := rep.step(t, r, "pinned").call(t, r, "pinned"); res.IsError || !strings.Contains(res.text(), `"id"`) {
		fatalf(t, r, "tasks_create_task, pinned: %+v", res)
	}
	r.check("direct-call")

	p := rep.step(t, r, "progress")
	if res := p.call(t, r, "progress"); res.IsError || !strings.Contains(res.text(), "Long running operation completed") {
		fatalf(t, r, "call_tool everything_trigger-long-running-operation: %+v", res)
	}
	checkProgress(t, r, append(p.Progress, p.Late...), []float64{1, 2, 3}, 3)
	r.check("progress(call_tool)")
	if c := rep.step(t, r, "cancel"); len(c.Progress) == 0 || c.Rejection == "" {
		fatalf(t, r, "cancelling call_tool fixtures_interop_slow: %+v", c)
	}
	var st struct{ State, Cause string }
	if res := rep.step(t, r, "cancelState").call(t, r, "cancelState"); res.IsError || json.Unmarshal([]byte(res.text()), &st) != nil || st.State != "cancelled" {
		fatalf(t, r, "the fixtures' handler behind call_tool was not cancelled: %+v (state %q: %s)", res, st.State, st.Cause)
	}
	r.check("cancel(call_tool)")

	checkExtensionAnnounced(t, r, rep)
	checkDiscover(t, r, rep)
	var schema struct {
		Name        string
		InputSchema toolSchema
	}
	if err := json.Unmarshal(rep.step(t, r, "getSchema").Result, &schema); err != nil || schema.Name != "memory_create_entities" || schema.InputSchema.Properties["entities"] == nil {
		fatalf(t, r, "tools/getSchema memory_create_entities: %v %s", err, rep.Steps["getSchema"].Result)
	}
	r.check("tools/getSchema")
	var full struct {
		Tool          struct{ Name string }
		Examples      []map[string]any
		Documentation string
		Tokens        int
	}
	if err := json.Unmarshal(rep.step(t, r, "getFullSchema").Result, &full); err != nil || full.Tool.Name != "everything_get-sum" || len(full.Examples) == 0 ||
		full.Examples[0]["a"] == nil || full.Examples[0]["b"] == nil || !strings.Contains(full.Documentation, "`a` (number, required)") || full.Tokens <= 0 {
		fatalf(t, r, "tools/getFullSchema everything_get-sum: %v %s", err, rep.Steps["getFullSchema"].Result)
	}
	if s := rep.Steps["getSchemaUnknown"]; s == nil || s.Error == nil || s.Error.Code != -32602 {
		fatalf(t, r, "tools/getSchema of an unknown tool: want error -32602, got %+v", s)
	}
	r.check("tools/getFullSchema")
	if len(rep.ClientErrors) > 0 {
		t.Errorf("the TypeScript client reported errors: %q", rep.ClientErrors)
	}
	r.note("upstreams known after %d ms; search_tools top hits: %s", wait.ElapsedMs, topHits(rep, tasks))
}

// discoverBudget is a token budget that holds some but not all of the
// memory server's tools (about 250 to 300 estimated tokens each).
const discoverBudget = 700

// checkDiscover: tools/discover ranks with scores, token estimates and
// servers, and keeps within a token budget.
func checkDiscover(t *testing.T, r *row, rep *tsSearchReport) {
	t.Helper()
	type discovered struct {
		Tools []struct {
			Name        string
			Score       float64
			Tokens      int
			Server      string
			InputSchema *toolSchema
		}
		TotalTokens int
		Omitted     int
	}
	decode := func(id string) *discovered {
		var d discovered
		if err := json.Unmarshal(rep.step(t, r, id).Result, &d); err != nil || len(d.Tools) == 0 {
			fatalf(t, r, "tools/discover (%s): %v %s", id, err, rep.Steps[id].Result)
		}
		sum := 0
		for _, tool := range d.Tools {
			if tool.Score <= 0 || tool.Tokens <= 0 || tool.Server == "" || tool.InputSchema == nil || tool.InputSchema.Type != "object" {
				fatalf(t, r, "tools/discover (%s): %s lacks a score, tokens, server or schema: %s", id, tool.Name, rep.Steps[id].Result)
			}
			sum += tool.Tokens
		}
		if sum != d.TotalTokens {
			fatalf(t, r, "tools/discover (%s): totalTokens %d, the tools' tokens sum to %d", id, d.TotalTokens, sum)
		}
		return &d
	}
	all := decode("discover")
	if all.Tools[0].Server != "memory" || len(all.Tools) > 10 {
		fatalf(t, r, "tools/discover knowledge graph entities (maxTools 10): %d tools, first %s of %s", len(all.Tools), all.Tools[0].Name, all.Tools[0].Server)
	}
	if all.TotalTokens <= discoverBudget {
		fatalf(t, r, "tools/discover without a budget costs %d tokens, no more than the budget %d: the budget case proves nothing", all.TotalTokens, discoverBudget)
	}
	budget := decode("discoverBudget")
	if budget.TotalTokens > discoverBudget || budget.Omitted == 0 || len(budget.Tools) >= len(all.Tools) {
		fatalf(t, r, "tools/discover with tokenBudget %d: %d tokens in %d tools, %d omitted (unbounded: %d tokens in %d tools)",
			discoverBudget, budget.TotalTokens, len(budget.Tools), budget.Omitted, all.TotalTokens, len(all.Tools))
	}
	r.check("tools/discover(tokenBudget)")
}

func topHits(rep *tsSearchReport, tasks []searchTask) string {
	var out []string
	for _, k := range tasks {
		out = append(out, fmt.Sprintf("%q→%s", k.query, rep.Steps[k.id].Chosen))
	}
	return strings.Join(out, ", ")
}

// tenantListings: one gateway over HTTP with API keys, listing minimal
// (the task tools full), and two tenants: globex, without a listing of its
// own, gets the minimal listing, and asks tools/getSchema for schemas;
// acme, with toolListing search and only some servers, gets the
// meta-tools, and finds only its own servers' tools.
func tenantListings(t *testing.T, upstreams []string) {
	g := writeGatewayConfig(t, upstreams...)
	keys := filepath.Join(filepath.Dir(g.config), "keys")
	alice, bob := newAPIKey(t, keys, "alice"), newAPIKey(t, keys, "bob")
	searchConfig(t, g, map[string]any{
		"toolSearch": map[string]any{"listing": "minimal", "servers": map[string]any{"tasks": "full"}},
		"tenants": map[string]any{
			"acme":   map[string]any{"principals": []string{"apikey:alice"}, "servers": []string{"everything", "memory"}, "toolListing": "search"},
			"globex": map[string]any{"principals": []string{"apikey:bob"}},
		},
	})
	gw, url := startHTTPServer(t, env.mcpgate, []string{"serve", "--config", g.config, "--addr", "127.0.0.1:0", "--auth-keys", keys}, nil,
		regexp.MustCompile(`mcpgate is listening on (http://\S+)`))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the gateway's log:\n%s", gw.out)
		}
	})
	const label = "mcpgate gateway, toolSearch listing minimal (tasks full), API keys, tenant %s"
	t.Run("minimal", func(t *testing.T) {
		r := record(t, tsSearchClient, fmt.Sprintf(label, "globex: the minimal listing"), transportLabel["http"], "")
		minimalScenario(testCtx(t, 120*time.Second), t, r, map[string]any{"transport": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + bob}})
	})
	t.Run("tenant-search", func(t *testing.T) {
		r := record(t, tsSearchClient, fmt.Sprintf(label, "acme: toolListing search, servers everything+memory"), transportLabel["http"], "")
		tenantSearchScenario(testCtx(t, 120*time.Second), t, r, map[string]any{"transport": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + alice}}, g)
	})
}

// newAPIKey makes an API key with `mcpgate auth new-key`, appended to the
// key file, and returns it.
func newAPIKey(t *testing.T, file, name string) string {
	t.Helper()
	out, err := exec.Command(env.mcpgate, "auth", "new-key", name, "--append", file).Output()
	key := strings.TrimSpace(string(out))
	if err != nil || key == "" || strings.Contains(key, "\n") {
		t.Fatalf("mcpgate auth new-key %s: %v %q", name, err, out)
	}
	return key
}

// minimalScenario: every tool listed by name with a one-line description
// and a deferred schema (the task tools in full), the meta-tools absent;
// tools/getSchema gives the full definition, and a tool is called by name.
func minimalScenario(ctx context.Context, t *testing.T, r *row, plan map[string]any) {
	t.Helper()
	schemaOf := []string{"everything_get-sum", "memory_create_entities", "filesystem_read_text_file", "fixtures_test_custom_header", "tasks_create_task"}
	steps := []map[string]any{
		{"id": "wait", "op": "waitTools", "via": "list", "timeoutMs": 60000,
			"names": []string{"everything_get-sum", "filesystem_read_text_file", "memory_create_entities", "fixtures_test_custom_header", "tasks_create_task"}},
		{"id": "list", "op": "list"},
		{"id": "call", "op": "call", "name": "everything_get-sum", "arguments": map[string]any{"a": 2, "b": 3.5}},
		{"id": "search_tools", "op": "call", "name": "search_tools", "arguments": map[string]any{"query": "add two numbers"}},
	}
	for _, n := range schemaOf {
		steps = append(steps, map[string]any{"id": "getSchema " + n, "op": "request", "method": "tools/getSchema", "params": map[string]any{"name": n}})
	}
	plan["steps"] = steps
	rep, err := runTSSearch(ctx, t, plan)
	if err != nil {
		fatalf(t, r, "%v", err)
	}
	if rep.Negotiated != "" {
		r.setNegotiated(rep.Negotiated)
	}
	rep.step(t, r, "wait")
	listed := map[string]tsListedTool{}
	for _, tool := range rep.step(t, r, "list").Tools {
		listed[tool.Name] = tool
		if slices.Contains(metaTools, tool.Name) {
			fatalf(t, r, "the minimal listing has the meta-tool %s", tool.Name)
		}
		if tool.Name == "" || tool.InputSchema.Type != "object" {
			fatalf(t, r, "a listed tool without a name or an object schema: %+v", tool)
		}
		if strings.HasPrefix(tool.Name, "tasks_") { // full, per server
			if len(tool.InputSchema.Properties) == 0 || tool.Meta["io.mcpgate/schema"] != nil {
				t.Errorf("%s, of a server in full mode, is listed without its schema: %+v", tool.Name, tool)
			}
			continue
		}
		if len(tool.InputSchema.Properties) > 0 || tool.Meta["io.mcpgate/schema"] != "deferred" {
			t.Errorf("%s is listed with its schema (%v) or without _meta io.mcpgate/schema deferred (%v)", tool.Name, tool.InputSchema.Properties, tool.Meta)
		}
		if tool.Description == "" || strings.Contains(tool.Description, "\n") || utf8.RuneCountInString(tool.Description) > 160 {
			t.Errorf("%s's listed description is not one line: %q", tool.Name, tool.Description)
		}
	}
	if len(listed) < 50 {
		fatalf(t, r, "the minimal listing has %d tools, want every upstream's", len(listed))
	}
	r.check(fmt.Sprintf("tools/list(minimal: %d)", len(listed)))

	for _, n := range schemaOf {
		var full struct {
			Name        string
			Description string
			InputSchema toolSchema
		}
		id := "getSchema " + n
		if err := json.Unmarshal(rep.step(t, r, id).Result, &full); err != nil || full.Name != n || len(full.InputSchema.Properties) == 0 || len(full.InputSchema.Required) == 0 {
			fatalf(t, r, "tools/getSchema %s: %v %s", n, err, rep.Steps[id].Result)
		}
		// The listed line is the start of the full description.
		line := strings.TrimSuffix(listed[n].Description, "…")
		if !strings.HasPrefix(strings.Join(strings.Fields(full.Description), " "), line) {
			t.Errorf("%s: listed as %q, the full description %q does not start with it", n, listed[n].Description, full.Description)
		}
	}
	r.check("tools/getSchema")
	if res := rep.step(t, r, "call").call(t, r, "call"); res.IsError || !strings.Contains(res.text(), "5.5") {
		fatalf(t, r, "everything_get-sum called by its listed name: %+v", res)
	}
	r.check("tools/call")
	if failed, text := rep.callFailed("search_tools"); !failed {
		fatalf(t, r, "search_tools answered a caller who sees no server in search mode: %s", text)
	}
	r.check("no-meta-tools")
	checkExtensionAnnounced(t, r, rep)
	if len(rep.ClientErrors) > 0 {
		t.Errorf("the TypeScript client reported errors: %q", rep.ClientErrors)
	}
}

// tenantSearchScenario: the tenant's own listing mode (search) over the
// gateway's (minimal), and its search sees its servers only.
func tenantSearchScenario(ctx context.Context, t *testing.T, r *row, plan map[string]any, g *gatewaySetup) {
	t.Helper()
	echo := searchTask{id: "echo", query: "echo a message back", values: map[string]any{"message": "acme ✓"}, want: "everything_echo",
		check: func(res *tsToolResult) bool { return res.text() == "Echo: acme ✓" }}
	plan["steps"] = []map[string]any{
		{"id": "wait", "op": "waitTools", "via": "describe_tool", "timeoutMs": 60000, "names": []string{"everything_echo", "memory_search_nodes"}},
		{"id": "list", "op": "list"},
		echo.step(),
		{"id": "searchOthers", "op": "call", "name": "search_tools", "arguments": map[string]any{"query": "read a text file from the file system", "k": 20}},
		{"id": "callOthers", "op": "call", "name": "call_tool", "arguments": map[string]any{"name": "filesystem_read_text_file", "arguments": map[string]any{"path": filepath.Join(g.sandbox, "hello.txt")}}},
		{"id": "discoverOthers", "op": "request", "method": "tools/discover", "params": map[string]any{"query": "read a text file from the file system", "context": map[string]any{"maxTools": 50}}},
	}
	rep, err := runTSSearch(ctx, t, plan)
	if err != nil {
		fatalf(t, r, "%v", err)
	}
	if rep.Negotiated != "" {
		r.setNegotiated(rep.Negotiated)
	}
	rep.step(t, r, "wait")
	var names []string
	for _, tool := range rep.step(t, r, "list").Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, metaTools) {
		fatalf(t, r, "acme (toolListing search, nothing pinned) lists %v, want the meta-tools", names)
	}
	r.check("tools/list(meta)")
	rep.checkTask(t, r, echo)
	r.check("search_tools→call_tool")

	mine := func(name string) bool {
		return strings.HasPrefix(name, "everything_") || strings.HasPrefix(name, "memory_")
	}
	var found struct{ Tools []struct{ Name string } }
	res := rep.step(t, r, "searchOthers").call(t, r, "searchOthers")
	if err := json.Unmarshal(res.StructuredContent, &found); res.IsError || err != nil {
		fatalf(t, r, "search_tools: %v %+v", err, res)
	}
	for _, f := range found.Tools {
		if !mine(f.Name) {
			fatalf(t, r, "acme's search_tools found %s, of a server acme does not see", f.Name)
		}
	}
	if failed, text := rep.callFailed("callOthers"); !failed || !strings.Contains(text, "filesystem_read_text_file") {
		fatalf(t, r, "acme called filesystem_read_text_file through call_tool: failed=%v %q", failed, text)
	}
	var d struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(rep.step(t, r, "discoverOthers").Result, &d); err != nil {
		fatalf(t, r, "tools/discover: %v", err)
	}
	for _, f := range d.Tools {
		if !mine(f.Name) {
			fatalf(t, r, "acme's tools/discover found %s, of a server acme does not see", f.Name)
		}
	}
	r.check("tenant-scoped")
	if len(rep.ClientErrors) > 0 {
		t.Errorf("the TypeScript client reported errors: %q", rep.ClientErrors)
	}
}
