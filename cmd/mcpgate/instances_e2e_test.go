package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Issue 21: a real stateful npm server, server-memory, with instances:
// session and its memory file in each instance's own directory
// (${MCPGATE_INSTANCE_DIR}): two HTTP clients of one `mcpgate serve` each
// create entities, and each reads back only its own graph.
func TestSessionInstancesOfTheMemoryServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{
		// npx may download the package first: a start window for that.
		"startWindow": "120s",
		"mcpServers": map[string]any{
			"memory": map[string]any{
				"command":   "npx",
				"args":      []string{"-y", "@modelcontextprotocol/server-memory@2026.8.31"},
				"env":       map[string]string{"MEMORY_FILE_PATH": "${MCPGATE_INSTANCE_DIR}/memory.jsonl"},
				"instances": "session",
				"timeout":   "120s", // a session's first call starts its instance
			},
		},
	})
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startHTTP(t, "--config", file)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound on a hang, downloads included
	defer cancel()
	type entity struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	}
	clients := map[string]*mcp.ClientSession{}
	for _, who := range []string{"alice", "bob"} {
		cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25", RequestTimeout: 3 * time.Minute}).Connect(ctx,
			&mcphttp.ClientTransport{Endpoint: p.url, DisableLegacyFallback: true})
		if err != nil {
			t.Fatalf("%v\n%s", err, p.log())
		}
		t.Cleanup(func() { cs.Close() })
		clients[who] = cs
	}
	for who, cs := range clients {
		res, err := cs.CallTool(ctx, "memory_create_entities", map[string]any{"entities": []entity{
			{Name: who + "-project", EntityType: "project", Observations: []string{"kept by " + who}},
		}})
		if err != nil || res.IsError {
			t.Fatalf("%s's create_entities: %v %+v\n%s", who, err, res, p.log())
		}
	}
	for who, cs := range clients {
		res, err := cs.CallTool(ctx, "memory_read_graph", map[string]any{})
		if err != nil || res.IsError {
			t.Fatalf("%s's read_graph: %v %+v", who, err, res)
		}
		var graph struct {
			Entities []entity `json:"entities"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &graph); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range graph.Entities {
			names = append(names, e.Name)
		}
		if strings.Join(names, ",") != who+"-project" {
			t.Errorf("%s reads back the entities %q; want only %q", who, names, who+"-project")
		}
	}
}
