package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The test binary doubles as the upstream servers: with upstreamEnv set,
// TestMain serves testUpstream over stdio instead of running the tests.
const upstreamEnv = "MCPGATE_TEST_UPSTREAM"

func TestMain(m *testing.M) {
	if path := os.Getenv(catalogEnv); path != "" {
		catalogUpstream(path).ServeStdio(context.Background(), nil)
		os.Exit(0)
	}
	if os.Getenv(statefulEnv) != "" {
		statefulUpstream().ServeStdio(context.Background(), nil)
		os.Exit(0)
	}
	if mode := os.Getenv(hostileEnv); mode != "" {
		runHostile(mode)
		os.Exit(0)
	}
	if os.Getenv(stuckEnv) != "" {
		runStuck()
		os.Exit(0)
	}
	if name := os.Getenv(upstreamEnv); name != "" {
		fmt.Fprintln(os.Stderr, "upstream started pid", os.Getpid())
		testUpstream(name).ServeStdio(context.Background(), nil)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type textIn struct {
	Text string `json:"text"`
}

// testUpstream is a server with a tool of each behaviour the gateway
// must carry: plain, slow (with progress, until cancelled), asking the
// user, changing its own tool list, returning a resource link; a prompt,
// a resource and a template.
func testUpstream(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream-" + name, Version: "1"}, &mcp.ServerOptions{Logging: true,
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionValues{Values: []string{name + "-" + req.Params.Argument.Value}}}, nil
		}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult(name + ": " + in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "The credential it was started with"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult(os.Getenv("UPSTREAM_SECRET")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Its process id"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult(strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Reports progress, then waits to be cancelled"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		req.NotifyProgress(1, 10, "started")
		req.Log(mcp.LevelInfo, "slow", "working")
		select {
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "slow was cancelled")
			return nil, nil, ctx.Err()
		case <-time.After(time.Minute):
			return mcp.TextResult("finished"), nil, nil
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the user's name"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		r, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return mcp.TextResult(fmt.Sprint("hello ", r.Content["name"])), nil, nil
	})
	addInterview(s)
	mcp.AddTool(s, &mcp.Tool{Name: "grow", Description: "Adds a tool"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: "grown", Description: "Added later"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult("grown"), nil, nil
		})
		return mcp.TextResult("ok"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "job", Description: "Runs only as a task, for longer than the gateway's timeout in the tests", Execution: &mcp.ToolExecution{TaskSupport: mcp.TaskSupportRequired}}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		select {
		case <-time.After(1500 * time.Millisecond):
			return mcp.TextResult(name + " did " + in.Text), nil, nil
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "job was cancelled")
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "touch", Description: "Tells its subscribers that a resource changed"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct {
		URI string `json:"uri"`
	}) (*mcp.CallToolResult, any, error) {
		s.ResourceUpdated(in.URI)
		return mcp.TextResult("touched"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "leak", Description: "Writes its arguments to stderr and fails with them in the error"}, func(ctx context.Context, req *mcp.CallToolRequest, in map[string]any) (*mcp.CallToolResult, any, error) {
		fmt.Fprintf(os.Stderr, "leak got %s\n", req.Params.Arguments)
		return nil, nil, jsonrpc.Errorf(-32000, "could not run with %s", req.Params.Arguments).WithData(map[string]any{"arguments": in})
	})
	mcp.AddTool(s, &mcp.Tool{Name: "link", Description: "Returns a resource link"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "mem://a", Name: "a"}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: name + " greets " + req.Params.Arguments["who"]}}}}, nil
	})
	// A prompt and a resource that ask the user first.
	askName := func(ctx context.Context, r *mcp.Request) (string, error) {
		res, err := r.Elicit(ctx, &mcp.ElicitParams{Message: "Your name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return "", err
		}
		return fmt.Sprint(res.Content["name"]), nil
	}
	s.AddPrompt(&mcp.Prompt{Name: "personal", Arguments: []*mcp.PromptArgument{{Name: "topic"}}}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		who, err := askName(ctx, req.Request)
		if err != nil {
			return nil, err
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: name + " asks " + who + " about " + req.Params.Arguments["topic"]}}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "mem://private", Name: "private"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		who, err := askName(ctx, req.Request)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " private to " + who}}}, nil
	})
	s.AddResource(&mcp.Resource{URI: "mem://a", Name: "a"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " a"}}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "item"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " " + req.Params.URI}}}, nil
	})
	return s
}

