package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

type configServer = config.Server

const waitFor = 20 * time.Second // a bound on a hang, never a timing assertion

// startGateway runs a gateway over the servers and connects a client to
// it over a pipe, once every upstream is ready.
func startGateway(t *testing.T, logs *logBuffer, copts *mcp.ClientOptions, servers ...*configServer) (*Gateway, *mcp.ClientSession) {
	t.Helper()
	g := runGateway(t, logs, servers...)
	waitState(t, g, StateReady, StateIdle)
	return g, connectTo(t, g.Server(), copts)
}

// runGateway starts a gateway over the servers, stopped with the test.
func runGateway(t *testing.T, logs *logBuffer, servers ...*configServer) *Gateway {
	t.Helper()
	cfg := &config.Config{Servers: map[string]*config.Server{}}
	for _, s := range servers {
		cfg.Servers[s.Name] = s
	}
	return runConfigured(t, cfg, &Options{Logger: logs.logger()})
}

// runConfigured starts a gateway for cfg, stopped with the test (after
// the cleanups registered later, such as its clients').
func runConfigured(t *testing.T, cfg *config.Config, opts *Options) *Gateway {
	t.Helper()
	g, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.Start(ctx)
	t.Cleanup(func() {
		cancel()
		g.Close()
	})
	return g
}

// connectTo serves s on one end of a pipe and connects a client.
func connectTo(t *testing.T, s *mcp.Server, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, s, "", copts)
}

// connectAs is connectTo for a local user acting for tenant (none if "").
func connectAs(t *testing.T, s *mcp.Server, tenant string, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	if tenant != "" {
		ctx = WithTenant(ctx, tenant)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeConn(ctx, mcp.NewStdioConn(sr, sw, 0), &mcp.ServeOptions{ShutdownTimeout: time.Second})
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "downstream", Version: "1"}, copts).Connect(context.Background(), mcp.ConnTransport{Conn: mcp.NewStdioConn(cr, cw, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sr.Close()
		<-done
	})
	return cs
}

// waitState waits until every upstream is in one of the states.
func waitState(t *testing.T, g *Gateway, states ...State) {
	t.Helper()
	waitUntil(t, func() bool {
		for _, st := range g.Status() {
			if !slices.Contains(states, st.State) {
				return false
			}
		}
		return true
	}, "upstreams %v", states)
}

