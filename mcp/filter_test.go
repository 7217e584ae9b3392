package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// Filter hides items from some callers: left out of every list and
// answered as unknown, exactly as if they did not exist.
func TestFilterHidesItems(t *testing.T) {
	s := NewServer(nil, &ServerOptions{Filter: func(ctx context.Context, kind ItemKind, name string) bool {
		return PrincipalFrom(ctx) == "admin" || !strings.Contains(name, "secret")
	}})
	obj := map[string]any{"type": "object"}
	for _, n := range []string{"open", "secret"} {
		s.AddTool(&Tool{Name: n, InputSchema: obj}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return TextResult("ran"), nil })
		s.AddPrompt(&Prompt{Name: n}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil })
		s.AddResource(&Resource{URI: "mem://" + n, Name: n}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}}, nil
		})
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "mem://" + n + "/{id}", Name: n}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{Contents: []*ResourceContents{{Text: "x"}}}, nil
		})
	}
	ss := s.NewSession(MessageWriterFunc(func([]byte) error { return nil }), &SessionOptions{Initialized: &InitializeParams{ProtocolVersion: LatestNegotiatedVersion}})
	ask := func(who, method, params string) string {
		var out string
		ss.Handle(WithPrincipal(context.Background(), who), []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`), MessageWriterFunc(func(b []byte) error {
			out = string(b)
			return nil
		}))
		return out
	}
	for _, tt := range []struct{ method, params string }{
		{"tools/list", `{}`}, {"prompts/list", `{}`}, {"resources/list", `{}`}, {"resources/templates/list", `{}`},
	} {
		if got := ask("bob", tt.method, tt.params); strings.Contains(got, "secret") || !strings.Contains(got, "open") {
			t.Errorf("%s for bob: %s", tt.method, got)
		}
		if got := ask("admin", tt.method, tt.params); !strings.Contains(got, "secret") {
			t.Errorf("%s for admin: %s", tt.method, got)
		}
	}
	for _, tt := range []struct{ method, params string }{
		{"tools/call", `{"name":"secret"}`},
		{"prompts/get", `{"name":"secret"}`},
		{"resources/read", `{"uri":"mem://secret"}`},
		{"resources/read", `{"uri":"mem://secret/7"}`},
		{"resources/subscribe", `{"uri":"mem://secret"}`},
	} {
		if got := ask("bob", tt.method, tt.params); !strings.Contains(got, `"error"`) {
			t.Errorf("%s %s for bob: %s", tt.method, tt.params, got)
		}
		if got := ask("admin", tt.method, tt.params); strings.Contains(got, `"error"`) {
			t.Errorf("%s %s for admin: %s", tt.method, tt.params, got)
		}
	}
}

// A 2026-07-28 listen request's acknowledgement leaves out the resources
// the Filter hides from the caller, as it leaves out unknown tasks, so
// no update of theirs reaches it.
func TestFilterHidesListenedResources(t *testing.T) {
	s := NewServer(nil, &ServerOptions{HasResources: true, Filter: func(ctx context.Context, kind ItemKind, name string) bool {
		return !strings.Contains(name, "secret")
	}})
	s.AddResource(&Resource{URI: "mem://open", Name: "open"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
		return &ReadResourceResult{}, nil
	})
	p := startPeer(t, s, nil)
	p.send(`{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["mem://open","mem://secret"]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	ack := p.recv()
	if !strings.Contains(string(ack.Params), `"resourceSubscriptions":["mem://open"]`) {
		t.Fatalf("acknowledgement %s", ack.Params)
	}
	s.ResourceUpdated("mem://secret")
	s.ResourceUpdated("mem://open")
	if m := p.recv(); !strings.Contains(string(m.Params), "mem://open") {
		t.Errorf("first update %s %s, want mem://open's alone", m.Method, m.Params)
	}
}

// A session's subscriptions are bounded; Subscribed tells whether any
// session still holds one.
func TestSubscriptionsBounded(t *testing.T) {
	s := NewServer(nil, &ServerOptions{HasResources: true, MaxSubscriptions: 2})
	p := startPeer(t, s, nil)
	p.initialize("2025-11-25", "")
	for _, uri := range []string{"mem://a", "mem://b", "mem://a"} {
		if m := p.call("resources/subscribe", `{"uri":"`+uri+`"}`); m.Error != nil {
			t.Fatalf("subscribing to %s: %s", uri, m.Raw)
		}
	}
	if _, msg := p.rpcError("resources/subscribe", `{"uri":"mem://c"}`); !strings.Contains(msg, "already holds 2 resource subscriptions") {
		t.Errorf("a third subscription: %s", msg)
	}
	if !s.Subscribed("mem://a") || s.Subscribed("mem://c") {
		t.Errorf("Subscribed: a %v, c %v", s.Subscribed("mem://a"), s.Subscribed("mem://c"))
	}
	p.call("resources/unsubscribe", `{"uri":"mem://a"}`)
	if s.Subscribed("mem://a") {
		t.Error("still subscribed to mem://a after unsubscribing")
	}
	if m := p.call("resources/subscribe", `{"uri":"mem://c"}`); m.Error != nil {
		t.Errorf("subscribing after an unsubscription: %s", m.Raw)
	}
}

// Methods lists the protocol's methods and the extensions.
func TestMethodsListsExtensions(t *testing.T) {
	s := NewServer(nil, nil)
	if err := s.HandleMethod("x/ext", func(context.Context, *Request) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	m := s.Methods()
	for _, want := range []string{"initialize", "tools/call", "subscriptions/listen", "tasks/get", "x/ext"} {
		if !slices.Contains(m, want) {
			t.Errorf("Methods() = %v, lacks %s", m, want)
		}
	}
	if !slices.IsSorted(m) {
		t.Errorf("Methods() not sorted: %v", m)
	}
}

// HoldListChanged holds the list_changed notifications back and sends
// one per kind when released; holds nest.
func TestHoldListChanged(t *testing.T) {
	s := NewServer(nil, &ServerOptions{HasTools: true})
	p := startPeer(t, s, nil)
	p.initialize("2025-11-25", "")
	outer := s.HoldListChanged()
	inner := s.HoldListChanged()
	obj := map[string]any{"type": "object"}
	for _, n := range []string{"a", "b", "c"} {
		s.AddTool(&Tool{Name: n, InputSchema: obj}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return TextResult("x"), nil })
		time.Sleep(2 * listChangedDelay) // each would be its own notification
	}
	inner()
	inner() // twice is once
	p.expectQuiet()
	outer()
	if m := p.recv(); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("after the release: %s", m.Raw)
	}
	p.expectQuiet()
}
