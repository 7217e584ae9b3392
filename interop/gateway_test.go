package interop

// The gateway: `mcpgate serve --config FILE` with real upstreams, the
// published npm servers (server-everything, server-filesystem on a
// sandbox directory, server-memory on a file of its own, all over stdio
// from node_modules) and our fixtures (over stdio, and over HTTP: the
// fixtures server TestMain starts), plus the built-in task tools, all in
// one Claude Desktop style file; clients, ours and the TypeScript SDK's,
// talk to the gateway alone. Then a fault: an upstream killed in the
// middle of a call.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The gateway's own error codes (README, "Run it as a gateway").
const (
	codeUpstreamUnavailable = -32010
	codeUpstreamFailed      = -32012
)

// gatewayTools are, for each upstream, tools the gateway must publish
// under the upstream's name (its prefix): a client waits for all of them,
// since the gateway connects its upstreams in the background.
var gatewayTools = map[string][]string{
	"everything":    {"echo", "get-sum", "trigger-long-running-operation"},
	"filesystem":    {"list_allowed_directories", "read_text_file", "write_file", "list_directory"},
	"memory":        {"create_entities", "search_nodes", "read_graph"},
	"fixtures":      {"test_simple_text", "test_error_handling", "test_elicitation", "interop_slow", "interop_cancel_state"},
	"fixtures-http": {"test_simple_text", "test_elicitation"},
	"tasks":         {"create_task", "get_task", "list_tasks"},
}

// gatewayServerLabel is the server column of the gateway's rows.
const gatewayServerLabel = "mcpgate gateway (everything, filesystem, memory, fixtures stdio+http, tasks)"

// gatewaySetup is one configuration file and the places its servers use.
type gatewaySetup struct {
	config  string
	sandbox string // server-filesystem's one allowed directory
	servers []string
}