func waitUntil(t *testing.T, f func() bool, what string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+what, args...)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// callText calls a tool and returns its first text block.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), tool, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) == 0 {
		t.Fatalf("empty result")
	}
	if c, ok := res.Content[0].(*mcp.TextContent); ok {
		return c.Text
	}
	t.Fatalf("content %T", res.Content[0])
	return ""
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// Two stdio upstreams and one over HTTP, merged: every name prefixed,
// sorted, routed back to its server, resources and prompts too; a
// 2026-07-28 client and a session-era one served at once.
func TestGatewayAggregates(t *testing.T) {
	var logs logBuffer
	g, cs := startGateway(t, &logs, nil, stdioServer("alpha"), stdioServer("beta"), httpServer(t, "gamma"))
	names := toolNames(t, cs)
	for _, want := range []string{"alpha_echo", "beta_echo", "gamma_echo", "gamma_slow"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("tools not sorted: %v", names)
	}
	sessionEra := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-06-18"})
	if cs.ProtocolVersion() != mcp.Version20260728 || sessionEra.ProtocolVersion() != "2025-06-18" {
		t.Errorf("downstream revisions %s and %s", cs.ProtocolVersion(), sessionEra.ProtocolVersion())
	}
	for _, s := range []string{"alpha", "beta", "gamma"} {
		for _, c := range []*mcp.ClientSession{cs, sessionEra} {
			if got := callText(t, c, s+"_echo", map[string]string{"text": "hi"}); got != s+": hi" {
				t.Errorf("%s_echo: %q", s, got)
			}
		}
	}
	// Invalid arguments are the upstream's to judge; unknown tools ours.
	res, err := cs.CallTool(context.Background(), "alpha_echo", map[string]any{"text": 3})
	if err != nil || !res.IsError {
		t.Errorf("bad arguments: %+v %v", res, err)
	}
	if _, err := cs.CallTool(context.Background(), "delta_echo", nil); rpcCode(err) != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v", err)
	}

	p, err := cs.GetPrompt(context.Background(), "beta_greet", map[string]string{"who": "ada"})
	if err != nil || p.Messages[0].Content.(*mcp.TextContent).Text != "beta greets ada" {
		t.Errorf("prompt: %+v %v", p, err)
	}
	r, err := sessionEra.ReadResource(context.Background(), "gamma+mem://a")
	if err != nil || r.Contents[0].Text != "gamma a" || r.Contents[0].URI != "gamma+mem://a" {
		t.Errorf("resource: %+v %v", r, err)
	}
	r, err = cs.ReadResource(context.Background(), "alpha+mem://items/7")
	if err != nil || r.Contents[0].Text != "alpha mem://items/7" {
		t.Errorf("template: %+v %v", r, err)
	}
	if _, err := cs.ReadResource(context.Background(), "nobody+mem://a"); err == nil {
		t.Error("a read for no server succeeded")
	}
	res, err = cs.CallTool(context.Background(), "beta_link", nil)
	if err != nil || res.Content[0].(*mcp.ResourceLink).URI != "beta+mem://a" {
		t.Errorf("resource link: %+v %v", res, err)
	}
	c, err := sessionEra.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha_greet"}, Argument: mcp.CompleteArgument{Name: "who", Value: "x"}})
	if err != nil || len(c.Completion.Values) != 1 || c.Completion.Values[0] != "alpha-x" {
		t.Errorf("completion: %+v %v", c, err)
	}
}

// Progress and log messages come back to the caller; a cancelled call is
// cancelled upstream; what the upstream asks the user reaches the caller
// and its answer goes back.
func TestGatewayRelays(t *testing.T) {
	var logs logBuffer
	var progress, logged atomic.Int32
	_, cs := startGateway(t, &logs, &mcp.ClientOptions{
		ProtocolVersion: "2025-11-25",
		ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
		LoggingMessageHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) { logged.Add(1) },
	}, stdioServer("alpha"), httpServer(t, "gamma"))
	if err := cs.SetLoggingLevel(context.Background(), mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"alpha", "gamma"} {
		if got := callText(t, cs, s+"_ask", nil); got != "hello ada" {
			t.Errorf("%s_ask: %q", s, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ctx = mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
		progress.Add(1)
		cancel()
	})
	if _, err := cs.CallTool(ctx, "alpha_slow", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "slow was cancelled") }, "the upstream's handler to be cancelled")
	if progress.Load() == 0 {
		t.Error("no progress relayed")
	}
	waitUntil(t, func() bool { return logged.Load() > 0 }, "a relayed log message")
}

// An upstream's list_changed refreshes the gateway's list, and the
// clients are told.
func TestGatewayListChanged(t *testing.T) {
	var logs logBuffer
	changed := make(chan struct{}, 4)
	_, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25",
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) { changed <- struct{}{} },
	}, stdioServer("alpha"))
	callText(t, cs, "alpha_grow", nil)
	select {
	case <-changed:
	case <-time.After(waitFor):
		t.Fatal("no list_changed")
	}
	waitUntil(t, func() bool { return slices.Contains(toolNames(t, cs), "alpha_grown") }, "alpha_grown")
	if got := callText(t, cs, "alpha_grown", nil); got != "grown" {
		t.Errorf("grown: %q", got)
	}
}

