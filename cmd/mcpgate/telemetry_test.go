package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestTheEnvironmentChoosesTheExporter(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string // the exporter; "" for none
		wantErr string
	}{
		{name: "nothing set: no exporter", env: nil},
		{name: "a protocol alone: no exporter", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{name: "an endpoint: http/protobuf by default", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, want: protoHTTP},
		{name: "a traces endpoint alone", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, want: protoHTTP},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, want: protoGRPC},
		{name: "the traces protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, want: protoGRPC},
		{name: "disabled wins over an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}},
		{name: "disabled in capitals", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}},
		{name: "disabled=false exports", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "false"}, want: protoHTTP},
		{name: "http/json is refused with a reason", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, wantErr: "OTEL_EXPORTER_OTLP_PROTOCOL=http/json: the Go OpenTelemetry SDK has no OTLP/JSON exporter"},
		{name: "traces exporter none wins over an endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}},
		{name: "otlp named without an endpoint: the default", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, want: protoHTTP},
		{name: "an exporter mcpgate has not is refused", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "OTEL_TRACES_EXPORTER=zipkin: mcpgate exports with otlp or none"},
		{name: "prometheus is not a traces exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "prometheus"}, wantErr: "OTEL_TRACES_EXPORTER=prometheus"},
		{name: "an unknown traces protocol names its variable", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"}, wantErr: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="udp": use http/protobuf or grpc`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := planTelemetry(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if plan.exporter != tt.want {
				t.Errorf("exporter %q, want %q", plan.exporter, tt.want)
			}
		})
	}
}

// export is one OTLP/HTTP request a collector received.
type export struct {
	path, auth string
	services   []string // each resource's service.name
	spans      int
}

// collector records the OTLP/HTTP trace exports sent to it.
type collector struct {
	mu      sync.Mutex
	exports []export
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	e := export{path: r.URL.Path, auth: r.Header.Get("Authorization")}
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				e.services = append(e.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			e.spans += len(ss.Spans)
		}
	}
	c.mu.Lock()
	c.exports = append(c.exports, e)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Write(b)
}

// TestTracesGoWhereTheEnvironmentSaysAndItsSecretsAreNotLogged runs the
// real OTLP/HTTP exporter, configured only by OTEL_* variables, against a
// collector on loopback.
func TestTracesGoWhereTheEnvironmentSaysAndItsSecretsAreNotLogged(t *testing.T) {
	const secret = "s3cr3t-collector-key"
	tests := []struct {
		name       string
		env        map[string]string // ENDPOINT stands for the collector's URL
		noProvider bool
		wantExport *export // nil: nothing sent
	}{
		{name: "no endpoint: no provider", env: map[string]string{"OTEL_SERVICE_NAME": "x"}, noProvider: true},
		{name: "disabled: no provider", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ENDPOINT", "OTEL_SDK_DISABLED": "true"}, noProvider: true},
		{
			name:       "an endpoint: /v1/traces under it, service mcpgate by default, the headers sent",
			env:        map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20" + secret},
			wantExport: &export{path: "/v1/traces", auth: "Bearer " + secret, services: []string{"mcpgate"}, spans: 1},
		},
		{
			name:       "a traces endpoint is used as it is; OTEL_SERVICE_NAME names the service",
			env:        map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ENDPOINT/custom/traces", "OTEL_SERVICE_NAME": "edge-gateway"},
			wantExport: &export{path: "/custom/traces", services: []string{"edge-gateway"}, spans: 1},
		},
		{
			name:       "OTEL_RESOURCE_ATTRIBUTES names the service",
			env:        map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ENDPOINT", "OTEL_RESOURCE_ATTRIBUTES": "service.name=from-attrs,deployment.environment=test"},
			wantExport: &export{path: "/v1/traces", services: []string{"from-attrs"}, spans: 1},
		},
		{
			name: "a sampler that keeps nothing sends nothing",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "ENDPOINT", "OTEL_TRACES_SAMPLER": "always_off"},
		},
	}
	vars := []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_PROTOCOL",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG", "OTEL_SDK_DISABLED"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			col := &collector{}
			srv := httptest.NewServer(col)
			defer srv.Close()
			for _, k := range vars {
				t.Setenv(k, strings.ReplaceAll(tt.env[k], "ENDPOINT", srv.URL))
			}
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			ctx := context.Background()
			tp, err := startTelemetry(ctx, func(k string) string { return strings.ReplaceAll(tt.env[k], "ENDPOINT", srv.URL) }, log)
			if err != nil {
				t.Fatal(err)
			}
			if tp != nil {
				_, span := tp.Tracer("test").Start(ctx, "one")
				span.End()
				sctx, cancel := context.WithTimeout(ctx, 10*time.Second) // a bound on a hang
				defer cancel()
				if err := tp.Shutdown(sctx); err != nil {
					t.Fatal(err)
				}
			}
			col.mu.Lock()
			got := col.exports
			col.mu.Unlock()
			if (tp == nil) != tt.noProvider {
				t.Errorf("a provider: %v, want %v", tp != nil, !tt.noProvider)
			}
			switch {
			case tt.wantExport == nil && len(got) > 0:
				t.Fatalf("exports %+v, want none", got)
			case tt.wantExport != nil && (len(got) != 1 || !sameExport(got[0], *tt.wantExport)):
				t.Fatalf("exports %+v, want one: %+v", got, *tt.wantExport)
			}
			if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "Bearer") {
				t.Errorf("the log shows the exporter's headers:\n%s", logs.String())
			}
		})
	}
}

func sameExport(a, b export) bool {
	return a.path == b.path && a.auth == b.auth && a.spans == b.spans && strings.Join(a.services, ",") == strings.Join(b.services, ",")
}

func TestTheEndpointLoggedKeepsNoCredentials(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:4318", "http://127.0.0.1:4318"},
		{"https://user:pass@collector.example.com/otlp?api_key=k", "https://collector.example.com/otlp"},
		{"not a url", "[unparsable URL]"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
