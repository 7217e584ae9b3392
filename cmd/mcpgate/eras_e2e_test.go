package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// One `mcpgate serve` serves a 2025-11-25 client and a 2026-07-28 client
// at the same time, over the real binary and loopback HTTP; each sees the
// other's tasks, in its own era's shapes.
func TestBothErasOneHTTPServer(t *testing.T) {
	p := startHTTP(t)
	ctx := context.Background()
	connect := func(version string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "eras-" + version, Version: "1"}, &mcp.ClientOptions{ProtocolVersion: version}).
			Connect(ctx, &mcphttp.ClientTransport{Endpoint: p.url})
		if err != nil {
			t.Fatalf("connect %q: %v", version, err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	legacy, perRequest := connect(mcp.LatestNegotiatedVersion), connect("")
	if legacy.ProtocolVersion() != mcp.LatestNegotiatedVersion || perRequest.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("negotiated %s and %s", legacy.ProtocolVersion(), perRequest.ProtocolVersion())
	}
	var wg sync.WaitGroup
	for i := range 10 {
		for _, cs := range []*mcp.ClientSession{legacy, perRequest} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(ctx, "create_task", map[string]any{"title": fmt.Sprintf("%s task %d", cs.ProtocolVersion(), i)})
				if err != nil || res.IsError {
					t.Errorf("%s create_task: %v %+v", cs.ProtocolVersion(), err, res)
				}
			}()
		}
	}
	wg.Wait()
	for _, cs := range []*mcp.ClientSession{legacy, perRequest} {
		res, err := cs.CallTool(ctx, "list_tasks", map[string]any{"limit": 100})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if n := strings.Count(string(b), `"title"`); n != 20 {
			t.Errorf("%s sees %d tasks, want 20", cs.ProtocolVersion(), n)
		}
	}
}

// One `mcpgate serve --stdio` process: a legacy session and per-request
// requests interleave on the same pipe, each answered in its era.
func TestBothErasOneStdioProcess(t *testing.T) {
	p := start(t, serveArgs(filepath.Join(t.TempDir(), "tasks.db"))...)
	// A dual-era client's probe first: it must not pin the process.
	if resp := p.roundTrip(`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`); !strings.Contains(resp, `"supportedVersions"`) {
		t.Fatalf("discover: %s", resp)
	}
	p.initialize()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for i := range 5 {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"L%d","method":"tools/call","params":{"name":"create_task","arguments":{"title":"legacy %d"}}}`, i, i))
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"M%d","method":"tools/call","params":{"name":"create_task","arguments":{"title":"per-request %d"},%s}}`, i, i, meta))
	}
	for range 10 {
		line := p.recv()
		var m struct {
			ID     string          `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal([]byte(line), &m)
		perRequestShape := strings.Contains(string(m.Result), `"resultType":"complete"`)
		switch {
		case m.Result == nil:
			t.Errorf("error: %s", line)
		case strings.HasPrefix(m.ID, "M") != perRequestShape:
			t.Errorf("%s answered in the wrong era: %s", m.ID, line)
		}
	}
	resp := p.roundTrip(`{"jsonrpc":"2.0","id":"list","method":"tools/call","params":{"name":"list_tasks","arguments":{"limit":100}}}`)
	if n := strings.Count(resp, `\"title\"`); n != 10 {
		t.Errorf("%d tasks listed, want 10: %.300s", n, resp)
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