// An upstream killed with SIGKILL mid-call: the call fails with the
// gateway's code, the other upstream keeps serving, the dead one's tools
// are withdrawn, and they return when it has been restarted.
func TestGatewayUpstreamKilled(t *testing.T) {
	var logs logBuffer
	changed := make(chan struct{}, 16)
	g, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25",
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	}, stdioServer("alpha"), stdioServer("beta"))
	pid, err := strconv.Atoi(callText(t, cs, "alpha_pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		ctx := mcp.WithProgress(context.Background(), func(*mcp.ProgressNotificationParams) { close(started) })
		_, err := cs.CallTool(ctx, "alpha_slow", nil)
		errc <- err
	}()
	<-started
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; rpcCode(err) != CodeUpstreamFailed {
		t.Errorf("the call in flight: %v, want code %d", err, CodeUpstreamFailed)
	}
	if got := callText(t, cs, "beta_echo", map[string]string{"text": "still"}); got != "beta: still" {
		t.Errorf("beta meanwhile: %q", got)
	}
	// Withdrawn (the client is told), then back after the restart.
	waitUntil(t, func() bool {
		names := toolNames(t, cs)
		return slices.Contains(names, "alpha_echo") && !slices.Contains(names, "") && len(changed) > 0
	}, "alpha's tools to come back")
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "back"}); got != "alpha: back" {
		t.Errorf("alpha after restart: %q", got)
	}
	newPid, _ := strconv.Atoi(callText(t, cs, "alpha_pid", nil))
	if newPid == pid {
		t.Error("the same process answered after SIGKILL")
	}
	if !strings.Contains(logs.String(), "upstream connection lost") {
		t.Error("the loss was not logged")
	}
	_ = g
}

// A hanging upstream: the call fails with the timeout code, and the
// upstream is told to cancel.
func TestGatewayTimeout(t *testing.T) {
	var logs logBuffer
	s := stdioServer("alpha")
	s.Timeout = config.Duration(300 * time.Millisecond)
	s.Start = "eager"
	_, cs := startGateway(t, &logs, nil, s)
	if _, err := cs.CallTool(context.Background(), "alpha_slow", nil); rpcCode(err) != CodeUpstreamTimeout {
		t.Errorf("hanging call: %v, want code %d", err, CodeUpstreamTimeout)
	}
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "slow was cancelled") }, "the upstream to be told")
}

// A lazy stdio upstream is started to learn its tools, stopped, and
// started again by the first call; an idle one is stopped again.
func TestGatewayLazyAndIdle(t *testing.T) {
	var logs logBuffer
	s := stdioServer("alpha")
	s.Start = "lazy"
	s.IdleTimeout = config.Duration(time.Second)
	g, cs := startGateway(t, &logs, nil, s)
	waitState(t, g, StateIdle)
	if !slices.Contains(toolNames(t, cs), "alpha_echo") {
		t.Fatal("an idle upstream's tools are not listed")
	}
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "wake"}); got != "alpha: wake" {
		t.Errorf("%q", got)
	}
	waitUntil(t, func() bool { return strings.Count(logs.String(), "upstream started pid") >= 2 }, "a second start")
	waitState(t, g, StateIdle)
}

// A server that cannot start leaves the others serving.
func TestGatewayFailOpen(t *testing.T) {
	var logs logBuffer
	bad := &configServer{Name: "broken", Command: "/nonexistent/mcp-server"}
	cfg := &config.Config{Servers: map[string]*config.Server{"broken": bad, "alpha": stdioServer("alpha")}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	cs := connectTo(t, g.Server(), nil)
	waitUntil(t, func() bool { return slices.Contains(toolNames(t, cs), "alpha_echo") }, "alpha's tools")
	var broken UpstreamStatus
	for _, st := range g.Status() {
		if st.Name == "broken" {
			broken = st
		}
	}
	if broken.State != StateDown || broken.Error == "" {
		t.Errorf("broken: %+v", broken)
	}
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "x"}); got != "alpha: x" {
		t.Errorf("%q", got)
	}
	_ = os.Getpid
}

