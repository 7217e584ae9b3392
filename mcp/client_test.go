package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// pipePair returns the two ends of an in-memory newline-delimited link.
func pipePair() (client, server Conn) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	return NewStdioConn(cr, cw, 0), NewStdioConn(sr, sw, 0)
}

// connect serves s on one end of a pipe and connects a client to the
// other; both end with the test.
func connect(t *testing.T, s *Server, opts *ClientOptions) *ClientSession {
	t.Helper()
	return connectVia(t, s, opts, nil)
}

// connectVia is connect with the server's end of the pipe wrapped, to
// alter what the server sends.
func connectVia(t *testing.T, s *Server, opts *ClientOptions, wrap func(Conn) Conn) *ClientSession {
	t.Helper()
	cc, sc := pipePair()
	if wrap != nil {
		sc = wrap(sc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeConn(ctx, sc, &ServeOptions{ShutdownTimeout: time.Second})
	}()
	cs, err := NewClient(&Implementation{Name: "test-client", Version: "1"}, opts).Connect(context.Background(), ConnTransport{cc})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sc.Close()
		<-done
	})
	return cs
}

type clientEchoIn struct {
	Text string `json:"text"`
}

func featureServer(opts *ServerOptions) *Server {
	if opts == nil {
		opts = &ServerOptions{}
	}
	opts.Logging = true
	opts.CompletionHandler = func(_ context.Context, req *CompleteRequest) (*CompleteResult, error) {
		return &CompleteResult{Completion: CompletionValues{Values: []string{req.Params.Argument.Value + "-done"}}}, nil
	}
	s := NewServer(&Implementation{Name: "feature", Version: "2"}, opts)
	AddTool(s, &Tool{Name: "echo"}, func(_ context.Context, _ *CallToolRequest, in clientEchoIn) (*CallToolResult, any, error) {
		return TextResult(in.Text), nil, nil
	})
	s.AddTool(&Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		for i := 1; i <= 3; i++ {
			req.NotifyProgress(float64(i), 3, fmt.Sprintf("step %d", i))
		}
		req.Log(LevelInfo, "slow", "working")
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		return TextResult("slept"), nil
	})
	s.AddTool(&Tool{Name: "hang", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		<-ctx.Done()
		hangCancelled <- context.Cause(ctx)
		return nil, ctx.Err()
	})
	s.AddTool(&Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		el, err := req.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		sm, err := req.CreateMessage(ctx, &CreateMessageParams{MaxTokens: 10, Messages: []*SamplingMessage{NewSamplingMessage(RoleUser, &TextContent{Text: "hi"})}})
		if err != nil {
			return nil, err
		}
		return TextResult(fmt.Sprintf("%s %v %s %s", roots.Roots[0].URI, el.Content["name"], sm.Model, sm.Content)), nil
	})
	s.AddResource(&Resource{URI: "file:///a.txt", Name: "a"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{Contents: []*ResourceContents{{URI: "file:///a.txt", Text: "hello"}}}, nil
	})
	s.AddPrompt(&Prompt{Name: "greet", Arguments: []*PromptArgument{{Name: "who", Required: true}}}, func(_ context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
		return &GetPromptResult{Messages: []*PromptMessage{{Role: RoleUser, Content: &TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
	})
	return s
}

var hangCancelled = make(chan error, 8)

// Every feature, against our dual-era server in both eras: 2026-07-28
// after the probe (the default) and 2025-11-25 by initialize.
func TestClientFeatures(t *testing.T) {
	for _, version := range []string{"", LatestNegotiatedVersion} {
		t.Run("version "+version, func(t *testing.T) { testClientFeatures(t, version) })
	}
}

func testClientFeatures(t *testing.T, version string) {
	perRequest := version == ""
	ctx := context.Background()
	var mu sync.Mutex
	var logs []string
	listChanged := make(chan struct{}, 1)
	cs := connect(t, featureServer(&ServerOptions{PageSize: 2}), &ClientOptions{
		ProtocolVersion: version,
		LoggingMessageHandler: func(_ context.Context, _ *ClientSession, p *LoggingMessageParams) {
			mu.Lock()
			logs = append(logs, fmt.Sprint(p.Level, " ", p.Data))
			mu.Unlock()
		},
		ToolListChangedHandler: func(ctx context.Context, s *ClientSession) {
			// A handler may call the session.
			if _, err := s.ListTools(ctx, nil); err == nil {
				listChanged <- struct{}{}
			}
		},
		RootsHandler: func(context.Context, *ClientSession) (*ListRootsResult, error) {
			return &ListRootsResult{Roots: []*Root{{URI: "file:///work"}}}, nil
		},
		ElicitationHandler: func(_ context.Context, _ *ClientSession, p *ElicitParams) (*ElicitResult, error) {
			return &ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, _ *ClientSession, p *CreateMessageParams) (*CreateMessageResult, error) {
			return &CreateMessageResult{Role: RoleAssistant, Model: "fake-llm", Content: []byte(`{"type":"text","text":"ok"}`)}, nil
		},
	})

	init := cs.InitializeResult()
	want := LatestNegotiatedVersion
	if perRequest {
		want = Version20260728
	}
	if init.ServerInfo.Name != "feature" || cs.ProtocolVersion() != want || init.Capabilities.Tools == nil {
		t.Fatalf("initialize result: %+v", init)
	}

	// Pagination: 4 tools at 2 per page.
	var names []string
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, ",") != "ask,echo,hang,slow" {
		t.Errorf("tools: %v", names)
	}

	res, err := cs.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	if err != nil || res.IsError || res.Content[0].(*TextContent).Text != "hi" {
		t.Errorf("echo: %+v %v", res, err)
	}
	// Invalid arguments are a tool error, not a protocol error.
	res, err = cs.CallTool(ctx, "echo", map[string]any{"text": 5})
	if err != nil || !res.IsError {
		t.Errorf("bad args: %+v %v", res, err)
	}
	// An unknown tool is a protocol error with its code.
	_, err = cs.CallTool(ctx, "nope", nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v", err)
	}

	// Progress reaches the callback of its own call, in order.
	var progress []string
	if err := cs.SetLoggingLevel(ctx, LevelDebug); err != nil {
		t.Fatal(err)
	}
	res, err = cs.CallTool(WithProgress(ctx, func(p *ProgressNotificationParams) {
		progress = append(progress, p.Message)
	}), "slow", nil)
	if err != nil || res.Content[0].(*TextContent).Text != "slept" {
		t.Fatalf("slow: %+v %v", res, err)
	}
	if strings.Join(progress, ",") != "step 1,step 2,step 3" {
		t.Errorf("progress: %v", progress)
	}
	waitUntil(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(logs) == 1 })
	if logs[0] != "info working" {
		t.Errorf("logs: %v", logs)
	}

	// Server-to-client requests reach the handlers.
	res, err = cs.CallTool(ctx, "ask", nil)
	if err != nil || res.IsError || res.Content[0].(*TextContent).Text != `file:///work ada fake-llm {"type":"text","text":"ok"}` {
		t.Errorf("ask: %+v %v", res, err)
	}

	rr, err := cs.ReadResource(ctx, "file:///a.txt")
	if err != nil || rr.Contents[0].Text != "hello" {
		t.Errorf("read: %+v %v", rr, err)
	}
	notFound := int64(-32002)
	if perRequest {
		notFound = jsonrpc.CodeInvalidParams
	}
	if _, err := cs.ReadResource(ctx, "file:///missing"); !errors.As(err, &rpcErr) || rpcErr.Code != notFound {
		t.Errorf("missing resource: %v", err)
	}
	pr, err := cs.GetPrompt(ctx, "greet", map[string]string{"who": "bob"})
	if err != nil || pr.Messages[0].Content.(*TextContent).Text != "hello bob" {
		t.Errorf("prompt: %+v %v", pr, err)
	}
	cr, err := cs.Complete(ctx, &CompleteParams{Ref: &CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: CompleteArgument{Name: "who", Value: "bo"}})
	if err != nil || cr.Completion.Values[0] != "bo-done" {
		t.Errorf("complete: %+v %v", cr, err)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Error(err)
	}
}

