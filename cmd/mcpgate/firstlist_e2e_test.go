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
)

// Issue 20: a stdio gateway started as Claude Desktop starts it (serve
// --stdio --config FILE) with three real npm servers answers the first
// tools/list with all their tools, not with an empty list followed by
// list_changed that many clients never act on; and a one-shot CLI call
// through a stdio gateway reaches an upstream's tool.
func TestFirstListingHasEveryUpstreamsTools(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir := t.TempDir()
	sandbox := filepath.Join(dir, "sandbox")
	os.Mkdir(sandbox, 0o755)
	npx := func(pkg string, args ...string) map[string]any {
		return map[string]any{"command": "npx", "args": append([]string{"-y", pkg}, args...)}
	}
	memory := npx("@modelcontextprotocol/server-memory@2026.8.31")
	memory["env"] = map[string]string{"MEMORY_FILE_PATH": filepath.Join(dir, "memory.jsonl")}
	cfg, _ := json.Marshal(map[string]any{
		// npx may download the packages first: a start window for that.
		"startWindow": "120s",
		"mcpServers": map[string]any{
			"everything": npx("@modelcontextprotocol/server-everything@2026.8.31", "stdio"),
			"filesystem": npx("@modelcontextprotocol/server-filesystem@2026.8.31", sandbox),
			"memory":     memory,
		},
	})
	file := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a bound on a hang, downloads included
	defer cancel()
	cmd := exec.Command(binary, "serve", "--stdio", "--config", file, "--db", filepath.Join(dir, "tasks.db"))
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{RequestTimeout: 3 * time.Minute}).Connect(ctx, &mcp.CommandTransport{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil) // the first and only listing
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, tool := range res.Tools {
		server, _, _ := strings.Cut(tool.Name, "_")
		seen[server]++
	}
	for _, s := range []string{"everything", "filesystem", "memory"} {
		if seen[s] == 0 {
			t.Errorf("the first tools/list has no tool of %s: %v", s, seen)
		}
	}
	r := cli(t, nil, "tools", "call", "memory_read_graph", "--timeout", "120s", "--", binary, "serve", "--stdio", "--config", file, "--db", filepath.Join(dir, "tasks2.db"))
	if r.code != 0 || !strings.Contains(r.stdout, "entities") {
		t.Errorf("a one-shot call through a stdio gateway: %v", r)
	}
}
