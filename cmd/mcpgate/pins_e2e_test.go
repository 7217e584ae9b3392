package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// mcpgate serve --config with a server under pins: approve withholds
// its tools; mcpgate pins list and diff show them waiting, mcpgate pins
// approve SERVER lets them through, and the running gateway publishes
// them without a restart (and withholds them again after mcpgate pins
// reset); the approval lands in the audit log.
func TestPinsApproveFromTheCommandLine(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gw.json")
	b, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"work": map[string]any{
			"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "work.db")},
			"pins": "approve",
		}},
		"state": map[string]any{"db": filepath.Join(dir, "state.db")},
		"audit": map[string]any{"db": filepath.Join(dir, "audit.db")},
	})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startHTTP(t, "--config", cfg)
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: p.url})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(p.log(), "withholding the tools of a server seen for the first time") {
		if time.Now().After(deadline) {
			t.Fatalf("the gateway did not withhold the new server's tools:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if names := gatewayTools(t, cs); slices.Contains(names, "work_create_task") {
		t.Fatalf("a new server's tool is listed under pins: approve: %v", names)
	}
	pinsCmd := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		out, err := exec.CommandContext(ctx, binary, append([]string{"pins"}, append(args, "--config", cfg)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mcpgate pins %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := pinsCmd("list"); !strings.Contains(out, "work/create_task") || !strings.Contains(out, "new") {
		t.Errorf("pins list:\n%s", out)
	}
	if out := pinsCmd("diff", "work/create_task"); !strings.Contains(out, "== work/create_task: new, pending definition") || !strings.Contains(out, "description: {+") {
		t.Errorf("pins diff:\n%s", out)
	}
	if out := pinsCmd("approve", "work"); !strings.Contains(out, "approved work/create_task") {
		t.Errorf("pins approve:\n%s", out)
	}
	deadline = time.Now().Add(waitFor)
	for !slices.Contains(gatewayTools(t, cs), "work_create_task") {
		if time.Now().After(deadline) {
			t.Fatalf("the approved tools did not appear:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := cs.CallTool(context.Background(), "work_create_task", map[string]any{"title": "approved"}); err != nil {
		t.Errorf("calling the approved tool: %v", err)
	}
	if out := pinsCmd("list", "--json"); !strings.Contains(out, `"approvedBy": "operator"`) || strings.Contains(out, `"state": "new"`) {
		t.Errorf("pins list --json after the approval:\n%s", out)
	}
	// A reset forgets the pins: under approve the tools are new again,
	// and withheld.
	if out := pinsCmd("reset", "work"); !strings.Contains(out, "forgot") {
		t.Errorf("pins reset:\n%s", out)
	}
	deadline = time.Now().Add(waitFor)
	for slices.Contains(gatewayTools(t, cs), "work_create_task") {
		if time.Now().After(deadline) {
			t.Fatalf("the reset tools are still listed:\n%s", p.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	pinsCmd("approve", "work")
	// Naming a tool with nothing to approve is an error that says why.
	out, err := exec.Command(binary, "pins", "approve", "work/create_task", "--config", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "already approved") {
		t.Errorf("approving an approved tool: %v\n%s", err, out)
	}
	a, err := gateway.OpenAudit(filepath.Join(dir, "audit.db"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The gateway writes its records off the request path.
	deadline = time.Now().Add(waitFor)
	for {
		recs, err := a.Query(context.Background(), time.Hour, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var methods []string
		for _, r := range recs {
			if strings.HasPrefix(r.Method, "pins/") {
				methods = append(methods, r.Method+" "+r.Tool+" "+r.Principal)
			}
		}
		if slices.ContainsFunc(methods, func(m string) bool { return strings.HasPrefix(m, "pins/approved create_task cli") }) && slices.Contains(methods, "pins/new  ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit records %q", methods)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
