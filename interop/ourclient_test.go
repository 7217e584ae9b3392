package interop

// Our client with other servers: the reference servers of the TypeScript
// SDK (server-everything, over stdio and Streamable HTTP; filesystem and
// memory over stdio) and small servers on the two Go SDKs (peers/), at
// every revision our client can offer.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// serverUnderTest is a peer server and how to reach it.
type serverUnderTest struct {
	name string
	// stdio returns the command line (and extra environment) of a fresh
	// server; nil if the server has no stdio.
	stdio func(t *testing.T) (cmd string, args []string, env []string)
	// http starts the server once for the whole test and returns its URL;
	// nil if it has no HTTP.
	http func(t *testing.T) string
	// sse, likewise, for the legacy HTTP+SSE transport: our client's
	// HTTP transport falls back to it when the first POST is refused.
	sse      func(t *testing.T) string
	scenario func(ctx context.Context, t *testing.T, r *row, s session)
	// defaultWants is the revision our client's default (a server/discover
	// probe) must reach, where the server is known to speak 2026-07-28;
	// "" checks nothing.
	defaultWants string
}

func ourStdioTransport(t *testing.T, name string, args, extraEnv []string) mcp.Transport {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	return &mcp.CommandTransport{Command: cmd, Logger: testLogger(t), TerminateTimeout: time.Second}
}

// runWithOurClient runs our client against s over each transport it has,
// at each revision.
func runWithOurClient(t *testing.T, s serverUnderTest) {
	type tr struct {
		name     string
		versions []string
		connect  func(ctx context.Context, t *testing.T, v string) (session, error)
	}
	var trs []tr
	// Each pinned revision, then the client's default: a server/discover
	// probe, 2026-07-28 if the server speaks it, else initialize.
	withDefault := append(slices.Clone(revisions), "default")
	if s.stdio != nil {
		trs = append(trs, tr{"stdio", withDefault, func(ctx context.Context, t *testing.T, v string) (session, error) {
			name, args, env := s.stdio(t)
			return connectOurs(ctx, t, ourStdioTransport(t, name, args, env), v)
		}})
	}
	if s.http != nil {
		url := s.http(t)
		trs = append(trs, tr{"http", withDefault, func(ctx context.Context, t *testing.T, v string) (session, error) {
			return connectOurs(ctx, t, ourHTTPTransport(t, url), v)
		}})
	}
	if s.sse != nil {
		url := s.sse(t)
		trs = append(trs, tr{"sse", []string{"2024-11-05"}, func(ctx context.Context, t *testing.T, v string) (session, error) {
			return connectOurs(ctx, t, ourHTTPTransport(t, url), v)
		}})
	}
	for _, x := range trs {
		for _, v := range x.versions {
			t.Run(x.name+"/"+v, func(t *testing.T) {
				r := record(t, "mcpgate client", s.name, transportLabel[x.name], v)
				ctx := testCtx(t, 60*time.Second)
				sess, err := x.connect(ctx, t, v)
				if err != nil {
					fatalf(t, r, "connecting: %v", err)
				}
				defer func() {
					if err := sess.Close(); err != nil {
						t.Errorf("closing: %v", err)
					}
				}()
				checkNegotiated(t, r, sess)
				if v == "default" && s.defaultWants != "" && sess.Negotiated() != s.defaultWants {
					fatalf(t, r, "the default reached %q, want %s", sess.Negotiated(), s.defaultWants)
				}
				s.scenario(ctx, t, r, sess)
				checkPing(ctx, t, r, sess)
			})
		}
	}
}

func nodeServer(pkg string, args ...string) (string, []string) {
	return env.node, append([]string{npmBin(pkg, "dist/index.js")}, args...)
}

// --- server-everything ---------------------------------------------------

func TestEverythingServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, serverUnderTest{
		name: "server-everything 2026.8.31 (TS SDK 1.32.2)",
		stdio: func(t *testing.T) (string, []string, []string) {
			name, args := nodeServer("@modelcontextprotocol/server-everything", "stdio")
			return name, args, nil
		},
		http: func(t *testing.T) string {
			return startEverything(t, "streamableHttp", `listening on port \d+`) + "/mcp"
		},
		sse: func(t *testing.T) string {
			return startEverything(t, "sse", `running on port \d+`) + "/sse"
		},
		scenario: everythingScenario,
	})
}

// startEverything runs server-everything in an HTTP mode and returns
// its base URL. It listens on PORT (all interfaces: it takes no host),
// which we pick free on loopback and connect to there; it is retried if
// taken meanwhile.
func startEverything(t *testing.T, mode, ready string) string {
	name, args := nodeServer("@modelcontextprotocol/server-everything", mode)
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatal(err)
		}
		p, err := startProc(name, args, []string{"PORT=" + itoa(port)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = p.out.waitFor(regexp.MustCompile(ready), p.exited, 20*time.Second)
		if err == nil {
			t.Cleanup(p.stop)
			return "http://127.0.0.1:" + itoa(port)
		}
		p.stop()
		if attempt == 2 || !strings.Contains(p.out.String(), "in use") {
			t.Fatalf("server-everything (%s): %v", mode, err)
		}
	}
}

func everythingScenario(ctx context.Context, t *testing.T, r *row, s session) {
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation"} {
		if !slices.Contains(names, want) {
			fatalf(t, r, "tools/list lacks %s: %v", want, names)
		}
	}
	r.check("tools/list")
	res, err := s.CallTool(ctx, "echo", map[string]any{"message": "héllo ✓"})
	if err != nil || res.IsError || res.text() != "Echo: héllo ✓" {
		fatalf(t, r, "echo: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "get-sum", map[string]any{"a": 2, "b": 3.5})
	if err != nil || res.IsError || !strings.Contains(res.text(), "5.5") {
		fatalf(t, r, "get-sum: %v %+v", err, res)
	}
	// Arguments the tool's schema refuses: an error result or a protocol
	// error, either way an answer.
	res, err = s.CallTool(ctx, "get-sum", map[string]any{"a": "two"})
	if err == nil && !res.IsError {
		fatalf(t, r, "get-sum with a string: want an error, got %+v", res)
	}
	r.check("tools/call")
	res, prog, err := s.CallToolProgress(ctx, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3})
	if err != nil || res.IsError {
		fatalf(t, r, "trigger-long-running-operation: %v %+v", err, res)
	}
	checkProgress(t, r, prog, []float64{1, 2, 3}, 3)
	r.check("progress")
	texts, err := s.ReadResource(ctx, "demo://resource/dynamic/text/7")
	if err != nil || len(texts) != 1 || texts[0] == "" {
		fatalf(t, r, "resources/read: %v %q", err, texts)
	}
	r.check("resources/read")
	texts, err = s.GetPrompt(ctx, "simple-prompt", nil)
	if err != nil || len(texts) != 1 || texts[0] != "This is a simple prompt without arguments." {
		fatalf(t, r, "prompts/get: %v %q", err, texts)
	}
	r.check("prompts/get")
	// The tool ignores cancellation (it runs its steps to the end, sending
	// progress for a call we gave up): we check our side, that the call
	// ends at once and the session goes on undisturbed by the late
	// progress notifications.
	cctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	start := time.Now()
	if err := s.CancelAtFirstProgress(cctx, "trigger-long-running-operation", map[string]any{"duration": 2, "steps": 20}); err != nil {
		fatalf(t, r, "cancelling: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		fatalf(t, r, "the cancelled call took %v to return", d)
	}
	time.Sleep(300 * time.Millisecond) // let late progress arrive
	if res, err := s.CallTool(ctx, "echo", map[string]any{"message": "after"}); err != nil || res.text() != "Echo: after" {
		fatalf(t, r, "echo after a cancellation: %v %+v", err, res)
	}
	r.check("cancel(client side)")
}

// --- server-filesystem ---------------------------------------------------

func TestFilesystemServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, serverUnderTest{
		name: "server-filesystem 2026.8.31",
		stdio: func(t *testing.T) (string, []string, []string) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello from interop\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			name, args := nodeServer("@modelcontextprotocol/server-filesystem", dir)
			return name, args, nil
		},
		scenario: filesystemScenario,
	})
}