func TestClientSubscribe(t *testing.T) {
	for _, era := range []string{"2024-11-05", LatestNegotiatedVersion, Version20260728} {
		t.Run(era, func(t *testing.T) { testClientSubscribe(t, era) })
	}
}

// testClientSubscribe: a subscription delivers the updates of its own
// resource and ends with Unsubscribe; in 2026-07-28 each is a listen
// request of its own. Updates arrive in order on one connection, so the
// last update seen proves the earlier ones were (or were not) sent.
func testClientSubscribe(t *testing.T, version string) {
	s := featureServer(nil)
	updated := make(chan string, 8)
	cs := connect(t, s, &ClientOptions{
		ProtocolVersion:        version,
		ResourceUpdatedHandler: func(_ context.Context, _ *ClientSession, uri string) { updated <- uri },
	})
	ctx := context.Background()
	next := func() string {
		select {
		case u := <-updated:
			return u
		case <-time.After(5 * time.Second):
			t.Fatal("no notifications/resources/updated")
			return ""
		}
	}
	if err := cs.Subscribe(ctx, "file:///a.txt"); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, "file:///a.txt"); err != nil {
		t.Fatalf("subscribing twice: %v", err)
	}
	s.ResourceUpdated("file:///b.txt")
	s.ResourceUpdated("file:///a.txt")
	if got := next(); got != "file:///a.txt" {
		t.Errorf("first update: %s", got)
	}
	if err := cs.Subscribe(ctx, "file:///b.txt"); err != nil {
		t.Fatal(err)
	}
	if err := cs.Unsubscribe(ctx, "file:///a.txt"); err != nil {
		t.Fatal(err)
	}
	// The server may take the cancellation a moment after Unsubscribe
	// returns: wait until an update of a is no longer delivered.
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.ResourceUpdated("file:///a.txt")
		s.ResourceUpdated("file:///b.txt")
		got := next()
		if got == "file:///b.txt" {
			break
		}
		if next() != "file:///b.txt" || time.Now().After(deadline) {
			t.Fatal("updates of a still arrive after Unsubscribe")
		}
	}
	if version == Version20260728 {
		cs.mu.Lock()
		n := len(cs.subs)
		cs.mu.Unlock()
		if n != 1 {
			t.Errorf("%d subscription requests open, want 1", n)
		}
	}
}

