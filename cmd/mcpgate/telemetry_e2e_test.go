package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/otlptest"
)

// otelEnv is the environment of a traced mcpgate process named service,
// exporting to rec with the real OTLP/HTTP exporter; batches go out
// every 100 ms so that the test need not stop the servers to see them.
func otelEnv(rec *otlptest.Receiver, service string) []string {
	return []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rec.Endpoint(),
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_TRACES_SAMPLER=always_on",
	}
}

// hop is one span of the expected tree.
type hop struct {
	service, kind, name string
	attrs               map[string]string // a subset of the span's attributes
}

// TestOneTraceFromTheCLIThroughTheGatewayToEachUpstream runs `mcpgate
// tools call` against a gateway over HTTP whose upstreams are mcpgate
// task servers, one over stdio and one over HTTP, every process with the
// real OTLP/HTTP exporter sending to a receiver on loopback. Each call is
// one trace: the CLI's client span, the gateway's server span under it,
// the gateway's client span to the upstream under that, and the
// upstream's own server span under the gateway's client span. Over stdio
// nothing but params._meta can carry the trace context there.
func TestOneTraceFromTheCLIThroughTheGatewayToEachUpstream(t *testing.T) {
	rec := otlptest.NewReceiver(t)
	dir := t.TempDir()
	remote := startHTTPEnv(t, otelEnv(rec, "http-upstream"))
	cfg := filepath.Join(dir, "gateway.json")
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"local": map[string]any{
			"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "local.db")},
			// The gateway's own OTEL_* reach it too; only the name differs.
			"env": map[string]string{"OTEL_SERVICE_NAME": "stdio-upstream"},
		},
		"remote": map[string]any{"url": remote.url},
	}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTPEnv(t, otelEnv(rec, "gateway"), "--config", cfg)
	ru, err := url.Parse(remote.url)
	if err != nil {
		t.Fatal(err)
	}
	waitForTools(t, gw.url, "local_create_task", "remote_create_task")

	tests := []struct {
		tool, upstream string
		hopAttrs       map[string]string
		upstreamSvc    string
	}{
		{tool: "local_create_task", upstream: "local", upstreamSvc: "stdio-upstream",
			hopAttrs: map[string]string{"mcpgate.upstream": "local", "mcpgate.upstream.command": filepath.Base(binary), "network.transport": "pipe"}},
		{tool: "remote_create_task", upstream: "remote", upstreamSvc: "http-upstream",
			hopAttrs: map[string]string{"mcpgate.upstream": "remote", "server.address": "127.0.0.1", "server.port": ru.Port(), "network.transport": "tcp", "network.protocol.name": "http"}},
	}
	// The gateway over HTTP (the process above), and over stdio, started
	// by the CLI: no headers anywhere on that path.
	gateways := []struct {
		name    string
		service string                     // the gateway's service.name
		args    func(tool string) []string // the CLI's
		log     func() string
	}{
		{name: "http", service: "gateway", log: gw.log, args: func(tool string) []string {
			return []string{"tools", "call", gw.url, tool, "--args", `{"title":"traced"}`}
		}},
		{name: "stdio", service: "stdio-gateway", args: func(tool string) []string {
			return []string{"tools", "call", tool, "--args", `{"title":"traced"}`,
				"--env", "OTEL_SERVICE_NAME=stdio-gateway", "--", binary, "serve", "--config", cfg, "--stdio"}
		}},
	}
	for _, g := range gateways {
		for _, tt := range tests {
			t.Run(g.name+"/"+tt.upstream, func(t *testing.T) {
				args := g.args(tt.tool)
				cli := exec.Command(binary, args...)
				// A service name of its own for each call's CLI: a chain
				// found is this call's, not an earlier one's.
				cliService := "cli-" + g.name + "-" + tt.upstream
				cli.Env = append(os.Environ(), otelEnv(rec, cliService)...)
				if out, err := cli.CombinedOutput(); err != nil {
					t.Fatalf("mcpgate %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				want := []hop{
					{service: cliService, kind: "client", name: "tools/call " + tt.tool,
						attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tt.tool}},
					{service: g.service, kind: "server", name: "tools/call " + tt.tool,
						attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": tt.tool, "network.transport": map[string]string{"http": "tcp", "stdio": "pipe"}[g.name]}},
					{service: g.service, kind: "client", name: "tools/call create_task", attrs: tt.hopAttrs},
					{service: tt.upstreamSvc, kind: "server", name: "tools/call create_task",
						attrs: map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "create_task"}},
				}
				chain := waitForChain(t, rec, want)
				if g.log != nil && !strings.Contains(g.log(), "trace_id="+chain[0].TraceID) {
					t.Errorf("no line of the gateway's log names trace %s:\n%s", chain[0].TraceID, g.log())
				}
			})
		}
	}
}

// waitForTools waits until the gateway at url lists every tool named.
func waitForTools(t *testing.T, url string, names ...string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	var out []byte
	for time.Now().Before(deadline) {
		out, _ = exec.Command(binary, "tools", "list", url).CombinedOutput()
		missing := false
		for _, n := range names {
			missing = missing || !strings.Contains(string(out), n)
		}
		if !missing {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the gateway did not list %v:\n%s", names, out)
}

// waitForChain waits until the receiver holds a chain of spans as want
// describes, each the parent of the next, all of one trace, and returns
// it.
func waitForChain(t *testing.T, rec *otlptest.Receiver, want []hop) []otlptest.Span {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		spans := rec.Spans()
		if chain, ok := findChain(spans, want); ok {
			return chain
		}
		if time.Now().After(deadline) {
			var sb strings.Builder
			for _, s := range spans {
				fmt.Fprintf(&sb, "  %s %s/%s parent=%s %s %q %v\n", s.Resource["service.name"], s.TraceID[:8], s.SpanID, s.ParentID, s.Kind, s.Name, s.Attributes)
			}
			t.Fatalf("no chain of spans %+v among:\n%s", want, sb.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func findChain(spans []otlptest.Span, want []hop) ([]otlptest.Span, bool) {
	for _, root := range spans {
		if root.ParentID != "" || !matches(root, want[0]) {
			continue
		}
		chain := []otlptest.Span{root}
		for _, w := range want[1:] {
			prev := chain[len(chain)-1]
			found := false
			for _, s := range spans {
				if s.TraceID == prev.TraceID && s.ParentID == prev.SpanID && matches(s, w) {
					chain, found = append(chain, s), true
					break
				}
			}
			if !found {
				break
			}
		}
		if len(chain) == len(want) {
			return chain, true
		}
	}
	return nil, false
}

func matches(s otlptest.Span, h hop) bool {
	if s.Resource["service.name"] != h.service || s.Kind != h.kind || s.Name != h.name {
		return false
	}
	for k, v := range h.attrs {
		if s.Attributes[k] != v {
			return false
		}
	}
	return true
}
