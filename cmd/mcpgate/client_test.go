package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// These tests run the real mcpgate binary (built in TestMain) as a client
// of real servers: `mcpgate serve` over stdio and HTTP, and a fixture
// server with every kind of content, resources and prompts, which is this
// test binary started again with MCPGATE_CLIENT_FIXTURE=stdio.

const fixtureEnv = "MCPGATE_CLIENT_FIXTURE"

func init() {
	if os.Getenv(fixtureEnv) != "stdio" {
		return
	}
	// Servers write banners on stderr; the client shows them only at
	// --log-level debug.
	fmt.Fprintln(os.Stderr, "fixture: a banner on stderr")
	if err := fixtureServer().ServeStdio(context.Background(), nil); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func fixtureServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Title: "Client fixture", Version: "1.2.3"}, &mcp.ServerOptions{PageSize: 2,
		CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionValues{Values: []string{"fixture-" + req.Params.Argument.Value}}}, nil
		}})
	obj := func(props string, required ...string) any {
		var m map[string]any
		json.Unmarshal([]byte(`{"type":"object","properties":`+props+`}`), &m)
		if len(required) > 0 {
			m["required"] = required
		}
		return m
	}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the message back.\nSecond line of the description.", InputSchema: obj(`{"message":{"type":"string"}}`, "message")},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Message string }
			json.Unmarshal(req.Params.Arguments, &in)
			return mcp.TextResult("Echo: " + in.Message), nil
		}))
	size := int64(2048)
	must(s.AddTool(&mcp.Tool{Name: "media", Description: "Every kind of content block.", InputSchema: obj(`{}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.TextContent{Text: "here it is:"},
				&mcp.ImageContent{Data: bytes.Repeat([]byte{1}, 1500), MIMEType: "image/png"},
				&mcp.AudioContent{Data: []byte{1, 2, 3}, MIMEType: "audio/wav"},
				&mcp.ResourceLink{URI: "file:///readme.txt", Name: "readme", MIMEType: "text/plain", Size: &size},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///logo.png", MIMEType: "image/png", Blob: []byte{9, 9}}},
				&mcp.TextContent{Text: `{"b":1,"a":[true]}`},
			}}, nil
		}))
	must(s.AddTool(&mcp.Tool{Name: "structured", Description: "Structured content only.", InputSchema: obj(`{}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: map[string]any{"total": 3, "items": []string{"x"}}}, nil
		}))
	must(s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: obj(`{}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.ErrorResult("the disk is full"), nil
		}))
	must(s.AddTool(&mcp.Tool{Name: "slow", Description: "Never finishes.", InputSchema: obj(`{}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	must(s.AddResource(&mcp.Resource{URI: "file:///readme.txt", Name: "readme", MIMEType: "text/plain", Description: "Read me first"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from a resource"}}}, nil
		}))
	must(s.AddResource(&mcp.Resource{URI: "file:///logo.png", Name: "logo", MIMEType: "image/png"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "image/png", Blob: []byte("PNG...")}}}, nil
		}))
	must(s.AddResource(&mcp.Resource{URI: "file:///third.txt", Name: "third", Description: "On the second page"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "3"}}}, nil
		}))
	must(s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "file:///notes/{name}", Name: "note", MIMEType: "text/plain"},
		func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "a note"}}}, nil
		}))
	must(s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}, {Name: "tone"}}},
		func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "A greeting", Messages: []*mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["name"]}},
				{Role: mcp.RoleAssistant, Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"}},
			}}, nil
		}))
	return s
}

// fixtureCmd is the "-- COMMAND" part that starts the fixture server.
func fixtureCmd(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A race-enabled binary sleeps a second on exit unless told not to.
	return []string{"--env", fixtureEnv + "=stdio", "--env", "GORACE=atexit_sleep_ms=0", "--", exe}
}

