package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func resourceServer() *Server {
	s := NewServer(nil, nil)
	s.AddResource(&Resource{URI: "file:///readme.md", Name: "readme", MIMEType: "text/markdown", Title: "Read me", Icons: []Icon{{Src: "data:,"}}},
		func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{MIMEType: "text/markdown", Text: "# hello"}}}, nil
		})
	s.AddResourceTemplate(&ResourceTemplate{URITemplate: "blob://{id}", Name: "blob"},
		func(ctx context.Context, req *ReadResourceRequest) (*ReadResourceResult, error) {
			if req.Params.URI == "blob://missing" {
				return nil, ResourceNotFoundError(req.Params.URI)
			}
			return &ReadResourceResult{Contents: []*ResourceContents{{URI: req.Params.URI, Blob: []byte{0, 1, 2}}}}, nil
		})
	return s
}

func TestResources(t *testing.T) {
	s := resourceServer()
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	m := p.call("resources/list", "")
	if string(m.Result) != `{"resources":[{"uri":"file:///readme.md","name":"readme","title":"Read me","mimeType":"text/markdown","icons":[{"src":"data:,"}]}]}` {
		t.Errorf("resources/list = %s", m.Result)
	}
	m = p.call("resources/templates/list", "")
	if string(m.Result) != `{"resourceTemplates":[{"uriTemplate":"blob://{id}","name":"blob"}]}` {
		t.Errorf("templates = %s", m.Result)
	}
	m = p.call("resources/read", `{"uri":"file:///readme.md"}`)
	if string(m.Result) != `{"contents":[{"uri":"file:///readme.md","mimeType":"text/markdown","text":"# hello"}]}` {
		t.Errorf("read = %s", m.Result)
	}
	m = p.call("resources/read", `{"uri":"blob://42"}`)
	if string(m.Result) != `{"contents":[{"uri":"blob://42","blob":"AAEC"}]}` {
		t.Errorf("read via template = %s", m.Result)
	}
	for _, uri := range []string{"file:///nope", "blob://missing"} {
		m = p.call("resources/read", fmt.Sprintf(`{"uri":%q}`, uri))
		if m.Error == nil || m.Error.Code != -32002 || string(m.Error.Data) != fmt.Sprintf(`{"uri":%q}`, uri) {
			t.Errorf("read %s: %s", uri, m.Raw)
		}
	}
	if code, _ := p.rpcError("resources/read", `{}`); code != -32602 {
		t.Errorf("read without uri: %d", code)
	}

	// Subscriptions.
	p.result("resources/subscribe", `{"uri":"file:///readme.md"}`, nil)
	s.ResourceUpdated("file:///other")
	s.ResourceUpdated("file:///readme.md")
	if m := p.recv(); m.Method != "notifications/resources/updated" || string(m.Params) != `{"uri":"file:///readme.md"}` {
		t.Errorf("update: %s", m.Raw)
	}
	p.result("resources/unsubscribe", `{"uri":"file:///readme.md"}`, nil)
	s.ResourceUpdated("file:///readme.md")
	p.expectQuiet()

	// Titles and icons are dropped for older clients.
	p2 := startPeer(t, s, nil)
	p2.initialize("2025-03-26", "")
	if m := p2.call("resources/list", ""); strings.Contains(string(m.Result), "title") || strings.Contains(string(m.Result), "icons") {
		t.Errorf("2025-03-26 resources/list = %s", m.Result)
	}
}

func promptServer() *Server {
	s := NewServer(nil, nil)
	s.AddPrompt(&Prompt{Name: "review", Title: "Code review", Arguments: []*PromptArgument{{Name: "code", Required: true, Title: "Code"}, {Name: "style"}}},
		func(ctx context.Context, req *GetPromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{Description: "review", Messages: []*PromptMessage{
				{Role: RoleUser, Content: &TextContent{Text: "Review: " + req.Params.Arguments["code"]}},
				{Role: RoleUser, Content: &ResourceLink{URI: "file:///x", Name: "x"}},
			}}, nil
		})
	return s
}

