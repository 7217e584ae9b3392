package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

type taskIn struct {
	Title    string   `json:"title" jsonschema:"description=What to do,minLength=1"`
	Priority string   `json:"priority,omitempty" jsonschema:"enum=low,enum=medium,enum=high,default=medium"`
	Limit    int      `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100,default=20"`
	Tags     []string `json:"tags,omitempty"`
}

type taskOut struct {
	Title    string `json:"title"`
	Priority string `json:"priority"`
	Limit    int    `json:"limit"`
}

func typedServer() *Server {
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "add", Title: "Add a task", Description: "Add a task",
		Annotations: &ToolAnnotations{ReadOnlyHint: true}, Icons: []Icon{{Src: "https://example.com/i.png"}}, Meta: Meta{"x": 1}},
		func(ctx context.Context, req *CallToolRequest, in taskIn) (*CallToolResult, taskOut, error) {
			if in.Title == "fail" {
				return nil, taskOut{}, errors.New("the store is read-only")
			}
			if in.Title == "panic" {
				panic("boom")
			}
			if in.Title == "rpc" {
				return nil, taskOut{}, jsonrpc.Errorf(-32099, "custom")
			}
			return nil, taskOut{Title: in.Title, Priority: in.Priority, Limit: in.Limit}, nil
		})
	return s
}

func TestTypedToolSchemaInference(t *testing.T) {
	p := startPeer(t, typedServer(), nil)
	p.initialize(LatestNegotiatedVersion, "")
	var list struct {
		Tools []struct {
			Name         string
			Title        string
			InputSchema  map[string]any
			OutputSchema map[string]any
			Annotations  map[string]any
			Icons        []any
			Meta         map[string]any `json:"_meta"`
		}
	}
	p.result("tools/list", "", &list)
	tool := list.Tools[0]
	in := tool.InputSchema
	if in["type"] != "object" || in["$schema"] != nil {
		t.Errorf("input schema root: %v", in)
	}
	if req := fmt.Sprint(in["required"]); req != "[title]" {
		t.Errorf("required = %v", req)
	}
	props := in["properties"].(map[string]any)
	if d := props["title"].(map[string]any)["description"]; d != "What to do" {
		t.Errorf("description = %v", d)
	}
	pr := props["priority"].(map[string]any)
	if fmt.Sprint(pr["enum"]) != "[low medium high]" || pr["default"] != "medium" {
		t.Errorf("priority = %v", pr)
	}
	if props["limit"].(map[string]any)["type"] != "integer" {
		t.Errorf("limit = %v", props["limit"])
	}
	if tool.OutputSchema["type"] != "object" || tool.Title != "Add a task" || tool.Annotations["readOnlyHint"] != true || len(tool.Icons) != 1 || tool.Meta["x"] != 1.0 {
		t.Errorf("tool = %+v", tool)
	}
}

