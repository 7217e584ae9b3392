package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The ops listener says only ready or not to anyone; which upstream is
// down, and why, only to callers with the admin token.
func TestGatewayOpsDetailsNeedTheAdminToken(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"payroll":{"command":"/nonexistent/payroll-server","required":true}}}`), 0o600)
	const token = "adm-7f3c9e1d2b4a6f80"
	tokenFile := filepath.Join(dir, "admin-token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	p := startHTTP(t, "--config", cfg, "--metrics-addr", "127.0.0.1:0", "--admin-token-file", tokenFile)
	m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("no ops address in the log:\n%s", p.log())
	}
	for _, tt := range []struct {
		path, token string
		status      int
		details     bool
	}{
		{"/healthz", "", 200, false},
		{"/readyz", "", 503, false},
		{"/readyz?verbose=1", "", 401, false},
		{"/readyz?verbose=1", "adm-wrong", 401, false},
		{"/readyz?verbose=1", token, 503, true},
	} {
		h := map[string]string{}
		if tt.token != "" {
			h["Authorization"] = "Bearer " + tt.token
		}
		r := curl(t, "GET", m[1]+tt.path, h, "")
		details := strings.Contains(r.body, "payroll") && strings.Contains(r.body, "/nonexistent/")
		leaked := strings.Contains(r.body, "payroll") || strings.Contains(r.body, "nonexistent")
		if r.status != tt.status || details != tt.details || (!tt.details && leaked) {
			t.Errorf("GET %s (token %q): %d %s; want %d, details %v", tt.path, tt.token, r.status, r.body, tt.status, tt.details)
		}
	}
	if strings.Contains(p.log(), token) {
		t.Error("the admin token is in the log")
	}
	// mcpgate status shows the same, to the admin.
	r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", m[1])
	if r.code != 0 || !strings.Contains(r.stdout, "NOT ready") || !strings.Contains(r.stdout, "payroll (required)") || !strings.Contains(r.stdout, "down") || !strings.Contains(r.stdout, "/nonexistent/payroll-server") {
		t.Errorf("mcpgate status: %v", r)
	}
	if r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=adm-wrong-wrong-wrong"}, "status", m[1]); r.code == 0 || !strings.Contains(r.stderr, "refused the admin token") {
		t.Errorf("mcpgate status with a wrong token: %v", r)
	}
}

// Issue 20: an optional upstream that is down leaves the gateway ready,
// so a load balancer does not drain a gateway that serves everything
// else; its state is in mcpgate status. --metrics-addr without --config
// is refused, not ignored.
func TestGatewayReadyWithOptionalUpstreamDown(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"notes":{"command":"/nonexistent/notes-server"}},"builtins":{"tasks":true,"tasksDb":"`+filepath.Join(dir, "b.db")+`"}}`), 0o600)
	const token = "adm-0a1b2c3d4e5f6a7b"
	p := startHTTPEnv(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "--config", cfg, "--metrics-addr", "127.0.0.1:0")
	m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("no ops address in the log:\n%s", p.log())
	}
	waitForCond(t, func() bool { return curl(t, "GET", m[1]+"/readyz", nil, "").status == 200 }, "the gateway to be ready with notes down")
	r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", m[1], "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"ready":true`) || !strings.Contains(r.stdout, `"name":"notes","state":"down"`) {
		t.Errorf("mcpgate status --json: %v", r)
	}
	out, err := runBriefly("serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "t.db"), "--metrics-addr", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, "--metrics-addr serves the gateway's metrics and health: it needs --config") {
		t.Errorf("serve --metrics-addr without --config: %v %s", err, out)
	}
}

// waitForCond polls f until it holds, within waitFor (a bound on a hang).
func waitForCond(t *testing.T, f func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A short admin token, or one with nothing to guard, stops the start.
func TestServeRefusesBadAdminTokens(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{}}`), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("pw\n"), 0o600)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "--metrics-addr", "127.0.0.1:0", "--admin-token-file", short}, "the admin token is 2 bytes; use at least 16"},
		{[]string{"--config", cfg, "--admin-token-file", short}, "--admin-token-file guards the ops listener: it needs --config and --metrics-addr"},
		{[]string{"--config", cfg, "--metrics-addr", "127.0.0.1:0", "--admin-token-file", filepath.Join(dir, "missing")}, "--admin-token-file: open"},
	} {
		out, err := runBriefly(append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "t.db")}, tt.args...)...)
		if err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("serve %v: %v %s; want %s", tt.args, err, out, tt.want)
		}
	}
}

// runBriefly runs the binary to its end, which a refused start reaches at
// once; one that starts serving is stopped after waitFor.
func runBriefly(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	out, err := exec.CommandContext(ctx, binary, args...).CombinedOutput()
	if ctx.Err() != nil {
		return string(out), nil // it served: the start was not refused
	}
	return string(out), err
}
