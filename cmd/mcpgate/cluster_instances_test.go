package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Issue 23: a server with a process per session (server-memory, instances:
// session) behind three gateway replicas sharing Redis. The session's
// calls land on every replica, direct or through call_tool, yet all reach
// the one process its first call started: each read of the graph shows every entity the session
// created. Without the routing each replica would start a process of its
// own and each read would show a part.
func TestSessionInstanceLivesOnOneReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	rd := testservice.Redis(t)
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{
		"startWindow": "120s",
		// The meta-tools too: a call through call_tool goes where a
		// direct call would.
		"toolSearch": map[string]any{"listing": "search"},
		"mcpServers": map[string]any{
			"memory": map[string]any{
				"command":   "npx",
				"args":      []string{"-y", "@modelcontextprotocol/server-memory@2026.8.31"},
				"env":       map[string]string{"MEMORY_FILE_PATH": "${MCPGATE_INSTANCE_DIR}/memory.jsonl"},
				"instances": "session",
				"timeout":   "120s",
			},
		},
	})
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	front := startCluster(t, 3, serveReady, func(i int) []string {
		return []string{"serve", "--config", file, "--addr", "127.0.0.1:0", "--redis", rd.URL(), "--replica-id", "r" + strconv.Itoa(i), "--log-level", "warn"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound on a hang, downloads included
	defer cancel()
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25", RequestTimeout: 3 * time.Minute}).Connect(ctx,
		&mcphttp.ClientTransport{Endpoint: front, DisableLegacyFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type entity struct {
		Name         string   `json:"name"`
		EntityType   string   `json:"entityType"`
		Observations []string `json:"observations"`
	}
	var want []string
	for i := range 6 {
		name := "project-" + strconv.Itoa(i)
		want = append(want, name)
		args := map[string]any{"entities": []entity{{Name: name, EntityType: "project", Observations: []string{"one"}}}}
		tool := "memory_create_entities"
		if i >= 3 {
			tool, args = "call_tool", map[string]any{"name": tool, "arguments": args}
		}
		res, err := cs.CallTool(ctx, tool, args)
		if err != nil || res.IsError {
			t.Fatalf("create_entities %d (%s): %v %+v", i, tool, err, res)
		}
	}
	for i := range 3 {
		res, err := cs.CallTool(ctx, "memory_read_graph", map[string]any{})
		if err != nil || res.IsError {
			t.Fatalf("read_graph %d: %v %+v", i, err, res)
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
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("read %d of the graph shows %q; want %q: the session's calls reached more than one process", i, names, want)
		}
	}
}
