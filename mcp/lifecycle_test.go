package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=the text to echo back"`
}

func echoServer(opts *ServerOptions) *Server {
	s := NewServer(&Implementation{Name: "test", Title: "Test Server", Version: "1.0", WebsiteURL: "https://example.com"}, opts)
	AddTool(s, &Tool{Name: "echo", Description: "Echo the text"}, func(ctx context.Context, req *CallToolRequest, in echoIn) (*CallToolResult, any, error) {
		return TextResult(in.Text), nil, nil
	})
	return s
}

func TestLifecycle(t *testing.T) {
	p := startPeer(t, echoServer(nil), nil)

	// ping is answered in every state.
	p.result("ping", "", nil)
	code, text := p.rpcError("tools/list", "")
	if code != -32600 {
		t.Errorf("tools/list before initialize: code %d", code)
	}
	contains(t, text, "send initialize first")

	var init InitializeResult
	p.result("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, &init)
	if init.ProtocolVersion != "2025-11-25" || init.ServerInfo.Name != "test" || init.Capabilities.Tools == nil {
		t.Errorf("initialize result = %+v", init)
	}
	// Requests between initialize and initialized are served.
	p.result("tools/list", "", nil)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	p.result("ping", "", nil)

	code, text = p.rpcError("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)
	if code != -32600 {
		t.Errorf("second initialize: code %d", code)
	}
	contains(t, text, "only once")
}

func TestVersionNegotiation(t *testing.T) {
	for _, tt := range []struct{ asked, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2099-01-01", LatestNegotiatedVersion}, // sorts later, still unsupported
		{"2000-01-01", LatestNegotiatedVersion},
		{"2025-11-25-draft", LatestNegotiatedVersion},
		{"1.0", LatestNegotiatedVersion},
	} {
		t.Run(tt.asked, func(t *testing.T) {
			p := startPeer(t, echoServer(nil), nil)
			var res InitializeResult
			if err := json.Unmarshal(p.initialize(tt.asked, ""), &res); err != nil {
				t.Fatal(err)
			}
			if res.ProtocolVersion != tt.want {
				t.Errorf("negotiated %q, want %q", res.ProtocolVersion, tt.want)
			}
		})
	}
	p := startPeer(t, echoServer(nil), nil)
	if code, _ := p.rpcError("initialize", `{"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`); code != -32602 {
		t.Errorf("initialize without protocolVersion: code %d", code)
	}
	if code, _ := p.rpcError("initialize", `{"protocolVersion":5}`); code != -32602 {
		t.Errorf("initialize with a numeric protocolVersion: code %d", code)
	}
}

func TestServerInfoPerRevision(t *testing.T) {
	for _, tt := range []struct {
		version string
		want    string
	}{
		{"2025-03-26", `{"name":"test","version":"1.0"}`},
		{"2025-06-18", `{"name":"test","title":"Test Server","version":"1.0"}`},
		{"2025-11-25", `{"name":"test","title":"Test Server","version":"1.0","websiteUrl":"https://example.com"}`},
	} {
		p := startPeer(t, echoServer(nil), nil)
		var res struct{ ServerInfo json.RawMessage }
		json.Unmarshal(p.initialize(tt.version, ""), &res)
		if string(res.ServerInfo) != tt.want {
			t.Errorf("%s: serverInfo %s, want %s", tt.version, res.ServerInfo, tt.want)
		}
	}
}

func TestCapabilitiesDeclaredForWhatIsRegistered(t *testing.T) {
	bare := NewServer(nil, nil)
	p := startPeer(t, bare, nil)
	var res struct{ Capabilities map[string]json.RawMessage }
	json.Unmarshal(p.initialize(LatestNegotiatedVersion, ""), &res)
	if len(res.Capabilities) != 0 {
		t.Errorf("bare server declares %v", res.Capabilities)
	}
	if code, _ := p.rpcError("tools/list", ""); code != -32601 {
		t.Errorf("tools/list on a server without tools: code %d", code)
	}
	if code, _ := p.rpcError("prompts/list", ""); code != -32601 {
		t.Errorf("prompts/list on a server without prompts: code %d", code)
	}
	if code, _ := p.rpcError("logging/setLevel", `{"level":"info"}`); code != -32601 {
		t.Errorf("logging/setLevel without logging: code %d", code)
	}

	full := echoServer(&ServerOptions{Logging: true, CompletionHandler: func(context.Context, *CompleteRequest) (*CompleteResult, error) { return nil, nil }})
	full.AddPrompt(&Prompt{Name: "p"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil })
	full.AddResource(&Resource{URI: "file:///a", Name: "a"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) { return nil, nil })
	p = startPeer(t, full, nil)
	res.Capabilities = nil
	json.Unmarshal(p.initialize(LatestNegotiatedVersion, ""), &res)
	want := map[string]string{
		"tools":       `{"listChanged":true}`,
		"prompts":     `{"listChanged":true}`,
		"resources":   `{"subscribe":true,"listChanged":true}`,
		"logging":     `{}`,
		"completions": `{}`,
	}
	for k, v := range want {
		if string(res.Capabilities[k]) != v {
			t.Errorf("capability %s = %s, want %s", k, res.Capabilities[k], v)
		}
	}
	if len(res.Capabilities) != len(want) {
		t.Errorf("capabilities %v", res.Capabilities)
	}

	forced := NewServer(nil, &ServerOptions{HasTools: true})
	p = startPeer(t, forced, nil)
	res.Capabilities = nil
	json.Unmarshal(p.initialize(LatestNegotiatedVersion, ""), &res)
	if string(res.Capabilities["tools"]) != `{"listChanged":true}` {
		t.Errorf("HasTools: %v", res.Capabilities)
	}
	var list struct{ Tools []any }
	p.result("tools/list", "", &list)
	if list.Tools == nil || len(list.Tools) != 0 {
		t.Errorf("empty tools/list must be an empty array")
	}
}

func TestEndOfInputEndsServeWithInFlightAnswered(t *testing.T) {
	s := echoServer(nil)
	release := make(chan struct{})
	AddTool(s, &Tool{Name: "slow"}, func(ctx context.Context, req *CallToolRequest, in struct{}) (*CallToolResult, any, error) {
		<-release
		return TextResult("finished"), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize(LatestNegotiatedVersion, "")
	p.send(`{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"slow"}}`)
	p.expectQuiet() // the call is admitted
	p.in.Close()    // end of input while the call runs
	close(release)
	m := p.recv()
	if string(m.ID) != `"slow-1"` || m.Error != nil {
		t.Fatalf("in-flight call after EOF: %s", m.Raw)
	}
	if err := <-p.served; err != nil {
		t.Errorf("ServeConn after EOF: %v", err)
	}
	p.served <- nil // for the cleanup
}