type cliResult struct {
	stdout, stderr string
	code           int
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cli runs the mcpgate binary with args and extra environment.
func cli(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitFor)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "MCPGATE_API_KEY=", "MCPGATE_LOG_LEVEL=info", "COLUMNS=")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcpgate %q hung; stderr:\n%s", args, stderr.String())
	}
	r := cliResult{stdout.String(), stderr.String(), 0}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func args(parts ...any) []string {
	var out []string
	for _, p := range parts {
		switch p := p.(type) {
		case string:
			out = append(out, p)
		case []string:
			out = append(out, p...)
		}
	}
	return out
}

// ok runs the CLI and fails the test unless it exits 0 with nothing on
// stderr.
func ok(t *testing.T, a ...any) string {
	t.Helper()
	r := cli(t, nil, args(a...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("mcpgate %q: %v", args(a...), r)
	}
	return r.stdout
}

// fails runs the CLI and checks that it exits 1 with every one of words
// on stderr.
func fails(t *testing.T, words []string, a ...any) cliResult {
	t.Helper()
	r := cli(t, nil, args(a...)...)
	if r.code != 1 {
		t.Errorf("mcpgate %q: want exit 1, got %v", args(a...), r)
		return r
	}
	for _, w := range words {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("mcpgate %q: stderr lacks %q:\n%s", args(a...), w, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "panic") {
		t.Errorf("panic:\n%s", r.stderr)
	}
	return r
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
	return v
}

type jsonTool struct {
	Name        string         `json:"name"`
	InputSchema map[string]any `json:"inputSchema"`
}

type jsonResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

func TestClientStdioTaskStore(t *testing.T) {
	server := []string{"--", binary, "serve", "--stdio", "--db", filepath.Join(t.TempDir(), "tasks.db")}

	out := ok(t, "tools", "list", server)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 7 || !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(out, "create_task    Add a task") {
		t.Fatalf("tools list:\n%s", out)
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 80 {
			t.Errorf("line of %d columns, more than 80: %q", n, l)
		}
	}
	list := decode[struct{ Tools []jsonTool }](t, ok(t, "tools", "list", "--json", server))
	if len(list.Tools) != 6 || list.Tools[1].Name != "create_task" || list.Tools[1].InputSchema["type"] != "object" {
		t.Fatalf("tools list --json: %+v", list)
	}

	res := decode[jsonResult](t, ok(t, "tools", "call", "create_task", "--args", `{"title":"Write the client","tags":["cli"]}`, "--json", server))
	id, _ := res.StructuredContent["id"].(string)
	if res.IsError || !strings.HasPrefix(id, "task_") || res.Content[0].Type != "text" {
		t.Fatalf("create_task --json: %+v", res)
	}
	// Human output indents the JSON text the tool returned.
	out = ok(t, "tools", "call", "list_tasks", "-a", `{"status":"pending"}`, server)
	if !strings.Contains(out, "\n  \"tasks\": [\n") || !strings.Contains(out, `"title": "Write the client"`) || !strings.Contains(out, id) {
		t.Fatalf("list_tasks:\n%s", out)
	}
	// --args from standard input.
	cmd := exec.Command(binary, args("tools", "call", "get_task", "--args", "@-", server)...)
	cmd.Stdin = strings.NewReader(`{"id":"` + id + `"}`)
	if b, err := cmd.Output(); err != nil || !strings.Contains(string(b), "Write the client") {
		t.Fatalf("--args @-: %v %s", err, b)
	}

	// A tool error: its text on stderr, exit 1.
	r := fails(t, []string{`tool "get_task" reported an error: no task with id "task_nope"`}, "tools", "call", "get_task", "--args", `{"id":"task_nope"}`, server)
	if r.stdout != "" {
		t.Errorf("stdout after a tool error: %q", r.stdout)
	}
	// With --json the result still goes to stdout.
	r = fails(t, []string{`tool "get_task" reported an error`}, "tools", "call", "get_task", "--json", "--args", `{"id":"task_nope"}`, server)
	if res := decode[jsonResult](t, r.stdout); !res.IsError {
		t.Errorf("--json error result: %s", r.stdout)
	}

	if out := ok(t, "ping", server); !strings.HasPrefix(out, "pong from mcpgate ") || !strings.Contains(out, "protocol 2026-07-28") {
		t.Errorf("ping: %s", out)
	}
	// The task store's prompt and resource (a server without any is in
	// TestClientServerWithoutResourcesOrPrompts).
	if out := ok(t, "resources", "read", "tasks://open", server); !strings.Contains(out, "- Write the client (medium priority; tags: cli) `"+id+"`") {
		t.Errorf("resources read tasks://open:\n%s", out)
	}
	if out := ok(t, "prompts", "get", "review_tasks", "--args", `{"tag":"cli"}`, server); !strings.Contains(out, `my open tasks tagged "cli"`) || !strings.Contains(out, id) {
		t.Errorf("prompts get review_tasks:\n%s", out)
	}
	fails(t, []string{`prompt "x" not found; the server has: review_tasks`}, "prompts", "get", "x", server)
}

func TestClientHTTPTaskStore(t *testing.T) {
	p := startHTTP(t)
	res := decode[jsonResult](t, ok(t, "tools", "call", p.url, "create_task", "--args", `{"title":"over HTTP"}`, "--json"))
	if res.IsError || res.StructuredContent["title"] != "over HTTP" {
		t.Fatalf("create_task: %+v", res)
	}
	if out := ok(t, "tools", "call", p.url, "list_tasks"); !strings.Contains(out, `"title": "over HTTP"`) {
		t.Fatalf("list_tasks:\n%s", out)
	}
	if out := ok(t, "tools", "list", p.url); !strings.Contains(out, "complete_task") {
		t.Fatalf("tools list:\n%s", out)
	}
	// An older revision, offered on request.
	ping := decode[map[string]any](t, ok(t, "ping", "--json", "--protocol-version", "2025-03-26", p.url))
	if ping["protocolVersion"] != "2025-03-26" || ping["serverInfo"].(map[string]any)["name"] != "mcpgate" {
		t.Fatalf("ping --json: %v", ping)
	}
	if _, ok := ping["pingMs"].(float64); !ok {
		t.Errorf("no pingMs: %v", ping)
	}
	fails(t, []string{`tool "nope" not found; the server has: complete_task, create_task,`}, "tools", "call", p.url, "nope")
	base := strings.TrimSuffix(p.url, "/mcp")
	fails(t, []string{base + "/elsewhere is not an MCP endpoint (HTTP 404"}, "ping", base+"/elsewhere")
	// The 2024-11-05 HTTP+SSE endpoint works as well.
	if out := ok(t, "tools", "call", base+"/sse", "list_tasks"); !strings.Contains(out, `"title": "over HTTP"`) {
		t.Errorf("over /sse:\n%s", out)
	}
}

func TestClientHTTPAuth(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	out, err := exec.Command(binary, "auth", "new-key", "ci", "--append", keys).Output()
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(out))
	p := startHTTP(t, "--auth-keys", keys)

	fails(t, []string{p.url + " requires authentication (HTTP 401 Unauthorized)", "--api-key", "--header"}, "tools", "list", p.url)
	fails(t, []string{"refused the credentials (HTTP 401 Unauthorized)", "unknown API key"}, "tools", "list", "--api-key", "wrong", p.url)
	if out := ok(t, "tools", "list", "--api-key", key, p.url); !strings.Contains(out, "create_task") {
		t.Errorf("--api-key: %s", out)
	}
	if out := ok(t, "ping", "--header", "Authorization: Bearer "+key, p.url); !strings.Contains(out, "pong") {
		t.Errorf("--header: %s", out)
	}
	r := cli(t, []string{"MCPGATE_API_KEY=" + key}, "tools", "call", p.url, "list_tasks", "--json")
	if r.code != 0 || decode[jsonResult](t, r.stdout).IsError {
		t.Errorf("MCPGATE_API_KEY: %v", r)
	}
	fails(t, []string{"both --api-key", "Authorization"}, "ping", "--api-key", key, "-H", "Authorization: Bearer x", p.url)
}

func TestClientFixture(t *testing.T) {
	fx := fixtureCmd(t)

	// Pages of two, merged.
	list := decode[struct{ Tools []jsonTool }](t, ok(t, "tools", "list", "--json", fx))
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "echo,fail,media,slow,structured" {
		t.Fatalf("tools: %v", names)
	}
	out := ok(t, "tools", "list", fx)
	if !strings.Contains(out, "echo        Echo the message back. Second line of the description.\n") {
		t.Errorf("tools list:\n%s", out)
	}
	// The fixture's stderr banner shows only at debug level.
	r := cli(t, nil, args("--log-level", "debug", "tools", "call", "echo", "--args", `{"message":"hi"}`, fx)...)
	if r.code != 0 || r.stdout != "Echo: hi\n" || !strings.Contains(r.stderr, "fixture: a banner on stderr") {
		t.Errorf("--log-level debug: %v", r)
	}

	out = ok(t, "tools", "call", "media", fx)
	want := `here it is:
[image: image/png, 1.5 kB]
[audio: audio/wav, 3 bytes]
[resource link: file:///readme.txt (readme, text/plain, 2.0 kB)]
[resource: file:///logo.png, image/png, 2 bytes]
{
  "b": 1,
  "a": [
    true
  ]
}
`
	if out != want {
		t.Errorf("media:\n%s\nwant:\n%s", out, want)
	}
	if out := ok(t, "tools", "call", "structured", fx); out != "{\n  \"items\": [\n    \"x\"\n  ],\n  \"total\": 3\n}\n" {
		t.Errorf("structured:\n%s", out)
	}
	res := decode[jsonResult](t, ok(t, "tools", "call", "structured", "--json", fx))
	if res.StructuredContent["total"] != 3.0 || res.Content == nil {
		t.Errorf("structured --json: %+v", res)
	}
	fails(t, []string{`tool "fail" reported an error: the disk is full`}, "tools", "call", "fail", fx)

	out = ok(t, "resources", "list", fx)
	for _, w := range []string{"URI                 NAME    TYPE        DESCRIPTION", "file:///readme.txt  readme  text/plain  Read me first", "file:///third.txt", "URI TEMPLATE", "file:///notes/{name}  note"} {
		if !strings.Contains(out, w) {
			t.Errorf("resources list lacks %q:\n%s", w, out)
		}
	}
	rl := decode[struct {
		Resources         []struct{ URI string }
		ResourceTemplates []struct{ URITemplate string }
	}](t, ok(t, "resources", "list", "--json", fx))
	if len(rl.Resources) != 3 || len(rl.ResourceTemplates) != 1 {
		t.Errorf("resources list --json: %+v", rl)
	}
	if out := ok(t, "resources", "read", "file:///readme.txt", fx); out != "hello from a resource\n" {
		t.Errorf("read text: %q", out)
	}
	if out := ok(t, "resources", "read", "file:///notes/x", fx); out != "a note\n" {
		t.Errorf("read template: %q", out)
	}
	if out := ok(t, "resources", "read", "file:///logo.png", fx); out != "[binary: image/png, 6 bytes; use --json for the base64 data]\n" {
		t.Errorf("read blob: %q", out)
	}
	blob := decode[struct{ Contents []struct{ Blob string } }](t, ok(t, "resources", "read", "--json", "file:///logo.png", fx))
	if len(blob.Contents) != 1 || blob.Contents[0].Blob != "UE5HLi4u" {
		t.Errorf("read blob --json: %+v", blob)
	}
	fails(t, []string{`cannot read "file:///nope"`, "mcpgate resources list --"}, "resources", "read", "file:///nope", fx)

	if out := ok(t, "prompts", "list", fx); !strings.Contains(out, "greet  name*, tone  Greet someone") {
		t.Errorf("prompts list:\n%s", out)
	}
	out = ok(t, "prompts", "get", "greet", "--args", `{"name":"Ada"}`, fx)
	if out != "A greeting\n\n[user]\nSay hello to Ada\n\n[assistant]\nHello, Ada!\n" {
		t.Errorf("prompts get:\n%s", out)
	}
	pr := decode[struct {
		Messages []struct {
			Role    string
			Content struct{ Text string }
		}
	}](t, ok(t, "prompts", "get", "greet", "--json", "--args", `{"name":"Ada"}`, fx))
	if len(pr.Messages) != 2 || pr.Messages[1].Content.Text != "Hello, Ada!" {
		t.Errorf("prompts get --json: %+v", pr)
	}
	fails(t, []string{`prompt "greet"`, "name*, tone"}, "prompts", "get", "greet", fx)
	fails(t, []string{`prompt "nope" not found; the server has: greet`}, "prompts", "get", "nope", fx)
	fails(t, []string{`--args: the value of "name" is a number`, `"name": "7"`}, "prompts", "get", "greet", "--args", `{"name":7}`, fx)

	if out := ok(t, "ping", fx); !strings.HasPrefix(out, "pong from fixture (Client fixture) 1.2.3 (protocol 2026-07-28) in ") {
		t.Errorf("ping: %s", out)
	}
}

// The fixture over HTTP, served in this process.
func TestClientFixtureHTTP(t *testing.T) {
	h := mcphttp.NewHandler(fixtureServer(), nil)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	u := srv.URL + "/mcp"
	if out := ok(t, "resources", "read", u, "file:///readme.txt"); out != "hello from a resource\n" {
		t.Errorf("read: %q", out)
	}
	if out := ok(t, "prompts", "get", u, "greet", "-a", `{"name":"Bo"}`); !strings.Contains(out, "Hello, Bo!") {
		t.Errorf("prompts get: %s", out)
	}
	if out := ok(t, "tools", "call", u, "echo", "--args", `{"message":"over http"}`); out != "Echo: over http\n" {
		t.Errorf("echo: %q", out)
	}
	fails(t, []string{"no answer from " + u + " within 1s", "--timeout"}, "tools", "call", "--timeout", "1s", u, "slow")
}

func TestClientErrors(t *testing.T) {
	server := []string{"--", binary, "serve", "--stdio", "--db", filepath.Join(t.TempDir(), "tasks.db")}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()

	t.Run("refused", func(t *testing.T) {
		fails(t, []string{"cannot connect to " + refused + ": connection refused; is the server running?"}, "tools", "list", refused)
	})
	t.Run("unknown tool", func(t *testing.T) {
		fails(t, []string{`tool "no_such_tool" not found; the server has: complete_task, create_task, delete_task, get_task, list_tasks, update_task`}, "tools", "call", "no_such_tool", server)
	})
	t.Run("bad args", func(t *testing.T) {
		// Found before the server is started: a command that would fail
		// otherwise shows it.
		nothing := []string{"--", "/nonexistent/server"}
		r := fails(t, []string{"--args is not valid JSON", "at line 1 column 11:\n  {\"title\": x}\n            ^"}, "tools", "call", "create_task", "--args", `{"title": x}`, nothing)
		if strings.Contains(r.stderr, "nonexistent") {
			t.Errorf("the server was started: %s", r.stderr)
		}
		fails(t, []string{"at line 2 column 13:\n   \"tags\": [1,}\n              ^"}, "tools", "call", "create_task", "--args", "{\"title\":\"a\",\n \"tags\": [1,}", nothing)
		fails(t, []string{"--args is not valid JSON", "unexpected end of JSON input", "column 10"}, "tools", "call", "x", "--args", `{"title":`, nothing)
		fails(t, []string{"--args must be a JSON object", "not an array"}, "tools", "call", "create_task", "--args", `[1]`, nothing)
		fails(t, []string{"--args @/nonexistent/args.json"}, "tools", "call", "create_task", "--args", `@/nonexistent/args.json`, nothing)
		// Invalid arguments the server rejects are the tool's error.
		fails(t, []string{`tool "create_task" reported an error`, "title"}, "tools", "call", "create_task", "--args", `{"priority":"urgent"}`, server)
	})
	t.Run("command exits", func(t *testing.T) {
		fails(t, []string{`the server command "sh -c echo cannot open the database >&2; exit 3" exited (exit status 3) before completing the MCP handshake; its last lines on stderr:
  cannot open the database`}, "tools", "list", "--", "sh", "-c", "echo cannot open the database >&2; exit 3")
		fails(t, []string{"exited (exit status 0)", "wrote nothing on stderr"}, "ping", "--", "true")
		fails(t, []string{`cannot start the server: "/nonexistent/server" not found`}, "ping", "--", "/nonexistent/server")
	})
	t.Run("timeout", func(t *testing.T) {
		fails(t, []string{"sleep 30 did not answer within 1s (--timeout)"}, "ping", "--timeout", "1s", "--", "sleep", "30")
		fails(t, []string{"no answer from ", "within 1s: the request timed out (raise --timeout)"}, "tools", "call", "slow", "--timeout", "1s", fixtureCmd(t))
	})
	t.Run("usage", func(t *testing.T) {
		for _, tt := range []struct {
			words []string
			args  []string
		}{
			{[]string{"no TARGET"}, []string{"tools", "list"}},
			{[]string{`TARGET "npx" is not an http(s) URL`, "mcpgate tools list -- npx"}, []string{"tools", "list", "npx"}},
			{[]string{"unknown shorthand flag: 'y'", `go after "--"`}, []string{"tools", "list", "npx", "-y", "pkg"}},
			{[]string{`NAME goes before "--"`}, []string{"tools", "call", "--", "npx", "server", "echo"}},
			{[]string{"missing NAME"}, []string{"tools", "call", refused}},
			{[]string{"either a URL or a command"}, []string{"tools", "call", refused, "x", "--", "npx"}},
			{[]string{`no server command after "--"`}, []string{"ping", "--"}},
			{[]string{"--env applies to a server command"}, []string{"ping", "--env", "A=b", refused}},
			{[]string{"--header, --api-key and --oauth apply to URL targets"}, []string{"ping", "-H", "A: b", "--", "true"}},
			{[]string{`--header "A=b": want 'Name: value'`}, []string{"ping", "-H", "A=b", refused}},
			{[]string{`--env "A": want KEY=VALUE`}, []string{"ping", "--env", "A", "--", "true"}},
			{[]string{`--protocol-version "1999-01-01": use auto or one of 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05`}, []string{"ping", "--protocol-version", "1999-01-01", refused}},
			{[]string{"only http and https URLs"}, []string{"ping", "ftp://example.com/mcp"}},
			{[]string{`unknown command "lst" for "mcpgate tools"`}, []string{"tools", "lst"}},
		} {
			fails(t, tt.words, tt.args)
		}
	})
}

// The reference server of the MCP project, when npx can fetch it.
func TestClientEverythingServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	everything := []string{"--", "npx", "-y", "@modelcontextprotocol/server-everything@2026.8.31", "stdio"}
	r := cli(t, nil, args("tools", "call", "echo", "--args", `{"message":"hi"}`, "--timeout", "50s", everything)...)
	if r.code != 0 && (strings.Contains(r.stderr, "handshake") || strings.Contains(r.stderr, "did not answer")) {
		t.Skipf("npx could not start the server (offline?): %s", r.stderr)
	}
	if r.code != 0 || r.stdout != "Echo: hi\n" {
		t.Fatalf("echo: %v", r)
	}
	out := ok(t, "tools", "call", "get-tiny-image", everything)
	if !strings.Contains(out, "[image: image/png, ") {
		t.Errorf("get-tiny-image:\n%s", out)
	}
	if out := ok(t, "prompts", "get", "args-prompt", "--args", `{"city":"Paris"}`, everything); !strings.Contains(out, "[user]\nWhat's weather in Paris?") {
		t.Errorf("args-prompt:\n%s", out)
	}
	if out := ok(t, "resources", "list", everything); !strings.Contains(out, "demo://resource/static/document/") {
		t.Errorf("resources list:\n%s", out)
	}
}
