package mcp

import (
	"context"
	"strings"
	"testing"
)

// A listen stream: the acknowledgement first, then only the
// notifications asked for, each tagged with the listen id (its JSON type
// kept); a cancellation ends it.
func TestPerRequestListen(t *testing.T) {
	s := featureServer(nil)
	p := startPeer(t, s, nil)
	p.send(`{"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a.txt"]},%s}}`, perRequestMeta(``))
	ack := p.recv()
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(ack.Raw, `"io.modelcontextprotocol/subscriptionId":"L1"`) {
		t.Fatalf("first message %s, want the acknowledgement tagged L1", ack.Raw)
	}
	if strings.Contains(ack.Raw, "taskIds") || !strings.Contains(ack.Raw, `"toolsListChanged":true`) {
		t.Errorf("acknowledged %s", ack.Raw)
	}
	s.AddPrompt(&Prompt{Name: "extra"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) { return &GetPromptResult{}, nil })
	s.AddTool(&Tool{Name: "extra", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) { return TextResult(""), nil })
	got := p.recv()
	if got.Method != "notifications/tools/list_changed" || !strings.Contains(got.Raw, `"_meta":{"io.modelcontextprotocol/subscriptionId":"L1"}`) {
		t.Errorf("got %s, want tools/list_changed tagged L1 (and no prompts one)", got.Raw)
	}
	s.ResourceUpdated("file:///a.txt")
	got = p.recv()
	if got.Method != "notifications/resources/updated" || !strings.Contains(got.Raw, `"uri":"file:///a.txt"`) || !strings.Contains(got.Raw, `"L1"`) {
		t.Errorf("got %s, want resources/updated for a.txt tagged L1", got.Raw)
	}
	s.ResourceUpdated("file:///other")
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}}`)
	p.expectQuiet()
}

func perRequestMeta(extra string) string {
	m := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}`
	if extra != "" {
		m += "," + extra
	}
	return m + "}"
}