// writeGatewayConfig writes a gateway configuration in Claude Desktop
// form (mcpServers: command, args, env or url) with the built-in task
// tools on, holding the named upstreams.
func writeGatewayConfig(t *testing.T, servers ...string) *gatewaySetup {
	t.Helper()
	// Under the run's directory rather than t.TempDir: a gateway (and its
	// upstreams) may still be writing there as the test ends; TestMain
	// removes it all once every process has stopped.
	dir, err := os.MkdirTemp(env.tmp, "gateway-")
	if err != nil {
		t.Fatal(err)
	}
	g := &gatewaySetup{config: filepath.Join(dir, "claude_desktop_config.json"), sandbox: filepath.Join(dir, "sandbox"), servers: append(slices.Clone(servers), "tasks")}
	if err := os.Mkdir(g.sandbox, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.sandbox, "hello.txt"), []byte("hello through the gateway\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdio := func(cmd string, args []string) map[string]any { return map[string]any{"command": cmd, "args": args} }
	m := map[string]any{}
	for _, s := range servers {
		switch s {
		case "everything":
			m[s] = stdio(nodeServer("@modelcontextprotocol/server-everything", "stdio"))
		case "filesystem":
			m[s] = stdio(nodeServer("@modelcontextprotocol/server-filesystem", g.sandbox))
		case "memory":
			x := stdio(nodeServer("@modelcontextprotocol/server-memory"))
			x["env"] = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
			m[s] = x
		case "fixtures":
			m[s] = stdio(fixturesCommand())
		case "fixtures-http":
			m[s] = map[string]any{"url": env.fixturesURL}
		default:
			t.Fatalf("no upstream %s", s)
		}
	}
	b, err := json.MarshalIndent(map[string]any{
		"mcpServers": m,
		"builtins":   map[string]any{"tasks": true, "tasksDb": filepath.Join(dir, "tasks.db")},
		// The matrix relays sampling and roots, which a gateway grants
		// no server unless its operator says so.
		"defaults": map[string]any{"clientFeatures": map[string]any{"sampling": true, "roots": true}},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g.config, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return g
}

// startGateway runs `mcpgate serve --config` on a loopback port of its
// own and returns the process and its endpoint.
func startGateway(t *testing.T, g *gatewaySetup) (*proc, string) {
	t.Helper()
	return startHTTPServer(t, env.mcpgate, []string{"serve", "--config", g.config, "--addr", "127.0.0.1:0"}, nil,
		regexp.MustCompile(`mcpgate is listening on (http://\S+)`))
}

// published is what the gateway names a tool of server.
func published(server, tool string) string { return server + "_" + tool }

// waitGatewayTools lists the tools until every upstream of g has
// published the tools it must (each upstream connects in the background,
// node cold starts included), or ctx ends.
func waitGatewayTools(ctx context.Context, s session, g *gatewaySetup) ([]string, error) {
	var want []string
	for _, srv := range g.servers {
		for _, tool := range gatewayTools[srv] {
			want = append(want, published(srv, tool))
		}
	}
	for {
		names, err := s.ListTools(ctx)
		var missing []string
		if err == nil {
			for _, w := range want {
				if !slices.Contains(names, w) {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				return names, nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return nil, fmt.Errorf("tools/list: %v", err)
			}
			return nil, fmt.Errorf("tools/list still lacks %v after %v: %v", missing, ctx.Err(), names)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// warmUp makes a first call to each stdio upstream, bounded by coldStart:
// the gateway starts a stdio server lazily (connects once to learn its
// tools, stops it, and starts it again for the first call that needs it),
// so the first call waits for node to start.
func warmUp(ctx context.Context, t *testing.T, r *row, s session, g *gatewaySetup) {
	t.Helper()
	first := map[string]struct {
		tool string
		args map[string]any
	}{
		"everything": {"echo", map[string]any{"message": "warm"}},
		"filesystem": {"list_allowed_directories", nil},
		"memory":     {"read_graph", nil},
		"fixtures":   {"test_simple_text", nil},
	}
	for _, srv := range g.servers {
		c, ok := first[srv]
		if !ok {
			continue
		}
		res, err := callWithin(ctx, s, coldStart, published(srv, c.tool), c.args)
		if err != nil || res.IsError {
			fatalf(t, r, "the first call to %s (a lazy start): %v %+v", srv, err, res)
		}
	}
}

// coldStart bounds a call that starts a node server.
const coldStart = 30 * time.Second

// callWithin is CallTool with a bound of its own rather than callTimeout
// (the TypeScript driver applies its own 10 s as well).
func callWithin(ctx context.Context, s session, d time.Duration, name string, args map[string]any) (*toolResult, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if o, ok := s.(*oursSession); ok {
		if args == nil {
			args = map[string]any{}
		}
		res, err := o.cs.CallTool(ctx, name, args)
		if err != nil {
			return nil, err
		}
		return &toolResult{Texts: oursTexts(res.Content), IsError: res.IsError}, nil
	}
	return s.CallTool(ctx, name, args)
}

// gatewayScenario is a session with the full gateway: a tool of every
// upstream called (and a tool error of two passed through), progress and
// cancellation through it, resources and prompts under their published
// names.
func gatewayScenario(ctx context.Context, t *testing.T, r *row, s session, g *gatewaySetup) {
	t.Helper()
	checkNegotiated(t, r, s)
	if name := s.ServerName(); name != "mcpgate" {
		t.Errorf("serverInfo.name = %q, want mcpgate", name)
	}
	names, err := waitGatewayTools(ctx, s, g)
	if err != nil {
		fatalf(t, r, "%v", err)
	}
	for _, n := range names {
		if i := strings.Index(n, "_"); i < 0 || !slices.Contains(g.servers, n[:i]) {
			fatalf(t, r, "tools/list has %q, not prefixed with an upstream's name", n)
		}
	}
	r.check("tools/list")
	warmUp(ctx, t, r, s, g)

	// server-everything
	res, err := s.CallTool(ctx, "everything_echo", map[string]any{"message": "héllo ✓"})
	if err != nil || res.IsError || res.text() != "Echo: héllo ✓" {
		fatalf(t, r, "everything_echo: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "everything_get-sum", map[string]any{"a": 2, "b": 3.5})
	if err != nil || res.IsError || !strings.Contains(res.text(), "5.5") {
		fatalf(t, r, "everything_get-sum: %v %+v", err, res)
	}

	// server-filesystem, on the sandbox
	res, err = s.CallTool(ctx, "filesystem_read_text_file", map[string]any{"path": filepath.Join(g.sandbox, "hello.txt")})
	if err != nil || res.IsError || !strings.Contains(res.text(), "hello through the gateway") {
		fatalf(t, r, "filesystem_read_text_file: %v %+v", err, res)
	}
	file := strings.NewReplacer("/", "-", " ", "-").Replace(r.Client+"-"+r.Transport+"-"+r.Offered) + ".txt"
	body := "written through the gateway: ünïcödé\n"
	res, err = s.CallTool(ctx, "filesystem_write_file", map[string]any{"path": filepath.Join(g.sandbox, file), "content": body})
	if err != nil || res.IsError {
		fatalf(t, r, "filesystem_write_file: %v %+v", err, res)
	}
	if got, err := os.ReadFile(filepath.Join(g.sandbox, file)); err != nil || string(got) != body {
		fatalf(t, r, "the file written through the gateway: %q %v", got, err)
	}
	res, err = s.CallTool(ctx, "filesystem_list_directory", map[string]any{"path": g.sandbox})
	if err != nil || res.IsError || !strings.Contains(res.text(), "[FILE] "+file) {
		fatalf(t, r, "filesystem_list_directory: %v %+v", err, res)
	}
	// Outside the sandbox: the upstream's tool error reaches the client
	// as it is, a result with isError.
	res, err = s.CallTool(ctx, "filesystem_read_text_file", map[string]any{"path": "/etc/hostname"})
	if err != nil || !res.IsError {
		fatalf(t, r, "filesystem_read_text_file outside the sandbox: want an isError result, got %v %+v", err, res)
	}

	// server-memory
	entity := "Ada " + uniqueKey(t)
	res, err = s.CallTool(ctx, "memory_create_entities", map[string]any{"entities": []map[string]any{
		{"name": entity, "entityType": "person", "observations": []string{"reached through mcpgate"}},
	}})
	if err != nil || res.IsError {
		fatalf(t, r, "memory_create_entities: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "memory_search_nodes", map[string]any{"query": entity})
	if err != nil || res.IsError || !strings.Contains(res.text(), "reached through mcpgate") {
		fatalf(t, r, "memory_search_nodes: %v %+v", err, res)
	}

	// our fixtures, over stdio and over HTTP
	res, err = s.CallTool(ctx, "fixtures_test_simple_text", nil)
	if err != nil || res.IsError || res.text() != "This is a simple text response for testing." {
		fatalf(t, r, "fixtures_test_simple_text: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "fixtures_test_error_handling", nil)
	if err != nil || !res.IsError || !strings.Contains(res.text(), "intentionally returns an error") {
		fatalf(t, r, "fixtures_test_error_handling: want its isError result, got %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "fixtures-http_test_simple_text", nil)
	if err != nil || res.IsError || res.text() != "This is a simple text response for testing." {
		fatalf(t, r, "fixtures-http_test_simple_text: %v %+v", err, res)
	}
	// The fixtures see the gateway's client, whatever client is downstream.
	for _, srv := range []string{"fixtures", "fixtures-http"} {
		res, err = s.CallTool(ctx, srv+"_interop_session", nil)
		if err != nil || res.IsError {
			fatalf(t, r, "%s_interop_session: %v %+v", srv, err, res)
		}
		var info struct{ ProtocolVersion, ClientName string }
		if err := res.decode(&info); err != nil {
			t.Fatal(err)
		}
		if info.ClientName != "mcpgate" {
			t.Errorf("%s saw the client %q, want the gateway's (mcpgate)", srv, info.ClientName)
		}
		t.Logf("%s: the gateway's session upstream runs at %s", srv, info.ProtocolVersion)
	}

	// the built-in task tools
	title := "through the gateway " + uniqueKey(t)
	res, err = s.CallTool(ctx, "tasks_create_task", map[string]any{"title": title, "tags": []string{"gateway"}})
	if err != nil || res.IsError {
		fatalf(t, r, "tasks_create_task: %v %+v", err, res)
	}
	var task struct{ ID, Title string }
	if err := res.decode(&task); err != nil || task.ID == "" || task.Title != title {
		fatalf(t, r, "tasks_create_task returned %+v (%v)", task, err)
	}
	res, err = s.CallTool(ctx, "tasks_get_task", map[string]any{"id": task.ID})
	if err != nil || res.IsError || !strings.Contains(res.text(), title) {
		fatalf(t, r, "tasks_get_task: %v %+v", err, res)
	}
	r.check("tools/call")

	// Progress: server-everything's long-running tool, and the fixtures'.
	res, prog, err := s.CallToolProgress(ctx, "everything_trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3})
	if err != nil || res.IsError {
		fatalf(t, r, "everything_trigger-long-running-operation: %v %+v", err, res)
	}
	checkProgress(t, r, prog, []float64{1, 2, 3}, 3)
	res, prog, err = s.CallToolProgress(ctx, "fixtures_test_tool_with_progress", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "fixtures_test_tool_with_progress: %v %+v", err, res)
	}
	checkProgress(t, r, prog, []float64{0, 50, 100}, 100)
	r.check("progress")

	texts, err := s.ReadResource(ctx, "everything+demo://resource/dynamic/text/7")
	if err != nil || len(texts) != 1 || !strings.HasPrefix(texts[0], "Resource 7: ") {
		fatalf(t, r, "resources/read everything+demo://resource/dynamic/text/7: %v %q", err, texts)
	}
	texts, err = s.ReadResource(ctx, "fixtures+test://static-text")
	if err != nil || len(texts) != 1 || texts[0] != "This is the content of the static text resource." {
		fatalf(t, r, "resources/read fixtures+test://static-text: %v %q", err, texts)
	}
	texts, err = s.ReadResource(ctx, "fixtures-http+test://template/42/data")
	if err != nil || len(texts) != 1 || !strings.Contains(texts[0], `"id":"42"`) {
		fatalf(t, r, "resources/read fixtures-http+test://template/42/data: %v %q", err, texts)
	}
	r.check("resources/read")

	texts, err = s.GetPrompt(ctx, "everything_simple-prompt", nil)
	if err != nil || len(texts) != 1 || texts[0] != "This is a simple prompt without arguments." {
		fatalf(t, r, "prompts/get everything_simple-prompt: %v %q", err, texts)
	}
	texts, err = s.GetPrompt(ctx, "fixtures_test_prompt_with_arguments", map[string]string{"arg1": "left", "arg2": "right"})
	if err != nil || len(texts) != 1 || texts[0] != "Prompt with arguments: arg1='left', arg2='right'" {
		fatalf(t, r, "prompts/get fixtures_test_prompt_with_arguments: %v %q", err, texts)
	}
	r.check("prompts/get")

	// Cancellation through the gateway: the fixtures' handler must see it
	// (the gateway cancels its own call upstream)...
	checkCancel(ctx, t, r, s, "fixtures_interop_slow", "fixtures_interop_cancel_state")
	// ...and server-everything's long-running tool, which ignores it and
	// runs on, must end for the client at once, the session going on.
	cctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	start := time.Now()
	if err := s.CancelAtFirstProgress(cctx, "everything_trigger-long-running-operation", map[string]any{"duration": 2, "steps": 20}); err != nil {
		fatalf(t, r, "cancelling everything_trigger-long-running-operation: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		fatalf(t, r, "the cancelled call took %v to return", d)
	}
	time.Sleep(300 * time.Millisecond) // progress the upstream sends on
	if res, err := s.CallTool(ctx, "everything_echo", map[string]any{"message": "after"}); err != nil || res.text() != "Echo: after" {
		fatalf(t, r, "everything_echo after a cancellation: %v %+v", err, res)
	}
	r.check("cancel")
}

// elicitAnswer is what the clients answer to every elicitation: it
// satisfies the fixtures' schema (username, email) and
// server-everything's (name).
var elicitAnswer = map[string]any{"username": "ada", "email": "ada@example.com", "name": "Ada"}

// elicitCall calls a tool and returns the messages of the elicitation
// requests the client answered during the call.
type elicitCall func(ctx context.Context, name string, args map[string]any) (*toolResult, []string, error)

// gatewayElicitation: tools that ask the user, through the gateway,
// which relays the upstream's request to the client of the call: the
// fixtures over stdio and over HTTP, and server-everything.
func gatewayElicitation(ctx context.Context, t *testing.T, r *row, s session, call elicitCall) {
	t.Helper()
	content, _ := json.Marshal(elicitAnswer)
	want := "User response: action=accept, content=" + string(content)
	for _, srv := range []string{"fixtures", "fixtures-http"} {
		msg := "Who is calling " + srv + "?"
		res, asked, err := call(ctx, srv+"_test_elicitation", map[string]any{"message": msg})
		if err != nil || res.IsError || res.text() != want {
			fatalf(t, r, "%s_test_elicitation: %v %+v, want %q", srv, err, res, want)
		}
		// The gateway shows the user which server asks.
		if shown := "[" + srv + "] " + msg; len(asked) != 1 || asked[0] != shown {
			fatalf(t, r, "%s_test_elicitation: the client was asked %q, want once %q", srv, asked, shown)
		}
	}
	// server-everything lists trigger-elicitation-request only to a client
	// (here the gateway) that declares elicitation.
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	if !slices.Contains(names, "everything_trigger-elicitation-request") {
		fatalf(t, r, "server-everything did not list trigger-elicitation-request to the gateway: does its client declare elicitation? %v", names)
	}
	res, asked, err := call(ctx, "everything_trigger-elicitation-request", nil)
	if err != nil || res.IsError || len(asked) != 1 || !strings.Contains(strings.Join(res.Texts, "\n"), "- Name: Ada") {
		fatalf(t, r, "everything_trigger-elicitation-request: %v %+v (asked %q)", err, res, asked)
	}
	r.check("elicitation")
}

// connectOursWith is connectOurs with more client options.
func connectOursWith(ctx context.Context, t *testing.T, tr mcp.Transport, version string, opts mcp.ClientOptions) (*oursSession, error) {
	if version == "default" {
		version = ""
	}
	opts.ProtocolVersion, opts.Logger = version, testLogger(t)
	c := mcp.NewClient(&mcp.Implementation{Name: "interop-mcpgate-client", Version: "1.0.0"}, &opts)
	cs, err := c.Connect(ctx, tr)
	if err != nil {
		return nil, err
	}
	return &oursSession{cs: cs}, nil
}

type stringLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *stringLog) add(s string) {
	l.mu.Lock()
	l.msgs = append(l.msgs, s)
	l.mu.Unlock()
}

func (l *stringLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.msgs
	l.msgs = nil
	return m
}

func oursElicitCall(s *oursSession, asked *stringLog) elicitCall {
	return func(ctx context.Context, name string, args map[string]any) (*toolResult, []string, error) {
		asked.take()
		res, err := s.CallTool(ctx, name, args)
		return res, asked.take(), err
	}
}

func tsElicitCall(s *tsSession) elicitCall {
	return func(ctx context.Context, name string, args map[string]any) (*toolResult, []string, error) {
		if args == nil {
			args = map[string]any{}
		}
		r, err := s.d.do(ctx, map[string]any{"op": "callTool", "name": name, "arguments": args})
		if err != nil {
			return nil, nil, err
		}
		var res struct {
			Content []tsContent
			IsError bool
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return nil, nil, err
		}
		var asked []string
		for _, e := range r.Elicitations {
			asked = append(asked, e.Message)
		}
		return &toolResult{Texts: tsTexts(res.Content), IsError: res.IsError}, asked, nil
	}
}

// TestGateway: one gateway over HTTP with every upstream, used by our
// client (its default, which reaches 2026-07-28, and pinned to
// 2025-11-25) and the TypeScript SDK's; then the TypeScript client with
// the gateway over stdio, as a desktop client starts it.
func TestGateway(t *testing.T) {
	t.Parallel()
	all := []string{"everything", "filesystem", "memory", "fixtures", "fixtures-http"}
	g := writeGatewayConfig(t, all...)
	gw, url := startGateway(t, g)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the gateway's log:\n%s", gw.out)
		}
	})

	// The gateway is up before its upstreams are: wait for all of them
	// once, node's cold starts included, apart from the pairs' bounds.
	startup := time.Now()
	func() {
		ctx := testCtx(t, 60*time.Second)
		s, err := connectOurs(ctx, t, ourHTTPTransport(t, url), "2025-11-25")
		if err != nil {
			t.Fatalf("connecting to the gateway: %v", err)
		}
		defer s.Close()
		if _, err := waitGatewayTools(ctx, s, g); err != nil {
			t.Fatalf("the gateway's upstreams: %v\n%s", err, gw.out)
		}
	}()
	ready := time.Since(startup).Round(100 * time.Millisecond)

	for _, v := range []string{"default", "2025-11-25"} {
		t.Run("ours/http/"+v, func(t *testing.T) {
			r := record(t, "mcpgate client", gatewayServerLabel, transportLabel["http"], v)
			r.note("upstreams ready %v after start", ready)
			ctx := testCtx(t, 60*time.Second)
			// Our client answers elicitation (accept, with elicitAnswer)
			// and sampling (with samplingAnswer), and keeps the log
			// messages it is sent.
			var asked, sampled, logged stringLog
			s, err := connectOursWith(ctx, t, ourHTTPTransport(t, url), v, mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					asked.add(p.Message)
					return &mcp.ElicitResult{Action: "accept", Content: elicitAnswer}, nil
				},
				CreateMessageHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
					b, _ := json.Marshal(p.Messages)
					sampled.add(string(b))
					return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []byte(`{"type":"text","text":"` + samplingAnswer + `"}`), Model: "interop-model"}, nil
				},
				LoggingMessageHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) {
					logged.add(fmt.Sprintf("%s %s %v", p.Level, p.Logger, p.Data))
				},
			})
			if err != nil {
				fatalf(t, r, "connecting: %v", err)
			}
			defer s.Close()
			if v == "default" && s.Negotiated() != perRequestRevision {
				fatalf(t, r, "the default reached %q, want %s: the gateway speaks it", s.Negotiated(), perRequestRevision)
			}
			gatewayScenario(ctx, t, r, s, g)
			// At 2026-07-28 the upstream's questions come back as
			// input_required, which our client answers and retries.
			gatewayElicitation(ctx, t, r, s, oursElicitCall(s, &asked))
			gatewaySampling(ctx, t, r, s, &sampled)
			gatewayOursExtras(ctx, t, r, s, &logged)
			checkPing(ctx, t, r, s)
		})
	}

	d := startTSDriver(t)
	t.Run("ts/http", func(t *testing.T) {
		r := record(t, "TS SDK 1.32.2 client", gatewayServerLabel, transportLabel["http"], "")
		ctx := testCtx(t, 60*time.Second)
		tsGatewayPair(ctx, t, r, d, tsTarget{transport: "http", url: url, elicit: map[string]any{"action": "accept", "content": elicitAnswer}}, g)
	})
	t.Run("ts/stdio", func(t *testing.T) {
		// mcpgate serve --stdio --config: a gateway of its own, started by
		// the TS client, with its own upstreams and files.
		g := writeGatewayConfig(t, all...)
		r := record(t, "TS SDK 1.32.2 client", gatewayServerLabel, transportLabel["stdio"], "")
		ctx := testCtx(t, 90*time.Second) // this pair waits for its gateway's upstreams too
		tsGatewayPair(ctx, t, r, d, tsTarget{transport: "stdio", command: env.mcpgate, args: []string{"serve", "--stdio", "--config", g.config},
			elicit: map[string]any{"action": "accept", "content": elicitAnswer}}, g)
	})
}

func tsGatewayPair(ctx context.Context, t *testing.T, r *row, d *tsDriver, tgt tsTarget, g *gatewaySetup) {
	t.Helper()
	s, err := d.connect(ctx, tgt, "")
	if err != nil {
		fatalf(t, r, "connecting: %v", err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing: %v", err)
		}
		if len(s.clientErrors) > 0 {
			t.Errorf("the TypeScript client reported errors: %q", s.clientErrors)
		}
		for _, n := range s.Notes() {
			r.note("%s", n)
		}
	}()
	gatewayScenario(ctx, t, r, s, g)
	gatewayElicitation(ctx, t, r, s, tsElicitCall(s))
	checkPing(ctx, t, r, s)
}

// samplingAnswer is what our client's model says.
const samplingAnswer = "forty-two"

// gatewaySampling: sampling/createMessage relayed to the client of the
// call, from server-everything (a 2025-11-25 upstream: a request on the
// upstream session) and from the fixtures over stdio and HTTP (2026-07-28
// upstreams: an input request in the call's result).
func gatewaySampling(ctx context.Context, t *testing.T, r *row, s *oursSession, sampled *stringLog) {
	t.Helper()
	for _, tool := range []string{"everything_trigger-sampling-request", "fixtures_test_sampling", "fixtures-http_test_sampling"} {
		sampled.take()
		res, err := s.CallTool(ctx, tool, map[string]any{"prompt": "six times seven?"})
		got := sampled.take()
		if err != nil || res.IsError || !strings.Contains(res.text(), samplingAnswer) {
			fatalf(t, r, "%s: %v %+v", tool, err, res)
		}
		if len(got) != 1 || !strings.Contains(got[0], "six times seven?") {
			fatalf(t, r, "%s: the client's model was asked %q, want once about six times seven", tool, got)
		}
	}
	r.check("sampling")
}

// gatewayOursExtras: what our client checks beyond the common scenario:
// an upstream's log messages reach the client of the call (at the level it
// set; at 2026-07-28 the level travels in each request's _meta), resource
// links and embedded resources come back under their published URIs and
// read through the gateway, and completion/complete reaches the prompt's
// upstream.
func gatewayOursExtras(ctx context.Context, t *testing.T, r *row, s *oursSession, logged *stringLog) {
	t.Helper()
	cctx, cancel := callCtx(ctx)
	defer cancel()
	if err := s.cs.SetLoggingLevel(cctx, mcp.LevelInfo); err != nil {
		fatalf(t, r, "logging/setLevel: %v", err)
	}
	logged.take()
	res, err := s.CallTool(ctx, "fixtures_test_tool_with_logging", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "fixtures_test_tool_with_logging: %v %+v", err, res)
	}
	time.Sleep(100 * time.Millisecond) // notification handlers run apart from the caller
	want := []string{"info fixtures/conformance Tool execution started", "info fixtures/conformance Tool processing data", "info fixtures/conformance Tool execution completed"}
	if got := logged.take(); !slices.Equal(got, want) {
		fatalf(t, r, "the fixtures' log messages through the gateway: %q, want %q", got, want)
	}
	r.check("logging")

	res2, err := s.cs.CallTool(cctx, "everything_get-resource-links", map[string]any{"count": 2})
	if err != nil || res2.IsError {
		fatalf(t, r, "everything_get-resource-links: %v %+v", err, res2)
	}
	var links []string
	for _, c := range res2.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	if !slices.Equal(links, []string{"everything+demo://resource/dynamic/blob/1", "everything+demo://resource/dynamic/text/2"}) {
		fatalf(t, r, "everything_get-resource-links: links %q, want them under everything+", links)
	}
	texts, err := s.ReadResource(ctx, links[1])
	if err != nil || len(texts) != 1 || !strings.HasPrefix(texts[0], "Resource 2: ") {
		fatalf(t, r, "reading the link %s: %v %q", links[1], err, texts)
	}
	res2, err = s.cs.CallTool(cctx, "fixtures_test_embedded_resource", map[string]any{})
	if err != nil || len(res2.Content) != 1 {
		fatalf(t, r, "fixtures_test_embedded_resource: %v %+v", err, res2)
	}
	if e, ok := res2.Content[0].(*mcp.EmbeddedResource); !ok || e.Resource == nil || e.Resource.URI != "fixtures+test://embedded-resource" {
		fatalf(t, r, "fixtures_test_embedded_resource: want the resource as fixtures+test://embedded-resource, got %#v", res2.Content[0])
	}
	r.check("links")

	c, err := s.cs.Complete(cctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "everything_completable-prompt"},
		Argument: mcp.CompleteArgument{Name: "department", Value: "E"}})
	if err != nil || !slices.Equal(c.Completion.Values, []string{"Engineering"}) {
		fatalf(t, r, "completion/complete of everything_completable-prompt: %v %+v", err, c)
	}
	r.check("completion")
}

func shorten(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// --- a fault -------------------------------------------------------------

// TestGatewayUpstreamKilled kills the fixtures' stdio process (SIGKILL)
// while a call to it is in flight: the call must fail with the gateway's
// -32012 (or -32010), the other upstreams (server-memory, the fixtures
// over HTTP, the task tools) must serve on, and the killed upstream's
// tools must come back once the gateway has restarted it.
func TestGatewayUpstreamKilled(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("finds the upstream's process in /proc")
	}
	g := writeGatewayConfig(t, "memory", "fixtures", "fixtures-http")
	gw, url := startGateway(t, g)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the gateway's log:\n%s", gw.out)
		}
	})
	for _, v := range []string{"default", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			r := record(t, "mcpgate client", "mcpgate gateway: fixtures (stdio) SIGKILLed mid-call; memory, fixtures-http, tasks", transportLabel["http"], v)
			ctx := testCtx(t, 60*time.Second)
			// Our client counts the tools/list_changed notifications (at
			// 2026-07-28 it opens subscriptions/listen for them).
			changed := make(chan struct{}, 64)
			s, err := connectOursWith(ctx, t, ourHTTPTransport(t, url), v, mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ClientSession) {
					select {
					case changed <- struct{}{}:
					default:
					}
				},
			})
			if err != nil {
				fatalf(t, r, "connecting: %v", err)
			}
			defer s.Close()
			checkNegotiated(t, r, s)
			if _, err := waitGatewayTools(ctx, s, g); err != nil {
				fatalf(t, r, "%v", err)
			}
			warmUp(ctx, t, r, s, g)
			r.check("tools/list")
			gatewayKill(ctx, t, r, s, gw, changed)
			checkPing(ctx, t, r, s)
		})
	}
}