// stdioServer configures an upstream that is this test binary.
func stdioServer(name string) *configServer {
	return &configServer{Name: name, Command: os.Args[0], Env: map[string]string{upstreamEnv: name}}
}

// httpServer starts an upstream on loopback HTTP and configures it.
func httpServer(t *testing.T, name string) *configServer {
	h := mcphttp.NewHandler(testUpstream(name), nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return &configServer{Name: name, URL: srv.URL + "/mcp"}
}

// logBuffer collects the gateway's log (and the upstreams' stderr).
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type slogLogger = slog.Logger

var slogDiscard = slog.New(slog.DiscardHandler)

// Issue 20: a call that cannot reach its upstream (connection refused)
// takes it down at once, not at the next health check: its tools are
// withdrawn, and a call of one is told the server is unavailable and when
// to retry (-32010 with retryAfterMs), never that the tool is unknown.
// When the server is back on its address, so are its tools.
func TestFailedCallTakesTheUpstreamDown(t *testing.T) {
	var logs logBuffer
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	// A server that ends: its streams end, then the listener closes.
	type server struct {
		h   *mcphttp.Handler
		srv *httptest.Server
	}
	stop := func(s server) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.h.Shutdown(ctx)
		s.srv.Close()
	}
	serve := func(ln net.Listener) server {
		h := mcphttp.NewHandler(testUpstream("beta"), nil)
		srv := httptest.NewUnstartedServer(h)
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		return server{h, srv}
	}
	srv := serve(ln)
	beta := &configServer{Name: "beta", URL: "http://" + addr + "/mcp", ServerOptions: config.ServerOptions{HealthInterval: config.Duration(time.Hour)}}
	g, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, beta)
	if got := callText(t, cs, "beta_echo", map[string]string{"text": "x"}); got != "beta: x" {
		t.Fatalf("beta_echo: %q", got)
	}
	stop(srv)
	if _, err := cs.CallTool(context.Background(), "beta_echo", map[string]string{"text": "x"}); rpcCode(err) != CodeUpstreamFailed {
		t.Fatalf("the call that found beta gone: %v", err)
	}
	waitUntil(t, func() bool { return stateOf(g, "beta").State == StateDown }, "beta to be down after a failed call, long before its health check")
	_, err = cs.CallTool(context.Background(), "beta_echo", map[string]string{"text": "x"})
	var e *jsonrpc.Error
	// Down, or already starting again: the supervisor's first retry comes
	// a backoff (1 s here) after the failure, and a slow machine may reach
	// this call after it. Either way the server is unavailable for now.
	if !errors.As(err, &e) || e.Code != CodeUpstreamUnavailable || !strings.Contains(string(e.Data), `"retryAfterMs"`) ||
		!strings.Contains(string(e.Data), `"state":"down"`) && !strings.Contains(string(e.Data), `"state":"starting"`) {
		t.Fatalf("a call of a down server's tool: %v %s, want -32010 with retryAfterMs and the state (down or starting)", err, dataOf(e))
	}
	if _, err := cs.CallTool(context.Background(), "beta_nosuchtool", nil); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("a tool never published: %v, want -32602", err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	}
	srv = serve(ln)
	defer stop(srv)
	waitUntil(t, func() bool {
		res, err := cs.CallTool(context.Background(), "beta_echo", map[string]string{"text": "y"})
		return err == nil && !res.IsError
	}, "beta's tools to come back")
}

func dataOf(e *jsonrpc.Error) string {
	if e == nil {
		return ""
	}
	return string(e.Data)
}

