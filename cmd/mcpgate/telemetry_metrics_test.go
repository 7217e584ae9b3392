package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// TestTheMCPDurationHistogramsShareTheGatewaysMetrics runs a gateway with
// --metrics-addr, calls a tool through it, and scrapes /metrics: the
// OpenTelemetry histogram of the MCP semantic conventions is there beside
// the gateway's own mcpgate_* series, by method; with tracing on, an
// OpenMetrics scrape shows an exemplar carrying the caller's trace id;
// with OTEL_SDK_DISABLED=true there is no OpenTelemetry series at all.
func TestTheMCPDurationHistogramsShareTheGatewaysMetrics(t *testing.T) {
	const histogram = `mcp_server_operation_duration_seconds_bucket{`
	tests := []struct {
		name      string
		env       func(t *testing.T) []string
		wantOTel  bool // the histogram is on /metrics
		exemplars bool // and carries the caller's trace id
	}{
		{name: "metrics only", env: func(*testing.T) []string { return nil }, wantOTel: true},
		{name: "metrics and tracing", env: func(t *testing.T) []string {
			return otelEnv(otlptest.NewReceiver(t), "gateway")
		}, wantOTel: true, exemplars: true},
		{name: "sdk disabled", env: func(*testing.T) []string { return []string{"OTEL_SDK_DISABLED=true"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "gateway.json")
			b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
				"local": map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "local.db")}},
			}})
			if err := os.WriteFile(cfg, b, 0o600); err != nil {
				t.Fatal(err)
			}
			p := startHTTPEnv(t, tt.env(t), "--config", cfg, "--metrics-addr", "127.0.0.1:0")
			ops := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(p.log())
			if ops == nil {
				t.Fatalf("no ops address:\n%s", p.log())
			}
			waitForTools(t, p.url, "local_create_task")
			traceID := tracedCall(t, p.url, "local_create_task")

			text := scrape(t, ops[1], "")
			if !strings.Contains(text, "mcpgate_requests_total{") {
				t.Errorf("/metrics lacks the gateway's own series:\n%s", text)
			}
			line := lineWith(text, histogram, `mcp_method_name="tools/call"`)
			if got := line != ""; got != tt.wantOTel {
				t.Errorf("a %s line for tools/call: %v, want %v\n%s", histogram, got, tt.wantOTel, text)
			}
			if !tt.wantOTel && strings.Contains(text, "mcp_") {
				t.Errorf("OpenTelemetry series with the SDK disabled:\n%s", text)
			}
			if !tt.exemplars {
				return
			}
			om := scrape(t, ops[1], "application/openmetrics-text")
			if lineWith(om, histogram, `mcp_method_name="tools/call"`, `trace_id="`+traceID+`"`) == "" {
				t.Errorf("no exemplar with trace id %s on %s for tools/call:\n%s", traceID, histogram, om)
			}
		})
	}
}

// tracedCall calls tool at the gateway url inside a sampled span of a
// tracer of the test's own, its context carried in params._meta, and
// returns the trace id.
func tracedCall(t *testing.T, url, tool string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
	defer cancel()
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	mw := otelmcp.ClientMiddleware(&otelmcp.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}})
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{Middleware: []mcp.ClientMiddleware{mw}}).Connect(ctx, &mcphttp.ClientTransport{Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx, span := tp.Tracer("test").Start(ctx, "test")
	defer span.End()
	res, err := cs.CallTool(ctx, tool, map[string]any{"title": "measured"})
	if err != nil || res.IsError {
		t.Fatalf("%s: %+v, %v", tool, res, err)
	}
	return span.SpanContext().TraceID().String()
}

// scrape gets /metrics, asking for the format accept names ("": the
// Prometheus text format).
func scrape(t *testing.T, url, accept string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, resp.StatusCode, err, b)
	}
	return string(b)
}

// lineWith returns the first line of text holding every part, or "".
func lineWith(text string, parts ...string) string {
	for line := range strings.Lines(text) {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return line
		}
	}
	return ""
}

// TestNoSettingInstallsNoMeterProvider: without a registry to serve (no
// --metrics-addr) the histograms stay on the API's no-op provider, and a
// server gets no middleware for them.
func TestNoSettingInstallsNoMeterProvider(t *testing.T) {
	tests := []struct {
		name string
		reg  prometheus.Registerer
		env  map[string]string
	}{
		{name: "no registry"},
		{name: "sdk disabled", reg: prometheus.NewRegistry(), env: map[string]string{"OTEL_SDK_DISABLED": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop, err := startMetrics(context.Background(), tt.reg, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if mp := meterProvider(); mp != nil {
				t.Errorf("a meter provider was installed: %T", otel.GetMeterProvider())
			}
		})
	}
}