func filesystemScenario(ctx context.Context, t *testing.T, r *row, s session) {
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	for _, want := range []string{"read_text_file", "write_file", "list_directory", "list_allowed_directories"} {
		if !slices.Contains(names, want) {
			fatalf(t, r, "tools/list lacks %s: %v", want, names)
		}
	}
	r.check("tools/list")
	res, err := s.CallTool(ctx, "list_allowed_directories", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "list_allowed_directories: %v %+v", err, res)
	}
	// The server was given one directory: the last line names it.
	var dir string
	for _, line := range strings.Split(strings.TrimSpace(res.text()), "\n") {
		dir = strings.TrimSpace(line)
	}
	if !filepath.IsAbs(dir) {
		fatalf(t, r, "list_allowed_directories: %q", res.text())
	}
	res, err = s.CallTool(ctx, "read_text_file", map[string]any{"path": filepath.Join(dir, "hello.txt")})
	if err != nil || res.IsError || !strings.Contains(res.text(), "hello from interop") {
		fatalf(t, r, "read_text_file: %v %+v", err, res)
	}
	body := "written by mcpgate: ünïcödé\nline 2\n"
	res, err = s.CallTool(ctx, "write_file", map[string]any{"path": filepath.Join(dir, "new.txt"), "content": body})
	if err != nil || res.IsError {
		fatalf(t, r, "write_file: %v %+v", err, res)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || string(got) != body {
		fatalf(t, r, "the file written: %q %v", got, err)
	}
	res, err = s.CallTool(ctx, "list_directory", map[string]any{"path": dir})
	if err != nil || res.IsError || !strings.Contains(res.text(), "[FILE] new.txt") {
		fatalf(t, r, "list_directory: %v %+v", err, res)
	}
	// Outside the allowed directory: the tool refuses, as a result.
	res, err = s.CallTool(ctx, "read_text_file", map[string]any{"path": "/etc/hostname"})
	if err != nil || !res.IsError {
		fatalf(t, r, "reading outside the allowed directory: want an error result, got %v %+v", err, res)
	}
	r.check("tools/call")
}

// --- server-memory -------------------------------------------------------

func TestMemoryServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, serverUnderTest{
		name: "server-memory 2026.8.31",
		stdio: func(t *testing.T) (string, []string, []string) {
			name, args := nodeServer("@modelcontextprotocol/server-memory")
			return name, args, []string{"MEMORY_FILE_PATH=" + filepath.Join(t.TempDir(), "memory.jsonl")}
		},
		scenario: memoryScenario,
	})
}

