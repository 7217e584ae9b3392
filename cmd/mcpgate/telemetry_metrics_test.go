package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

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
	return tracedCallAt(t, url, "", tool)
}

// tracedCallAt is tracedCall with the client pinned to a protocol
// revision ("": negotiated).
func tracedCallAt(t *testing.T, url, version, tool string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
	defer cancel()
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	mw := otelmcp.ClientMiddleware(&otelmcp.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}})
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: version, Middleware: []mcp.ClientMiddleware{mw}}).Connect(ctx, &mcphttp.ClientTransport{Endpoint: url})
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
// --metrics-addr) and no OTLP endpoint, or with the SDK or the metrics
// exporter switched off, the histograms stay on the API's no-op
// provider, and a server gets no middleware for them.
func TestNoSettingInstallsNoMeterProvider(t *testing.T) {
	const endpoint = "http://127.0.0.1:1" // never reached: nothing is installed
	tests := []struct {
		name string
		reg  prometheus.Registerer
		env  map[string]string
	}{
		{name: "no registry"},
		{name: "sdk disabled", reg: prometheus.NewRegistry(), env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}},
		{name: "metrics exporter none", reg: prometheus.NewRegistry(), env: map[string]string{"OTEL_METRICS_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}},
		{name: "prometheus named without a registry", env: map[string]string{"OTEL_METRICS_EXPORTER": "prometheus", "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stop, err := startMetrics(context.Background(), tt.reg, func(k string) string { return tt.env[k] }, slog.New(slog.DiscardHandler))
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

// TestTheEnvironmentChoosesTheMetricsExporter: metrics are pushed over
// OTLP where an endpoint is set, unless OTEL_METRICS_EXPORTER says
// otherwise, and an exporter mcpgate has not is refused with a reason.
func TestTheEnvironmentChoosesTheMetricsExporter(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		off     bool
		wantErr string
	}{
		{name: "nothing set: none", env: nil},
		{name: "an endpoint: otlp over http/protobuf", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, want: protoHTTP},
		{name: "a metrics endpoint alone", env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, want: protoHTTP},
		{name: "a traces endpoint is not a metrics one", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}},
		{name: "the metrics protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc"}, want: protoGRPC},
		{name: "otlp named without an endpoint: the default", env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp"}, want: protoHTTP},
		{name: "none wins over an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}, off: true},
		{name: "prometheus alone: no push", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "prometheus"}},
		{name: "prometheus and otlp", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "prometheus, otlp"}, want: protoHTTP},
		{name: "console is refused", env: map[string]string{"OTEL_METRICS_EXPORTER": "console"}, wantErr: "OTEL_METRICS_EXPORTER=console: mcpgate exports with otlp, prometheus (with --metrics-addr) or none"},
		{name: "sdk disabled", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, off: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := planOTLP(func(k string) string { return tt.env[k] }, "METRICS")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.exporter != tt.want || plan.off != tt.off {
				t.Errorf("plan %+v, want exporter %q off %v", plan, tt.want, tt.off)
			}
		})
	}
}

// TestTheMCPHistogramsAreExportedOverOTLP runs a gateway with no
// --metrics-addr whose environment names an OTLP endpoint, calls a tool
// through it, closes the session and stops the gateway: the receiver
// decodes each of the four histograms of the conventions, the hop's
// labelled with the upstream and its transport, and the upstream's
// session duration arrives with the last export on the way out.
func TestTheMCPHistogramsAreExportedOverOTLP(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.json")
	// Sessions are of the revisions before 2026-07-28, whose requests
	// stand alone: both hops are pinned to one.
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"local": map[string]any{"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "local.db")}, "protocolVersion": mcp.Version20251125},
	}})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(otelEnv(recv, "gateway"), "OTEL_METRIC_EXPORT_INTERVAL=200")
	p := startHTTPEnv(t, env, "--config", cfg)
	waitForTools(t, p.url, "local_create_task")
	tracedCallAt(t, p.url, mcp.Version20251125, "local_create_task") // connects, calls, closes

	want := []struct {
		name  string
		attrs map[string]string
	}{
		{"mcp.server.operation.duration", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "local_create_task", "network.transport": "tcp", "network.protocol.name": "http"}},
		{"mcp.client.operation.duration", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "create_task", "mcpgate.upstream": "local", "network.transport": "pipe"}},
		{"mcp.server.session.duration", map[string]string{"mcp.protocol.version": mcp.Version20251125, "network.transport": "tcp"}},
	}
	for _, w := range want {
		h, err := recv.WaitForHistogram(w.name, func(h otlptest.Histogram) bool { return hasAttrs(h.Attributes, w.attrs) }, waitFor)
		if err != nil {
			t.Fatalf("%v; received %s\n%s", err, histogramNames(recv.Histograms()), p.log())
		}
		if h.Unit != "s" || h.Count == 0 || h.Resource["service.name"] != "gateway" {
			t.Errorf("%s: %+v", w.name, h)
		}
	}
	// The upstream's session lasts as long as the gateway: its duration
	// is recorded as the gateway stops, and sent with the last export.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(waitFor):
		t.Fatalf("the gateway did not stop on SIGTERM:\n%s", p.log())
	}
	if _, err := recv.WaitForHistogram("mcp.client.session.duration", func(h otlptest.Histogram) bool {
		return hasAttrs(h.Attributes, map[string]string{"mcpgate.upstream": "local", "network.transport": "pipe"})
	}, waitFor); err != nil {
		t.Fatalf("%v; received %s\n%s", err, histogramNames(recv.Histograms()), p.log())
	}
}

// histogramNames lists what was received, one point a line, briefly.
func histogramNames(hs []otlptest.Histogram) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, h := range hs {
		line := fmt.Sprintf("%s %v\n", h.Name, h.Attributes)
		if !seen[line] {
			seen[line] = true
			b.WriteString(line)
		}
	}
	return b.String()
}

func hasAttrs(got, want map[string]string) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