// Issue 20: a stdio server that fails at start is started once per
// attempt (one that closes on the first attempt's revision probe is
// asked initialize first on the next attempt, not started again in the
// same one), and the error names what happened, with no library API in
// it. A command that
// is not there is not started at all: the error names the PATH searched.
func TestFailingStdioServerStartsOncePerAttempt(t *testing.T) {
	var logs logBuffer
	starts := filepath.Join(t.TempDir(), "starts")
	failing := &configServer{Name: "failing", Command: "sh", Args: []string{"-c", "echo started >> " + starts + "; echo boom-at-start >&2; exit 3"}}
	missing := &configServer{Name: "missing", Command: "no-such-mcp-server-x"}
	g := runGateway(t, &logs, failing, missing)
	retrying := `gateway: upstream unavailable; retrying" upstream=failing`
	waitUntil(t, func() bool { return strings.Count(logs.String(), retrying) >= 4 }, "four attempts")
	b, _ := os.ReadFile(starts)
	out := logs.String()
	// One start per backoff step, and one more in the first step, whose
	// revision probe the server closed (asked initialize at once after).
	steps := strings.Count(out, retrying)
	n := strings.Count(string(b), "started")
	if n > steps+2 { // the step under way may have started it too
		t.Errorf("started %d times in %d backoff steps", n, steps)
	}
	if lines := strings.Count(out, `msg="mcp: server stderr" upstream=failing`); lines != n {
		t.Errorf("%d stderr lines logged for %d starts", lines, n)
	}
	st := stateOf(g, "failing")
	if !strings.Contains(st.Error, "exit status 3") || !strings.Contains(st.Error, "boom-at-start") || strings.Contains(st.Error, "ClientOptions") {
		t.Errorf("the failing server's error: %q", st.Error)
	}
	if e := stateOf(g, "missing").Error; !strings.Contains(e, `"no-such-mcp-server-x" not found in PATH`) {
		t.Errorf("the missing command's error: %q", e)
	}
}

// Issue 20: an upstream that forgets the gateway's session (it restarted,
// or expired the session) answers 404; the gateway's client initializes
// a new session and the call goes through, the client never seeing the
// upstream's session error (the library's client re-initializes on
// mcp.ErrSessionNotFound: a 404 means the request was not run, so it is
// always safe to send again).
func TestUpstreamSessionLossIsTransparent(t *testing.T) {
	var logs logBuffer
	var current atomic.Pointer[mcphttp.Handler]
	current.Store(mcphttp.NewHandler(testUpstream("beta"), nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { current.Load().ServeHTTP(w, r) }))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		current.Load().Shutdown(ctx)
		srv.Close()
	})
	beta := &configServer{Name: "beta", URL: srv.URL + "/mcp", ServerOptions: config.ServerOptions{ProtocolVersion: "2025-11-25"}}
	_, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, beta)
	callText(t, cs, "beta_echo", map[string]string{"text": "before"})
	// The upstream restarts: a new handler that knows no session.
	old := current.Swap(mcphttp.NewHandler(testUpstream("beta"), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	old.Shutdown(ctx)
	cancel()
	for i := range 3 {
		if got := callText(t, cs, "beta_echo", map[string]string{"text": fmt.Sprint("after ", i)}); got != fmt.Sprint("beta: after ", i) {
			t.Errorf("call %d after the upstream lost the session: %q", i, got)
		}
	}
}

// Issue 21, point 4: a command server that fails to start the same way
// again and again is marked failed, with the reason, and not started
// again until an operator retries it (Retry, POST /admin/retry).
func TestBrokenServerFailsUntilRetried(t *testing.T) {
	var logs logBuffer
	starts := filepath.Join(t.TempDir(), "starts")
	broken := &configServer{Name: "broken", Command: "sh", Args: []string{"-c", "echo started >> " + starts + "; echo Error: Cannot find module x >&2; exit 1"}}
	g := runGateway(t, &logs, broken)
	waitUntil(t, func() bool { return stateOf(g, "broken").State == StateFailed }, "broken to be failed; log:\n%s", &logs)
	st := stateOf(g, "broken")
	if !strings.Contains(st.Error, "Cannot find module") {
		t.Errorf("the failed server's reason: %q", st.Error)
	}
	count := func() int {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "started")
	}
	before := count()
	if before < maxSameFailures || before > maxSameFailures+1 {
		t.Errorf("started %d times before failing, want %d", before, maxSameFailures)
	}
	if !g.Retry("broken") || g.Retry("nosuch") {
		t.Fatal("Retry's answers")
	}
	waitUntil(t, func() bool { return count() > before }, "a start after the retry")
}