func TestTypedToolCall(t *testing.T) {
	p := startPeer(t, typedServer(), nil)
	p.initialize(LatestNegotiatedVersion, "")

	// Defaults are filled in before decoding; structured output comes with
	// its JSON text.
	m := p.call("tools/call", `{"name":"add","arguments":{"title":"write tests"}}`)
	var res struct {
		Content           []map[string]any
		StructuredContent map[string]any
		IsError           bool
	}
	json.Unmarshal(m.Result, &res)
	if res.IsError || res.StructuredContent["priority"] != "medium" || res.StructuredContent["limit"] != 20.0 {
		t.Fatalf("result %s", m.Result)
	}
	if text := res.Content[0]["text"].(string); !strings.Contains(text, `"title":"write tests"`) {
		t.Errorf("text block %q", text)
	}

	// Invalid arguments: an isError result naming each bad field.
	m = p.call("tools/call", `{"name":"add","arguments":{"priority":"urgent","limit":"ten","extra":1}}`)
	res.IsError = false
	json.Unmarshal(m.Result, &res)
	text := res.Content[0]["text"].(string)
	if !res.IsError {
		t.Fatalf("invalid arguments did not give isError: %s", m.Raw)
	}
	for _, want := range []string{"missing property 'title'", "/priority", "/limit", "extra"} {
		contains(t, text, want)
	}

	// A handler error is an isError result with its text.
	m = p.call("tools/call", `{"name":"add","arguments":{"title":"fail"}}`)
	json.Unmarshal(m.Result, &res)
	if !res.IsError || res.Content[0]["text"] != "the store is read-only" {
		t.Errorf("handler error: %s", m.Raw)
	}
	// A *jsonrpc.Error is a protocol error.
	if code, _ := p.rpcError("tools/call", `{"name":"add","arguments":{"title":"rpc"}}`); code != -32099 {
		t.Errorf("rpc error code %d", code)
	}
	// A panic is an internal error and the server goes on.
	code, msg := p.rpcError("tools/call", `{"name":"add","arguments":{"title":"panic"}}`)
	if code != -32603 || strings.Contains(msg, "boom") {
		t.Errorf("panic: %d %q", code, msg)
	}
	p.result("tools/call", `{"name":"add","arguments":{"title":"after the panic"}}`, nil)

	// Unknown tools and malformed params are protocol errors.
	if code, msg := p.rpcError("tools/call", `{"name":"nope"}`); code != -32602 || !strings.Contains(msg, "nope") {
		t.Errorf("unknown tool: %d %q", code, msg)
	}
	if code, _ := p.rpcError("tools/call", `{}`); code != -32602 {
		t.Errorf("missing name: %d", code)
	}
}

func TestToolShapingPerRevision(t *testing.T) {
	s := typedServer()
	s.AddTool(&Tool{Name: "media", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		return &CallToolResult{Content: []Content{
			&TextContent{Text: "t"},
			&AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
			&ResourceLink{URI: "file:///x", Name: "x"},
			&ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
		}}, nil
	})
	for _, tt := range []struct {
		version                            string
		outputSchema, title, annotations   bool
		icons, meta, structured, audio, rl bool
	}{
		{"2024-11-05", false, false, false, false, false, false, false, false},
		{"2025-03-26", false, false, true, false, false, false, true, false},
		{"2025-06-18", true, true, true, false, true, true, true, true},
		{"2025-11-25", true, true, true, true, true, true, true, true},
	} {
		t.Run(tt.version, func(t *testing.T) {
			p := startPeer(t, s, nil)
			p.initialize(tt.version, "")
			m := p.call("tools/list", "")
			add := string(m.Result)
			check := func(what string, present bool, sub string) {
				if strings.Contains(add, sub) != present {
					t.Errorf("%s present=%v want %v in %s", what, !present, present, add)
				}
			}
			check("outputSchema", tt.outputSchema, `"outputSchema"`)
			check("title", tt.title, `"title":"Add a task"`)
			check("annotations", tt.annotations, `"annotations"`)
			check("icons", tt.icons, `"icons"`)
			check("_meta", tt.meta, `"_meta"`)
			m = p.call("tools/call", `{"name":"add","arguments":{"title":"x"}}`)
			if strings.Contains(string(m.Result), "structuredContent") != tt.structured {
				t.Errorf("structuredContent: %s", m.Result)
			}
			m = p.call("tools/call", `{"name":"media"}`)
			r := string(m.Result)
			if strings.Contains(r, `"type":"audio"`) != tt.audio || strings.Contains(r, `"type":"resource_link"`) != tt.rl {
				t.Errorf("content blocks: %s", r)
			}
			if !strings.Contains(r, `"type":"image","data":"AQI=","mimeType":"image/png"`) {
				t.Errorf("image block: %s", r)
			}
		})
	}
}