func memoryScenario(ctx context.Context, t *testing.T, r *row, s session) {
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	for _, want := range []string{"create_entities", "create_relations", "read_graph", "search_nodes"} {
		if !slices.Contains(names, want) {
			fatalf(t, r, "tools/list lacks %s: %v", want, names)
		}
	}
	r.check("tools/list")
	res, err := s.CallTool(ctx, "create_entities", map[string]any{"entities": []map[string]any{
		{"name": "Ada Lovelace", "entityType": "person", "observations": []string{"wrote the first program"}},
		{"name": "Analytical Engine", "entityType": "machine", "observations": []string{"designed by Babbage"}},
	}})
	if err != nil || res.IsError {
		fatalf(t, r, "create_entities: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "create_relations", map[string]any{"relations": []map[string]any{
		{"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"},
	}})
	if err != nil || res.IsError {
		fatalf(t, r, "create_relations: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "search_nodes", map[string]any{"query": "first program"})
	if err != nil || res.IsError || !strings.Contains(res.text(), "Ada Lovelace") {
		fatalf(t, r, "search_nodes: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "read_graph", nil)
	if err != nil || res.IsError || !strings.Contains(res.text(), "programmed") {
		fatalf(t, r, "read_graph: %v %+v", err, res)
	}
	r.check("tools/call")
}

// --- servers on the Go SDKs ----------------------------------------------

func goPeer(name, bin, greeting string) serverUnderTest {
	return serverUnderTest{
		name: name,
		stdio: func(t *testing.T) (string, []string, []string) {
			return bin, []string{"-stdio"}, nil
		},
		http: func(t *testing.T) string {
			_, url := startHTTPServer(t, bin, []string{"-addr", "127.0.0.1:0"}, nil, regexp.MustCompile(`listening on (http://\S+)`))
			return url
		},
		scenario: func(ctx context.Context, t *testing.T, r *row, s session) {
			peerScenario(ctx, t, r, s, greeting, false)
		},
	}
}

func TestGoSDKServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, goPeer("Go SDK v1.8.0 server", env.gosdkPeer, "hello from gosdk"))
}

// TestGoSDKStatelessServer: the Go SDK's handler with
// StreamableHTTPOptions{Stateless: true}, which is how it serves
// 2026-07-28; our client's default should reach that revision.
func TestGoSDKStatelessServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, serverUnderTest{
		name: "Go SDK v1.8.0 server (stateless HTTP)",
		http: func(t *testing.T) string {
			_, url := startHTTPServer(t, env.gosdkPeer, []string{"-addr", "127.0.0.1:0", "-stateless"}, nil, regexp.MustCompile(`listening on (http://\S+)`))
			return url
		},
		scenario: func(ctx context.Context, t *testing.T, r *row, s session) {
			peerScenario(ctx, t, r, s, "hello from gosdk", s.Negotiated() != perRequestRevision)
		},
		defaultWants: perRequestRevision,
	})
}

func TestMCPGoServer(t *testing.T) {
	t.Parallel()
	runWithOurClient(t, goPeer("mcp-go v1.2.1 server", env.mcpgoPeer, "hello from mcpgo"))
}

// TestTypeScriptV2Server: node/ts-v2-server.mjs, the peers' surface on the
// TypeScript SDK v2 server (@modelcontextprotocol/server), served in both
// eras from one factory: serveStdio over stdio, createMcpHandler over HTTP
// (2026-07-28, and 2025 revisions through its stateless fallback, a fresh
// server for each request).
func TestTypeScriptV2Server(t *testing.T) {
	t.Parallel()
	script := filepath.Join(env.dir, "node", "ts-v2-server.mjs")
	runWithOurClient(t, serverUnderTest{
		name: "TS SDK v2 2.4.0 server (serveStdio, createMcpHandler)",
		stdio: func(t *testing.T) (string, []string, []string) {
			return env.node, []string{script, "--stdio"}, nil
		},
		http: func(t *testing.T) string {
			_, url := startHTTPServer(t, env.node, []string{script, "--addr", "127.0.0.1:0"}, nil, regexp.MustCompile(`listening on (http://\S+)`))
			return url
		},
		scenario: func(ctx context.Context, t *testing.T, r *row, s session) {
			stateless := r.Transport == transportLabel["http"] && s.Negotiated() != perRequestRevision
			peerScenario(ctx, t, r, s, "hello from ts-v2", stateless)
		},
		defaultWants: perRequestRevision,
	})
}