func TestClientListChanged(t *testing.T) {
	for _, era := range []string{"", LatestNegotiatedVersion} {
		t.Run("version "+era, func(t *testing.T) { testClientListChanged(t, era) })
	}
}

// testClientListChanged: session-era servers send list_changed unasked; a
// per-request one on the subscription the client opens for its handlers.
func testClientListChanged(t *testing.T, version string) {
	s := featureServer(nil)
	changed := make(chan int, 4)
	cs := connect(t, s, &ClientOptions{
		ProtocolVersion: version,
		ToolListChangedHandler: func(ctx context.Context, cs *ClientSession) {
			res, err := cs.ListTools(ctx, nil)
			if err == nil {
				changed <- len(res.Tools)
			}
		},
	})
	_ = cs
	s.AddTool(&Tool{Name: "extra", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return TextResult(""), nil
	})
	select {
	case n := <-changed:
		if n != 5 {
			t.Errorf("tools after change: %d", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no list_changed")
	}
}

// Every revision the client speaks is negotiated with our server, and
// what the older ones lack is refused clearly before anything is sent.
func TestClientVersions(t *testing.T) {
	for _, v := range NegotiatedVersions {
		t.Run(v, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{HasPrompts: true})
			cs := connect(t, s, &ClientOptions{ProtocolVersion: v})
			if cs.ProtocolVersion() != v {
				t.Errorf("negotiated %s", cs.ProtocolVersion())
			}
			_, err := cs.Complete(context.Background(), &CompleteParams{Ref: &CompleteReference{Type: "ref/prompt", Name: "x"}, Argument: CompleteArgument{Name: "a"}})
			if v == Version20241105 {
				// Completion before 2025-03-26 needs no capability of its
				// own, so the request goes out and the server answers.
				if errors.Is(err, ErrNotSupported) {
					t.Errorf("complete at %s: %v", v, err)
				}
			} else if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "completions") || !strings.Contains(err.Error(), v) {
				t.Errorf("complete at %s: %v", v, err)
			}
			if _, err := cs.ListTools(context.Background(), nil); !errors.Is(err, ErrNotSupported) {
				t.Errorf("tools at %s: %v", v, err)
			}
		})
	}
}

// A call that times out tells the server, whose handler sees it cancelled.
func TestClientTimeoutCancels(t *testing.T) {
	cs := connect(t, featureServer(nil), &ClientOptions{RequestTimeout: 100 * time.Millisecond})
	_, err := cs.CallTool(context.Background(), "hang", nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("hang: %v", err)
	}
	select {
	case cause := <-hangCancelled:
		if !strings.Contains(fmt.Sprint(cause), "timed out") {
			t.Errorf("cause on the server: %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server's handler was not cancelled")
	}
	// The session goes on.
	if err := cs.Ping(context.Background()); err != nil {
		t.Error(err)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkGoroutines fails the test if goroutines started during it are
// still running after it (with a grace period for ones winding down).
func checkGoroutines(t *testing.T) func() {
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<20)
			t.Errorf("%d goroutines before, %d after:\n%s", before, n, buf[:runtime.Stack(buf, true)])
		}
	}
}