// A reload under load: the unchanged upstream's calls never fail, the
// changed one is restarted, the new one appears, the removed one goes.
func TestGatewayReloadUnderLoad(t *testing.T) {
	var logs logBuffer
	alpha, beta, delta := stdioServer("alpha"), stdioServer("beta"), stdioServer("delta")
	for _, s := range []*configServer{alpha, beta, delta} {
		s.Start = "eager"
	}
	g, cs := startGateway(t, &logs, nil, alpha, beta, delta)
	stop := make(chan struct{})
	var calls, failures atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := cs.CallTool(context.Background(), "beta_echo", map[string]string{"text": "x"})
			calls.Add(1)
			if err != nil || res.IsError {
				failures.Add(1)
				t.Errorf("beta_echo during the reload: %+v %v", res, err)
			}
		}
	}()
	waitUntil(t, func() bool { return calls.Load() > 5 }, "calls under way")
	alpha2 := stdioServer("alpha")
	alpha2.Start = "eager"
	alpha2.Env["CHANGED"] = "1"
	beta2 := stdioServer("beta")
	beta2.Start = "eager"
	g.Reload(&config.Config{Servers: map[string]*config.Server{"alpha": alpha2, "beta": beta2, "gamma": httpServer(t, "gamma")}})
	waitUntil(t, func() bool {
		names := toolNames(t, cs)
		return slices.Contains(names, "alpha_echo") && slices.Contains(names, "gamma_echo") && !slices.Contains(names, "delta_echo")
	}, "alpha back, gamma added, delta removed")
	before := calls.Load()
	waitUntil(t, func() bool { return calls.Load() > before+5 }, "more calls")
	close(stop)
	<-done
	if failures.Load() > 0 {
		t.Errorf("%d of %d calls to the unchanged upstream failed", failures.Load(), calls.Load())
	}
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "y"}); got != "alpha: y" {
		t.Errorf("alpha after reload: %q", got)
	}
	if n := strings.Count(logs.String(), "msg=\"gateway: upstream ready\" upstream=beta "); n != 1 {
		t.Errorf("beta started %d times; an unchanged upstream must not restart", n)
	}
}

// An upstream that refuses our credentials is auth-failed and not
// retried; the others serve.
func TestGatewayAuthFailureNotRetried(t *testing.T) {
	var logs logBuffer
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	locked := &configServer{Name: "locked", URL: srv.URL + "/mcp", Type: "http"}
	g, cs := startGatewayLoose(t, &logs, locked, httpServer(t, "alpha"))
	waitUntil(t, func() bool {
		for _, st := range g.Status() {
			if st.Name == "locked" && st.State == StateAuthFailed {
				return true
			}
		}
		return false
	}, "locked to be auth-failed")
	n := hits.Load()
	time.Sleep(1500 * time.Millisecond) // longer than the first backoffs: a retry would show
	if hits.Load() != n {
		t.Errorf("the refusing upstream was retried: %d requests, then %d", n, hits.Load())
	}
	if got := callText(t, cs, "alpha_echo", map[string]string{"text": "x"}); got != "alpha: x" {
		t.Errorf("%q", got)
	}
}

// startGatewayLoose is startGateway without waiting for every upstream.
func startGatewayLoose(t *testing.T, logs *logBuffer, servers ...*configServer) (*Gateway, *mcp.ClientSession) {
	t.Helper()
	g := runGateway(t, logs, servers...)
	cs := connectTo(t, g.Server(), nil)
	waitUntil(t, func() bool { return len(toolNames(t, cs)) > 0 }, "some tools")
	return g, cs
}

// A server's tool policy: allow and deny globs, a rename, a description
// override and metadata published under the gateway's _meta key.
func TestGatewayToolPolicy(t *testing.T) {
	var logs logBuffer
	s := httpServer(t, "alpha")
	s.Tools = config.ToolPolicy{
		Allow:        []string{"e*", "p*", "s*"},
		Deny:         []string{"slow"},
		Rename:       map[string]string{"echo": "say"},
		Descriptions: map[string]string{"pid": "Which process answers"},
		Meta:         map[string]map[string]any{"pid": {"category": "diagnostics"}},
	}
	_, cs := startGateway(t, &logs, nil, s)
	var got []*mcp.Tool
	for tool, err := range cs.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tool)
	}
	names := []string{}
	for _, tool := range got {
		names = append(names, tool.Name)
		if tool.Name == "alpha_pid" {
			if tool.Description != "Which process answers" || fmt.Sprint(tool.Meta[MetaTool]) != "map[category:diagnostics]" {
				t.Errorf("alpha_pid: %q %v", tool.Description, tool.Meta)
			}
		}
	}
	if !slices.Equal(names, []string{"alpha_pid", "alpha_say"}) {
		t.Errorf("tools %v, want alpha_pid and alpha_say", names)
	}
	if got := callText(t, cs, "alpha_say", map[string]string{"text": "renamed"}); got != "alpha: renamed" {
		t.Errorf("alpha_say: %q", got)
	}
}