func TestPrompts(t *testing.T) {
	p := startPeer(t, promptServer(), nil)
	p.initialize(LatestNegotiatedVersion, "")
	m := p.call("prompts/list", "")
	if string(m.Result) != `{"prompts":[{"name":"review","title":"Code review","arguments":[{"name":"code","title":"Code","required":true},{"name":"style"}]}]}` {
		t.Errorf("prompts/list = %s", m.Result)
	}
	var res GetPromptResult
	p.result("prompts/get", `{"name":"review","arguments":{"code":"x := 1"}}`, &res)
	if len(res.Messages) != 2 || res.Messages[0].Content.(*TextContent).Text != "Review: x := 1" {
		t.Errorf("prompts/get = %+v", res)
	}
	if _, ok := res.Messages[1].Content.(*ResourceLink); !ok {
		t.Errorf("resource link block: %#v", res.Messages[1].Content)
	}
	for _, tt := range []struct{ params, want string }{
		{`{"name":"nope"}`, "unknown prompt"},
		{`{"name":"review"}`, "code"},
		{`{"name":"review","arguments":{"code":5}}`, "/arguments/code"},
	} {
		code, msg := p.rpcError("prompts/get", tt.params)
		if code != -32602 || !strings.Contains(msg, tt.want) {
			t.Errorf("prompts/get %s: %d %q", tt.params, code, msg)
		}
	}
	p2 := startPeer(t, promptServer(), nil)
	p2.initialize("2025-03-26", "")
	m = p2.call("prompts/get", `{"name":"review","arguments":{"code":"y"}}`)
	if strings.Contains(string(m.Result), "resource_link") || strings.Contains(string(p2.call("prompts/list", "").Result), "title") {
		t.Errorf("2025-03-26 prompt shaping: %s", m.Result)
	}
}

func TestCompletion(t *testing.T) {
	s := promptServer()
	s.opts.CompletionHandler = func(ctx context.Context, req *CompleteRequest) (*CompleteResult, error) {
		var vals []string
		for i := 0; i < 150; i++ {
			vals = append(vals, fmt.Sprintf("%s%d", req.Params.Argument.Value, i))
		}
		return &CompleteResult{Completion: CompletionValues{Values: vals}}, nil
	}
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	var res CompleteResult
	p.result("completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"style","value":"go"}}`, &res)
	if len(res.Completion.Values) != 100 || !res.Completion.HasMore || res.Completion.Total != 150 || res.Completion.Values[0] != "go0" {
		t.Errorf("completion = %+v", res.Completion)
	}
	for _, bad := range []string{`{"ref":{"type":"ref/prompt","name":"nope"},"argument":{"name":"a","value":""}}`, `{"ref":{"type":"ref/x"},"argument":{"name":"a","value":""}}`} {
		if code, _ := p.rpcError("completion/complete", bad); code != -32602 {
			t.Errorf("%s: code %d", bad, code)
		}
	}
	// 2024-11-05 clients may call it without a capability.
	p2 := startPeer(t, s, nil)
	var init struct{ Capabilities map[string]any }
	json.Unmarshal(p2.initialize("2024-11-05", ""), &init)
	if init.Capabilities["completions"] != nil {
		t.Errorf("completions declared to a 2024-11-05 client")
	}
	p2.result("completion/complete", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"style","value":"a"}}`, nil)
}

func TestLogging(t *testing.T) {
	s := NewServer(nil, &ServerOptions{Logging: true})
	AddTool(s, &Tool{Name: "chatty"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		for _, l := range []LoggingLevel{LevelDebug, LevelInfo, LevelWarning, LevelError} {
			if err := req.Log(l, "chatty", map[string]any{"level": string(l)}); err != nil {
				return nil, nil, err
			}
		}
		return TextResult("ok"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	if code, _ := p.rpcError("logging/setLevel", `{"level":"loud"}`); code != -32602 {
		t.Errorf("bad level: %d", code)
	}
	levelsSeen := func() []string {
		p.send(`{"jsonrpc":"2.0","id":"chat","method":"tools/call","params":{"name":"chatty"}}`)
		var seen []string
		for {
			m := p.recv()
			if m.ID != nil {
				return seen
			}
			var lp LoggingMessageParams
			json.Unmarshal(m.Params, &lp)
			if m.Method != "notifications/message" || lp.Logger != "chatty" {
				t.Fatalf("unexpected %s", m.Raw)
			}
			seen = append(seen, string(lp.Level))
		}
	}
	if got := strings.Join(levelsSeen(), ","); got != "debug,info,warning,error" {
		t.Errorf("before setLevel: %s", got)
	}
	p.result("logging/setLevel", `{"level":"warning"}`, nil)
	if got := strings.Join(levelsSeen(), ","); got != "warning,error" {
		t.Errorf("after setLevel warning: %s", got)
	}
}