func TestApplyElicitationDefaults(t *testing.T) {
	p := &ElicitParams{RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
		"name":     map[string]any{"type": "string", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "default": 30},
		"verified": map[string]any{"type": "boolean", "default": false},
		"nick":     map[string]any{"type": "string"},
	}}}
	got := ApplyElicitationDefaults(p, map[string]any{"name": "Ada"})
	if fmt.Sprint(got) != "map[age:30 name:Ada verified:false]" {
		t.Errorf("got %v", got)
	}
}

// x-mcp-header annotations are checked as tools are listed: an invalid
// one drops its tool and only it.
func TestToolParamHeaders(t *testing.T) {
	for _, tt := range []struct {
		schema string
		ok     bool
		names  string
	}{
		{`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`, true, "N,Region"},
		{`{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"boolean","x-mcp-header":"B"}}}}}`, true, "B"},
		{`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":""}}}`, false, ""},
		{`{"type":"object","properties":{"v":{"type":"number","x-mcp-header":"V"}}}`, false, ""},
		{`{"type":"object","properties":{"v":{"type":"object","x-mcp-header":"V"}}}`, false, ""},
		{`{"type":"object","properties":{"v":{"type":"string","x-mcp-header":"Bad Name"}}}`, false, ""},
		{`{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, false, ""},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}`, false, ""},
	} {
		var schema any
		json.Unmarshal([]byte(tt.schema), &schema)
		hs, err := toolParamHeaders(schema)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v", tt.schema, err)
			continue
		}
		var names []string
		for _, h := range hs {
			names = append(names, h.Name)
		}
		slices.Sort(names)
		if strings.Join(names, ",") != tt.names {
			t.Errorf("%s: %v", tt.schema, names)
		}
	}
	got := paramHeaderValues([]paramHeader{{Name: "R", Path: []string{"r"}}, {Name: "N", Path: []string{"n"}}, {Name: "B", Path: []string{"b"}}, {Name: "Z", Path: []string{"z"}}},
		map[string]any{"r": " padded", "n": 42, "b": false, "z": nil})
	if got["Mcp-Param-R"] != "=?base64?IHBhZGRlZA==?=" || got["Mcp-Param-N"] != "42" || got["Mcp-Param-B"] != "false" || len(got) != 3 {
		t.Errorf("headers %v", got)
	}
}

// withMeta adds _meta without decoding params, and declines where a
// _meta might already be, for the merging path.
func TestWithMeta(t *testing.T) {
	m := []byte(`"a":1`)
	for in, want := range map[string]string{
		``:                       `{"_meta":{"a":1}}`,
		`null`:                   `{"_meta":{"a":1}}`,
		`{}`:                     `{"_meta":{"a":1}}`,
		` { } `:                  `{"_meta":{"a":1}}`,
		`{"name":"x"}`:           `{"_meta":{"a":1},"name":"x"}`,
		`{ "name" : {"k":[1]} }`: `{"_meta":{"a":1},"name" : {"k":[1]} }`,
		`{"_meta":{"b":2}}`:      "",
		`{"x":{"_meta":{}}}`:     "",
		`[1]`:                    "",
	} {
		out, ok := withMeta([]byte(in), m)
		if (want == "") == ok || ok && string(out) != want {
			t.Errorf("withMeta(%q) = %q, %v; want %q", in, out, ok, want)
		}
		if ok && !json.Valid(out) {
			t.Errorf("withMeta(%q) = %q: invalid JSON", in, out)
		}
	}
}

// A 2026-07-28 call whose params carry a _meta of their own keeps it, and
// gets the session's members and its progress token over it.
func TestPerRequestParamsOwnMeta(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	got := make(chan Meta, 1)
	s.AddTool(&Tool{Name: "m", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
		got <- req.Params.Meta
		return TextResult("ok"), nil
	})
	cs := connect(t, s, &ClientOptions{ProtocolVersion: Version20260728})
	ctx := WithProgress(context.Background(), func(*ProgressNotificationParams) {})
	if _, err := cs.CallToolParams(ctx, &CallToolParams{Name: "m", Meta: Meta{"x": 1, MetaProtocolVersion: "bogus"}}); err != nil {
		t.Fatal(err)
	}
	m := <-got
	if m["x"] != float64(1) || m[MetaProtocolVersion] != Version20260728 || m["progressToken"] == nil || m[MetaClientCapabilities] == nil {
		t.Errorf("_meta the handler saw: %v", m)
	}
}
