package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// writeGatewayConfig writes a Claude Desktop style file whose servers are
// this mcpgate binary serving task stores over stdio.
func writeGatewayConfig(t *testing.T, path string, servers ...string) {
	t.Helper()
	dir := filepath.Dir(path)
	m := map[string]any{}
	for _, s := range servers {
		m[s] = map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, s+".db")}}
	}
	b, _ := json.Marshal(map[string]any{
		"mcpServers":     m,
		"builtins":       map[string]any{"tasks": true, "tasksDb": filepath.Join(dir, "builtin.db")},
		"globalShortcut": "Ctrl+Space", // what Claude Desktop keeps there too
	})
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func gatewayTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// mcpgate serve --config: two stdio upstreams and the built-ins behind one
// HTTP endpoint, each store its own; editing the file adds and removes
// servers while the client's session stays up.
func TestGatewayServeConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	writeGatewayConfig(t, cfg, "work", "home")
	p := startHTTP(t, "--config", cfg)
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: p.url})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(waitFor)
	for {
		names := gatewayTools(t, cs)
		if slices.Contains(names, "work_create_task") && slices.Contains(names, "home_create_task") && slices.Contains(names, "tasks_create_task") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tools %v\n%s", names, p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := cs.CallTool(context.Background(), "work_create_task", map[string]any{"title": "ship the gateway"}); err != nil {
		t.Fatal(err)
	}
	list := func(tool string) string {
		res, err := cs.CallTool(context.Background(), tool, map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	if !strings.Contains(list("work_list_tasks"), "ship the gateway") || strings.Contains(list("home_list_tasks"), "ship the gateway") {
		t.Error("the upstreams do not keep their own stores")
	}

	writeGatewayConfig(t, cfg, "work", "garden")
	deadline = time.Now().Add(waitFor)
	for {
		names := gatewayTools(t, cs)
		if slices.Contains(names, "garden_create_task") && !slices.Contains(names, "home_create_task") && slices.Contains(names, "work_create_task") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the edit: tools %v\n%s", names, p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(list("work_list_tasks"), "ship the gateway") {
		t.Error("the unchanged upstream lost its state")
	}
	if strings.Contains(p.log(), `msg="gateway: stopping upstream" upstream=work`) {
		t.Errorf("the unchanged upstream was restarted:\n%s", p.log())
	}
}

// A broken file is refused at start with each error's place.
func TestGatewayServeBadConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "gw.yaml")
	os.WriteFile(cfg, []byte("mcpServers:\n  Bad Name:\n    command: x\n"), 0o600)
	p := start(t, "serve", "--stdio", "--config", cfg)
	p.stdin.Close()
	if code := p.wait(); code == 0 {
		t.Fatal("mcpgate accepted a bad configuration")
	}
	if !strings.Contains(p.stderr.String(), "gw.yaml:2:") {
		t.Errorf("stderr lacks the error's place:\n%s", p.stderr.String())
	}
}

// serve --stdio --tenant: the local user acts for one tenant of the file,
// seeing only its servers and tools; a tenant the file lacks is refused
// at start, naming the ones it has.
func TestGatewayStdioTenant(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gw.json")
	m := map[string]any{}
	for _, s := range []string{"work", "home"} {
		m[s] = map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, s+".db")}}
	}
	b, _ := json.Marshal(map[string]any{
		"mcpServers": m,
		"tenants": map[string]any{"acme": map[string]any{
			"principals": []string{"apikey:acme"},
			"servers":    []string{"work"},
			"tools":      map[string]any{"deny": []string{"*_delete_task"}},
		}},
	})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(nil, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(binary, "serve", "--stdio", "--config", cfg, "--tenant", "acme")})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(waitFor)
	var names []string
	for {
		names = gatewayTools(t, cs)
		if slices.Contains(names, "work_create_task") || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !slices.Contains(names, "work_create_task") || slices.ContainsFunc(names, func(n string) bool {
		return strings.HasPrefix(n, "home_") || strings.HasSuffix(n, "_delete_task")
	}) {
		t.Errorf("acme's tools over stdio: %v", names)
	}
	if _, err := cs.CallTool(ctx, "home_list_tasks", map[string]any{}); err == nil || !strings.Contains(err.Error(), "-32602") {
		t.Errorf("another server's tool: %v, want -32602", err)
	}
	if _, err := cs.CallTool(ctx, "work_create_task", map[string]any{"title": "t"}); err != nil {
		t.Errorf("acme's own tool: %v", err)
	}

	p := start(t, "serve", "--stdio", "--config", cfg, "--tenant", "nope")
	p.stdin.Close()
	if code := p.wait(); code == 0 || !strings.Contains(p.stderr.String(), "it has acme") {
		t.Errorf("an unknown tenant: exit %d\n%s", code, p.stderr.String())
	}
}

// Issue 21: a reload refused for an error in the file says the error in
// the log, not only that there is one.
func TestGatewayRejectedReloadSaysTheError(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	writeGatewayConfig(t, cfg, "work")
	p := startHTTP(t, "--config", cfg)
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"Bad Name": {"command": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGHUP) // whether or not the watcher saw the old content
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(p.log(), "keeping the running one") {
		if time.Now().After(deadline) {
			t.Fatalf("no rejected reload in the log:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	var line string
	for _, l := range strings.Split(p.log(), "\n") {
		if strings.Contains(l, "keeping the running one") {
			line = l
		}
	}
	if !strings.Contains(line, `server name \"Bad Name\" is not 1 to 32 of a-z`) {
		t.Errorf("the rejected reload's line does not say the error: %s", line)
	}
}