func TestToolRegistrationChecks(t *testing.T) {
	s := NewServer(nil, nil)
	h := func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	obj := map[string]any{"type": "object"}
	for _, tt := range []struct {
		tool *Tool
		want string
	}{
		{&Tool{Name: "", InputSchema: obj}, "1 to 128"},
		{&Tool{Name: strings.Repeat("a", 129), InputSchema: obj}, "1 to 128"},
		{&Tool{Name: "has space", InputSchema: obj}, "character"},
		{&Tool{Name: "comma,", InputSchema: obj}, "character"},
		{&Tool{Name: "ok"}, "no input schema"},
		{&Tool{Name: "ok", InputSchema: map[string]any{"type": "array"}}, `"type": "object"`},
		{&Tool{Name: "ok", InputSchema: `{"type":"object","properties":{"a":{"type":"nonsense"}}}`}, "invalid schema"},
		{&Tool{Name: "ok", InputSchema: `{"$schema":"https://example.com/my-dialect","type":"object"}`}, "not supported"},
		{&Tool{Name: "ok", InputSchema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`}, "invalid schema"},
		{&Tool{Name: "ok", InputSchema: `{"type":"object"`}, "not valid JSON"},
	} {
		err := s.AddTool(tt.tool, h)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("AddTool(%.40q): %v, want %q", tt.tool.Name, err, tt.want)
		}
	}
	for _, name := range []string{"getUser", "DATA_EXPORT_v2", "admin.tools.list", "a-b"} {
		if err := s.AddTool(&Tool{Name: name, InputSchema: obj}, h); err != nil {
			t.Errorf("AddTool(%q): %v", name, err)
		}
	}
	if err := s.AddTool(&Tool{Name: "draft7", InputSchema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"}}}`}, h); err != nil {
		t.Errorf("draft-07 schema: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("AddTool with a bad name did not panic")
		}
	}()
	AddTool(s, &Tool{Name: "bad name"}, func(context.Context, *CallToolRequest, struct{}) (*CallToolResult, any, error) { return nil, nil, nil })
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children,omitempty"`
}

func TestRecursiveTypeSchema(t *testing.T) {
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "tree"}, func(ctx context.Context, req *CallToolRequest, in node) (*CallToolResult, any, error) {
		return TextResult(fmt.Sprint(len(in.Children))), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	var res CallToolResult
	p.result("tools/call", `{"name":"tree","arguments":{"name":"a","children":[{"name":"b"},{"name":"c","children":[]}]}}`, &res)
	if res.IsError || res.Content[0].(*TextContent).Text != "2" {
		t.Errorf("recursive: %+v", res)
	}
	res = CallToolResult{}
	p.result("tools/call", `{"name":"tree","arguments":{"name":"a","children":[{"nam":"b"}]}}`, &res)
	if !res.IsError {
		t.Errorf("nested validation did not run")
	}
}

func TestRawToolOutputSchemaEnforced(t *testing.T) {
	s := NewServer(nil, nil)
	s.AddTool(&Tool{Name: "bad", InputSchema: `{"type":"object"}`, OutputSchema: `{"type":"object","required":["n"]}`},
		func(context.Context, *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{StructuredContent: map[string]any{"m": 1}}, nil
		})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	if code, _ := p.rpcError("tools/call", `{"name":"bad"}`); code != -32603 {
		t.Errorf("nonconforming structured content: code %d", code)
	}
}

func TestPagination(t *testing.T) {
	s := NewServer(nil, &ServerOptions{PageSize: 2})
	h := func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil }
	for _, n := range []string{"e", "c", "a", "d", "b"} {
		s.AddTool(&Tool{Name: n, InputSchema: `{"type":"object"}`}, h)
	}
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	var names []string
	cursor := ""
	for pages := 0; pages < 10; pages++ {
		var page struct {
			Tools      []struct{ Name string }
			NextCursor *string
		}
		params := "{}"
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		p.result("tools/list", params, &page)
		for _, t := range page.Tools {
			names = append(names, t.Name)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
		if pages == 0 {
			// A tool added between pages does not disturb the walk.
			s.AddTool(&Tool{Name: "aa", InputSchema: `{"type":"object"}`}, h)
		}
	}
	if got := strings.Join(names, ","); got != "a,b,c,d,e" {
		t.Errorf("pages gave %s", got)
	}
	for _, bad := range []string{`{"cursor":"garbage!"}`, `{"cursor":"bm90IG91cnM"}`, `{"cursor":5}`} {
		if code, _ := p.rpcError("tools/list", bad); code != -32602 {
			t.Errorf("cursor %s: code %d", bad, code)
		}
	}
}

func TestToolListChanged(t *testing.T) {
	s := echoServer(nil)
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.result("ping", "", nil)
	for i := 0; i < 20; i++ {
		s.AddTool(&Tool{Name: fmt.Sprintf("t%d", i), InputSchema: `{"type":"object"}`}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil })
	}
	m := p.recv()
	if m.Method != "notifications/tools/list_changed" {
		t.Fatalf("got %s", m.Raw)
	}
	// The burst was coalesced: changes within 10ms share a notification,
	// so twenty additions send far fewer than twenty however slow the
	// machine (under the race detector a burst can straddle windows).
	p.send(`{"jsonrpc":"2.0","id":"quiet-check","method":"ping"}`)
	notes := 1
	for m := p.recv(); string(m.ID) != `"quiet-check"`; m = p.recv() {
		if m.Method != "notifications/tools/list_changed" {
			t.Fatalf("got %s", m.Raw)
		}
		notes++
	}
	if notes >= 20 {
		t.Errorf("%d list_changed notifications for one burst of 20 additions", notes)
	}
	s.RemoveTools("t0", "nonexistent")
	if m := p.recv(); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("after remove: %s", m.Raw)
	}
	var list struct{ Tools []struct{ Name string } }
	p.result("tools/list", "", &list)
	if len(list.Tools) != 20 {
		t.Errorf("%d tools", len(list.Tools))
	}
}