func gatewayKill(ctx context.Context, t *testing.T, r *row, s *oursSession, gw *proc, changed chan struct{}) {
	t.Helper()
	pids := childProcesses(gw.cmd.Process.Pid, env.fixtures)
	if len(pids) != 1 {
		fatalf(t, r, "the gateway's fixtures processes: %v, want one (warmed up)", pids)
	}
	victim := pids[0]

	// Kill it at the first progress of a call that then waits: the call
	// is in flight upstream.
	for len(changed) > 0 {
		<-changed // what the warm-up brought, if anything
	}
	readyLine := `msg="gateway: upstream ready" upstream=fixtures`
	readyBefore := strings.Count(gw.out.String(), readyLine)
	var killed sync.Once
	start := time.Now()
	_, err := s.call(ctx, "fixtures_interop_slow", map[string]any{"key": uniqueKey(t)}, func(progressEvent) {
		killed.Do(func() {
			if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
				t.Errorf("kill %d: %v", victim, err)
			}
		})
	})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || (rpcErr.Code != codeUpstreamFailed && rpcErr.Code != codeUpstreamUnavailable) {
		fatalf(t, r, "the call whose upstream was killed: want error %d (or %d), got %v", codeUpstreamFailed, codeUpstreamUnavailable, err)
	}
	if d := time.Since(start); d > 3*time.Second {
		fatalf(t, r, "the call whose upstream was killed took %v to fail", d)
	}
	t.Logf("the call failed with %d: %s", rpcErr.Code, rpcErr.Message)
	r.check(strconv.Itoa(int(rpcErr.Code)))

	// The others serve on, at once.
	res, err := s.CallTool(ctx, "memory_read_graph", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "memory_read_graph after the kill: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "fixtures-http_test_simple_text", nil)
	if err != nil || res.IsError || res.text() != "This is a simple text response for testing." {
		fatalf(t, r, "fixtures-http_test_simple_text after the kill: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "tasks_list_tasks", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "tasks_list_tasks after the kill: %v %+v", err, res)
	}
	r.check("others-serve")

	// The gateway restarts the upstream: its tools are listed and answer
	// again, from a new process.
	deadline := time.Now().Add(20 * time.Second)
	var last string
	for {
		names, err := s.ListTools(ctx)
		if err == nil && slices.Contains(names, "fixtures_interop_slow") {
			res, err := s.CallTool(ctx, "fixtures_test_simple_text", nil)
			if err == nil && !res.IsError && res.text() == "This is a simple text response for testing." {
				break
			}
			last = fmt.Sprintf("fixtures_test_simple_text: %v %+v", err, res)
		} else {
			last = fmt.Sprintf("tools/list: %v (fixtures_interop_slow listed: %v)", err, slices.Contains(names, "fixtures_interop_slow"))
		}
		if time.Now().After(deadline) {
			fatalf(t, r, "the killed upstream did not come back in 20 s: %s", last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	back := time.Since(start).Round(10 * time.Millisecond)
	pids = childProcesses(gw.cmd.Process.Pid, env.fixtures)
	if len(pids) != 1 || pids[0] == victim {
		fatalf(t, r, "the fixtures processes after the restart: %v (killed %d)", pids, victim)
	}
	// The client was told the tools changed (withdrawn, then back).
	select {
	case <-changed:
	case <-time.After(3 * time.Second):
		fatalf(t, r, "no notifications/tools/list_changed reached the client while the upstream was withdrawn and restored")
	}
	time.Sleep(100 * time.Millisecond)
	nChanged := 1 + len(changed)
	// The gateway says what happened: the connection lost, the tools
	// withdrawn, the upstream ready again, and the failed call in its one
	// line per request.
	log := gw.out.String()
	if !strings.Contains(log, `msg="gateway: upstream connection lost" upstream=fixtures`) {
		t.Errorf("the gateway's log does not say the fixtures' connection was lost")
	}
	if !strings.Contains(log, `msg="gateway: withdrew the upstream's tools until it recovers" upstream=fixtures`) {
		t.Errorf("the gateway's log does not say the fixtures' tools were withdrawn")
	}
	if strings.Count(log, readyLine) <= readyBefore {
		t.Errorf("the gateway's log does not say the fixtures were ready again")
	}
	if !slices.ContainsFunc(strings.Split(log, "\n"), func(l string) bool {
		return strings.Contains(l, `msg="gateway: request" method=tools/call`) && strings.Contains(l, "tool=fixtures_interop_slow") &&
			strings.Contains(l, fmt.Sprintf("code=%d", rpcErr.Code))
	}) {
		t.Errorf("the gateway's log has no request line for the failed call with code=%d", rpcErr.Code)
	}
	r.check("restarted")
	r.check("list_changed")
	r.note("fixtures back in %v (pid %d → %d), %d tools/list_changed", back, victim, pids[0], nChanged)
}

// childProcesses lists the live processes whose parent is ppid and whose
// command is exe.
func childProcesses(ppid int, exe string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold anything, so read
		// after its last ')'.
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 || f[0] == "Z" || f[1] != strconv.Itoa(ppid) {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if arg0, _, _ := bytes.Cut(cmdline, []byte{0}); string(arg0) == exe {
			pids = append(pids, pid)
		}
	}
	return pids
}
