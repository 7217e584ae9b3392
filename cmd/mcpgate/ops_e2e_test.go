package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The ops listener says only ready or not to anyone; which upstream is
// down, and why, only to callers with the admin token.
func TestGatewayOpsDetailsNeedTheAdminToken(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"payroll":{"command":"/nonexistent/payroll-server"}}}`), 0o600)
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