// A schema inferred from Go types is valid by construction: its full
// validator is compiled only when the flat fast path cannot decide, so a
// server whose arguments are always well formed never compiles one (nor
// the dialects' metaschemas, the bulk of a process's first compile). A
// schema the author wrote is compiled, and checked, at registration.
func TestInferredSchemaCompiledOnDemand(t *testing.T) {
	type in struct {
		Text string `json:"text"`
	}
	s := NewServer(nil, nil)
	echo := func(_ context.Context, _ *CallToolRequest, a in) (*CallToolResult, any, error) {
		return TextResult(a.Text), nil, nil
	}
	AddTool(s, &Tool{Name: "echo"}, echo)
	AddTool(s, &Tool{Name: "written", InputSchema: `{"type":"object","properties":{"text":{"type":"string"}}}`}, echo)
	compiled := func(name string) bool {
		st, ok := s.tools.get(name)
		if !ok {
			t.Fatalf("no tool %q", name)
		}
		return st.input.compiled != nil
	}
	if compiled("echo") {
		t.Error("the inferred schema was compiled at registration")
	}
	if !compiled("written") {
		t.Error("the schema the author wrote was not compiled at registration")
	}

	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.result("tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, nil)
	if compiled("echo") {
		t.Error("a call the flat path accepted compiled the validator")
	}
	m := p.call("tools/call", `{"name":"echo","arguments":{"text":7}}`)
	var res struct {
		Content []map[string]any
		IsError bool
	}
	json.Unmarshal(m.Result, &res)
	if !res.IsError || len(res.Content) == 0 {
		t.Fatalf("bad arguments: %s", m.Raw)
	}
	contains(t, res.Content[0]["text"].(string), "/text")
	if !compiled("echo") {
		t.Error("the validator was not compiled for arguments the flat path refused")
	}

	// An inferred schema the flat path cannot take needs its validator
	// on every call: it is compiled in the background at registration.
	type nested struct {
		Inner struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	AddTool(s, &Tool{Name: "nested"}, func(_ context.Context, _ *CallToolRequest, a nested) (*CallToolResult, any, error) {
		return TextResult("ok"), nil, nil
	})
	st, _ := s.tools.get("nested")
	if st.input.flat != nil {
		t.Fatal("the nested schema took the flat path")
	}
	deadline := time.Now().Add(20 * time.Second) // a bound on a hang, not a timing assertion
	for !st.input.ready.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the nested schema's validator was never compiled")
		}
		time.Sleep(time.Millisecond)
	}
	if v, err := st.input.validator(); v == nil || err != nil {
		t.Errorf("validator: %v %v", v, err)
	}
}