// peerScenario is a session with a peers/ server: tools (one failing),
// progress, a resource, a prompt, and a cancellation its handler must see.
//
// statelessLegacy is a session at a 2025 revision with a server that
// serves each HTTP request with a fresh instance (the Go SDK's Stateless
// option, the TS v2 SDK's legacy fallback): no instance saw initialize, so
// the server cannot name the client, and a notifications/cancelled, a POST
// of its own, reaches an instance that is not running the call. There the
// cancellation is checked on our side (the call ends at once, the session
// goes on), and the matrix says whether the handler saw it anyway.
func peerScenario(ctx context.Context, t *testing.T, r *row, s session, greeting string, statelessLegacy bool) {
	names, err := s.ListTools(ctx)
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	for _, want := range []string{"echo", "count", "slow", "cancel_state", "session"} {
		if !slices.Contains(names, want) {
			fatalf(t, r, "tools/list lacks %s: %v", want, names)
		}
	}
	r.check("tools/list")
	res, err := s.CallTool(ctx, "echo", map[string]any{"text": "héllo ✓ \"quoted\"\n"})
	if err != nil || res.IsError || res.text() != "héllo ✓ \"quoted\"\n" {
		fatalf(t, r, "echo: %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "fail", nil)
	if err != nil || !res.IsError {
		fatalf(t, r, "fail: want an isError result, got %v %+v", err, res)
	}
	res, err = s.CallTool(ctx, "session", nil)
	if err != nil || res.IsError {
		fatalf(t, r, "session: %v %+v", err, res)
	}
	var info struct{ Offered, ClientName string }
	if err := res.decode(&info); err != nil {
		t.Fatal(err)
	}
	// With the default the client offers what it negotiated: 2026-07-28
	// in _meta, or the newest legacy revision in initialize.
	want := r.Offered
	if want == "default" {
		want = s.Negotiated()
	}
	wantName := "interop-mcpgate-client"
	if statelessLegacy && info.ClientName == "" {
		wantName = "" // no instance that saw initialize is left to ask
	}
	if info.ClientName != wantName || (info.Offered != "" && info.Offered != want) {
		fatalf(t, r, "the server saw %+v, want our client offering %s", info, r.Offered)
	}
	r.check("tools/call")
	res, prog, err := s.CallToolProgress(ctx, "count", map[string]any{"steps": 3})
	if err != nil || res.IsError {
		fatalf(t, r, "count: %v %+v", err, res)
	}
	checkProgress(t, r, prog, []float64{1, 2, 3}, 3)
	r.check("progress")
	texts, err := s.ReadResource(ctx, "interop://greeting")
	if err != nil || len(texts) != 1 || texts[0] != greeting {
		fatalf(t, r, "resources/read: %v %q", err, texts)
	}
	r.check("resources/read")
	texts, err = s.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil || len(texts) != 1 || texts[0] != "Say hello to Ada" {
		fatalf(t, r, "prompts/get: %v %q", err, texts)
	}
	r.check("prompts/get")
	if statelessLegacy {
		checkCancelStateless(ctx, t, r, s)
		return
	}
	checkCancel(ctx, t, r, s, "slow", "cancel_state")
}

// checkCancelStateless cancels a slow call at its first progress
// notification where the server may not be able to tell the handler (see
// peerScenario): the call must end at once and the session go on; the
// check is "cancel" if the handler was cancelled all the same, else
// "cancel(client side)" with a note.
func checkCancelStateless(ctx context.Context, t *testing.T, r *row, s session) {
	t.Helper()
	key := uniqueKey(t)
	cctx, cancel := context.WithTimeout(ctx, waitTimeout)
	defer cancel()
	start := time.Now()
	if err := s.CancelAtFirstProgress(cctx, "slow", map[string]any{"key": key}); err != nil {
		fatalf(t, r, "cancelling slow: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		fatalf(t, r, "the cancelled call took %v to return", d)
	}
	res, err := s.CallTool(ctx, "cancel_state", map[string]any{"key": key, "waitMs": 1000})
	if err != nil || res.IsError {
		fatalf(t, r, "cancel_state after a cancellation: %v %s", err, res.text())
	}
	var st struct{ State, Cause string }
	if err := res.decode(&st); err != nil {
		t.Fatal(err)
	}
	switch st.State {
	case "cancelled":
		r.check("cancel")
	case "running":
		r.check("cancel(client side)")
		r.note("stateless HTTP at a 2025 revision: the server's handler did not see the cancellation")
	default:
		fatalf(t, r, "slow after a cancellation: state %q (%s)", st.State, st.Cause)
	}
}
