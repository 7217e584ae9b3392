package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Issue 20, upstream health through the real binary: an HTTP upstream
// that goes away takes its tools down at the first call that cannot
// reach it (the next calls get -32010 with retryAfterMs, never "unknown
// tool"), while the gateway stays ready; a stdio server that fails at
// start is started once per attempt, its failure logged at warn once,
// and mcpgate status says what happened to each.
func TestGatewayBinaryUpstreamHealth(t *testing.T) {
	dir := t.TempDir()
	h := mcphttp.NewHandler(fixtureServer(), nil)
	up := httptest.NewServer(h)
	stopUp := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		up.Close()
	}
	defer stopUp()
	starts := filepath.Join(dir, "starts")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"remote":  map[string]any{"url": up.URL + "/mcp", "healthInterval": "1h"},
		"failing": map[string]any{"command": "sh", "args": []string{"-c", "echo started >> " + starts + "; echo cannot-open-the-db >&2; exit 3"}},
	}})
	file := filepath.Join(dir, "gateway.json")
	os.WriteFile(file, cfg, 0o600)
	const token = "adm-health-0123456789"
	p := startHTTPEnv(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "--config", file, "--metrics-addr", "127.0.0.1:0")
	ops := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(p.log())
	if ops == nil {
		t.Fatalf("no ops address:\n%s", p.log())
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}).Connect(ctx, &mcphttp.ClientTransport{Endpoint: p.url, DisableLegacyFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, "remote_echo", map[string]string{"message": "x"}); err != nil {
		t.Fatalf("remote_echo: %v\n%s", err, p.log())
	}
	stopUp()
	cs.CallTool(ctx, "remote_echo", map[string]string{"message": "x"}) // finds it gone
	var e *jsonrpc.Error
	waitForCond(t, func() bool {
		_, err := cs.CallTool(ctx, "remote_echo", map[string]string{"message": "x"})
		return errors.As(err, &e) && e.Code == -32010
	}, "calls of the gone server's tool to get -32010")
	if !strings.Contains(string(e.Data), `"retryAfterMs"`) || strings.Contains(e.Message, "unknown tool") {
		t.Errorf("the -32010: %s %s", e.Message, e.Data)
	}
	if r := curl(t, "GET", ops[1]+"/readyz", nil, ""); r.status != http.StatusOK {
		t.Errorf("/readyz with optional servers down: %d", r.status)
	}
	r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", ops[1])
	if r.code != 0 || !strings.Contains(r.stdout, "exit status 3") || !strings.Contains(r.stdout, "cannot-open-the-db") || strings.Contains(r.stdout, "ClientOptions") {
		t.Errorf("mcpgate status:\n%v", r)
	}
	retrying := `msg="gateway: upstream unavailable; retrying" upstream=failing`
	waitForCond(t, func() bool { return strings.Count(p.log(), retrying) >= 3 }, "three backoff steps of the failing server")
	b, _ := os.ReadFile(starts)
	log := p.log()
	steps := strings.Count(log, retrying)
	if n := strings.Count(string(b), "started"); n > steps+2 {
		t.Errorf("failing started %d times in %d backoff steps", n, steps)
	}
	if warns := strings.Count(log, `level=WARN msg="gateway: upstream unavailable; retrying" upstream=failing`); warns > 2 {
		t.Errorf("the same failure logged at warn %d times:\n%s", warns, log)
	}
	// Failing the same way again and again, it is failed, and started
	// again only when asked.
	waitForCond(t, func() bool {
		r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", ops[1], "--json")
		return strings.Contains(r.stdout, `"name":"failing","state":"failed"`)
	}, "failing to be failed")
	b, _ = os.ReadFile(starts)
	before := strings.Count(string(b), "started")
	if r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", ops[1], "--retry", "failing"); r.code != 0 || !strings.Contains(r.stderr, "asked the gateway to start failing again") {
		t.Errorf("mcpgate status --retry: %v", r)
	}
	waitForCond(t, func() bool {
		b, _ := os.ReadFile(starts)
		return strings.Count(string(b), "started") > before
	}, "a start after --retry")
	if r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", ops[1], "--retry", "nosuch"); r.code == 0 || !strings.Contains(r.stderr, "404") {
		t.Errorf("--retry of no server: %v", r)
	}
}