// A 2026-07-28 upstream names itself in every result's _meta. The
// gateway's clients see the gateway there (a 2026-07-28 client) or
// nothing (a session-era one), never the upstream, whose other _meta members
// pass through.
func TestGatewayResultsNameTheGateway(t *testing.T) {
	var logs logBuffer
	g, perRequest := startGateway(t, &logs, nil, stdioServer("alpha"), httpServer(t, "gamma"))
	sessionEra := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	if perRequest.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("downstream revision %s", perRequest.ProtocolVersion())
	}
	for _, s := range []string{"alpha", "gamma"} {
		for _, c := range []*mcp.ClientSession{perRequest, sessionEra} {
			var metas []mcp.Meta
			res, err := c.CallTool(context.Background(), s+"_echo", map[string]string{"text": "hi"})
			if err != nil {
				t.Fatal(err)
			}
			metas = append(metas, res.Meta)
			p, err := c.GetPrompt(context.Background(), s+"_greet", map[string]string{"who": "ada"})
			if err != nil {
				t.Fatal(err)
			}
			metas = append(metas, p.Meta)
			r, err := c.ReadResource(context.Background(), s+"+mem://a")
			if err != nil {
				t.Fatal(err)
			}
			metas = append(metas, r.Meta)
			for i, m := range metas {
				info, ok := m[mcp.MetaServerInfo].(map[string]any)
				switch {
				case c == sessionEra && ok:
					t.Errorf("%s %d: a legacy client got serverInfo %v", s, i, info)
				case c == perRequest && (!ok || info["name"] != "mcpgate"):
					t.Errorf("%s %d: a 2026-07-28 client got serverInfo %v, want the gateway's", s, i, m[mcp.MetaServerInfo])
				}
			}
		}
	}
	// Other members of an upstream's _meta are the result's own.
	m := ownMeta(mcp.Meta{mcp.MetaServerInfo: map[string]any{"name": "up"}, "com.example/x": 1})
	if _, ok := m[mcp.MetaServerInfo]; ok || m["com.example/x"] != 1 {
		t.Errorf("ownMeta kept %v", m)
	}
	if m := ownMeta(mcp.Meta{mcp.MetaServerInfo: "up"}); m != nil {
		t.Errorf("ownMeta left %v, want nil", m)
	}
}

// Issue 21, point 6: a reload that restarts and adds servers tells each
// client once per kind of list, when the servers it started are listed,
// not once a server as each stops and starts.
func TestReloadNotificationsCoalesced(t *testing.T) {
	var logs logBuffer
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": stdioServer("alpha"), "beta": stdioServer("beta")}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady, StateIdle)
	var tools atomic.Int32
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25",
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) { tools.Add(1) }})
	toolNames(t, cs)
	next := &config.Config{Servers: map[string]*config.Server{}}
	for _, name := range []string{"alpha", "beta", "gamma", "delta"} {
		s := stdioServer(name)
		s.Env["RELOADED"] = "1" // changed settings: each one restarts
		next.Servers[name] = s
	}
	g.Reload(next)
	waitUntil(t, func() bool {
		names := toolNames(t, cs)
		return slices.Contains(names, "gamma_echo") && slices.Contains(names, "delta_echo") && tools.Load() > 0
	}, "the reloaded servers' tools, and a notification")
	if err := cs.Ping(context.Background()); err != nil { // after what was sent before
		t.Fatal(err)
	}
	if n := tools.Load(); n != 1 {
		t.Errorf("%d tools/list_changed for one reload of four servers, want 1", n)
	}
}
