package main

// OpenTelemetry tracing, configured only by the SDK's standard
// environment (OTEL_*), so that an operator's collector settings work as
// they do for any other instrumented program. With no endpoint set
// nothing is installed: the global tracer provider stays the API's no-op
// one, and every span the code starts costs a few nanoseconds.

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/internal/slogthrottle"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
)

// The exporter protocols OTEL_EXPORTER_OTLP_PROTOCOL may name that the
// Go SDK has an exporter for.
const (
	protoHTTP = "http/protobuf"
	protoGRPC = "grpc"
)

// telemetryPlan is what the environment asks for, for one signal
// (traces or metrics): no OTLP exporter (exporter empty), or one with
// the protocol exporter to endpoint.
type telemetryPlan struct {
	exporter string // protoHTTP, protoGRPC, or "" for none
	endpoint string // for the log line; the exporter reads its own
	why      string // why there is no exporter, for a debug line
	off      bool   // switched off altogether: OTEL_SDK_DISABLED, or none
}

// planTelemetry is planOTLP for traces.
func planTelemetry(getenv func(string) string) (telemetryPlan, error) {
	return planOTLP(getenv, "TRACES")
}

// planOTLP reads the switches of the standard environment that decide
// whether a signal ("TRACES" or "METRICS") is exported over OTLP, and
// with which protocol. OTEL_<SIGNAL>_EXPORTER may say otlp or none (and,
// for metrics, prometheus: the /metrics of --metrics-addr); left unset,
// a signal is exported when an OTLP endpoint is set, so that the
// process sends nothing anywhere it was not told to. The rest (the
// endpoint's details, headers, TLS, timeouts, the sampler, the batch
// sizes and intervals, the resource) the SDK and the exporters read
// themselves.
func planOTLP(getenv func(string) string, signal string) (telemetryPlan, error) {
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); strings.EqualFold(v, "true") {
		return telemetryPlan{why: "OTEL_SDK_DISABLED=true", off: true}, nil
	}
	exporters := "OTEL_" + signal + "_EXPORTER"
	asked, named := false, false // otlp named; any exporter named
	for _, e := range strings.Split(getenv(exporters), ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		named = named || e != ""
		switch {
		case e == "":
		case e == "none":
			return telemetryPlan{why: exporters + "=none", off: true}, nil
		case e == "otlp":
			asked = true
		case e == "prometheus" && signal == "METRICS":
		default:
			also := ""
			if signal == "METRICS" {
				also = ", prometheus (with --metrics-addr)"
			}
			return telemetryPlan{}, fmt.Errorf("%s=%s: mcpgate exports with otlp%s or none (stdout is the MCP channel over stdio, so there is no console exporter)", exporters, e, also)
		}
	}
	if named && !asked {
		return telemetryPlan{why: exporters + " names no otlp"}, nil
	}
	endpoint := cmpOr(getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT"), getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if endpoint == "" {
		if !asked {
			return telemetryPlan{why: "no OTEL_EXPORTER_OTLP_ENDPOINT"}, nil
		}
		// Asked for by name: to the exporter's default endpoint.
	}
	proto, from := getenv("OTEL_EXPORTER_OTLP_"+signal+"_PROTOCOL"), "OTEL_EXPORTER_OTLP_"+signal+"_PROTOCOL"
	if proto == "" {
		proto, from = getenv("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch strings.ToLower(strings.TrimSpace(proto)) {
	case "", protoHTTP:
		return telemetryPlan{exporter: protoHTTP, endpoint: endpoint}, nil
	case protoGRPC:
		return telemetryPlan{exporter: protoGRPC, endpoint: endpoint}, nil
	case "http/json":
		return telemetryPlan{}, fmt.Errorf("%s=http/json: the Go OpenTelemetry SDK has no OTLP/JSON exporter; use http/protobuf or grpc", from)
	}
	return telemetryPlan{}, fmt.Errorf("%s=%q: use http/protobuf or grpc", from, proto)
}

// setupTelemetry installs tracing as the environment asks (see
// planTelemetry) as the global tracer provider, with the W3C trace
// context and baggage propagators, and returns the function that flushes
// and stops it; call it on the way out, or spans still in the batch are
// lost. With tracing off it installs nothing and shutdown does nothing.
func setupTelemetry(ctx context.Context) (shutdown func(context.Context) error, err error) {
	tp, err := startTelemetry(ctx, os.Getenv, slog.Default())
	if tp == nil {
		return func(context.Context) error { return nil }, err
	}
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	// A collector that is down fails every batch; a few lines a minute
	// say so.
	errLog := slog.New(slogthrottle.New(slog.Default().Handler(), &slogthrottle.Options{Limit: 3, Interval: time.Minute}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		errLog.Warn("mcpgate: OpenTelemetry", "error", err)
	}))
	return tp.Shutdown, nil
}

// startTelemetry builds the tracer provider the environment asks for, or
// returns nil when it asks for none. The exporters read their settings
// from the process's environment themselves; getenv only decides whether
// one runs, and which.
func startTelemetry(ctx context.Context, getenv func(string) string, log *slog.Logger) (*sdktrace.TracerProvider, error) {
	plan, err := planTelemetry(getenv)
	if err != nil || plan.exporter == "" {
		if err == nil {
			log.Debug("mcpgate: tracing off", "why", plan.why)
		}
		return nil, err
	}
	var exp sdktrace.SpanExporter
	switch plan.exporter {
	case protoGRPC:
		exp, err = otlptracegrpc.New(ctx)
	default:
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry: the OTLP %s exporter: %w", plan.exporter, err)
	}
	res, err := telemetryResource(ctx)
	if err != nil {
		// A resource attribute the SDK cannot parse is logged, not fatal:
		// traces with a partial resource beat no traces.
		log.Warn("mcpgate: OTEL_RESOURCE_ATTRIBUTES", "error", err)
	}
	// The headers (OTEL_EXPORTER_OTLP_HEADERS) often hold an API key:
	// they are never logged, nor is the endpoint's user information.
	log.Info("mcpgate: exporting traces", "protocol", plan.exporter, "endpoint", plan.loggedEndpoint())
	// The sampler comes from OTEL_TRACES_SAMPLER(_ARG), read by the SDK
	// when no WithSampler is given; the batch from OTEL_BSP_*.
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// telemetryResource describes this process: service.name "mcpgate" and
// its version unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say
// otherwise (later detectors win in resource.New).
func telemetryResource(ctx context.Context) (*resource.Resource, error) {
	return resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName("mcpgate"), semconv.ServiceVersion(buildVersion())),
		resource.WithFromEnv(),
	)
}

// loggedEndpoint is the endpoint for a log line: no credentials.
func (p telemetryPlan) loggedEndpoint() string {
	if p.endpoint == "" {
		return "the exporter's default"
	}
	return redactURL(p.endpoint)
}

// redactURL keeps a URL's scheme, host and path: user information and
// a query may carry credentials.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "[unparsable URL]"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// withTelemetry runs do between setupTelemetry and its shutdown, which
// gets a few seconds to flush the last batch whatever do's context has
// come to.
func withTelemetry(ctx context.Context, do func() error) error {
	if ctx == nil {
		ctx = context.Background()
	}
	shutdown, err := setupTelemetry(ctx)
	if err != nil {
		return err
	}
	runErr := do()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		slog.Warn("mcpgate: flushing traces", "error", err)
	}
	return runErr
}

// flushTimeout bounds the last export on the way out, so that a
// collector that is down cannot hold the process.
const flushTimeout = 5 * time.Second

// tracerProvider returns the SDK provider setupTelemetry installed, or
// nil when tracing is off: the instrumentation is then left out
// altogether rather than run against the no-op provider.
func tracerProvider() *sdktrace.TracerProvider {
	tp, _ := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	return tp
}

// startMetrics installs, as the global meter provider, an OpenTelemetry
// SDK with the readers the setting and the environment ask for:
//   - with reg (the registry the gateway's /metrics serves, from
//     --metrics-addr), the Prometheus exporter, so that the MCP semantic
//     conventions' histograms (mcp_server_operation_duration_seconds,
//     and per upstream hop mcp_client_operation_duration_seconds)
//     appear beside the mcpgate_* series, with exemplars carrying the
//     trace ids of sampled requests for OpenMetrics scrapers (the SDK's
//     default filter, trace_based, or OTEL_METRICS_EXEMPLAR_FILTER);
//   - with an OTLP endpoint (see planOTLP), a periodic OTLP export
//     (every OTEL_METRIC_EXPORT_INTERVAL, 60 s by default).
//
// With neither, or with OTEL_SDK_DISABLED=true or
// OTEL_METRICS_EXPORTER=none, it installs nothing, so the histograms
// stay on the API's no-op provider and serverTracing leaves the
// middleware out. Call stop on the way out: it sends the last export.
func startMetrics(ctx context.Context, reg prometheus.Registerer, getenv func(string) string, log *slog.Logger) (stop func(), err error) {
	plan, err := planOTLP(getenv, "METRICS")
	if err != nil {
		return nil, err
	}
	var readers []sdkmetric.Option
	if reg != nil && !plan.off {
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry: the Prometheus exporter: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(exp))
	}
	if plan.exporter != "" {
		var exp sdkmetric.Exporter
		if plan.exporter == protoGRPC {
			exp, err = otlpmetricgrpc.New(ctx)
		} else {
			exp, err = otlpmetrichttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("OpenTelemetry: the OTLP %s metric exporter: %w", plan.exporter, err)
		}
		log.Info("mcpgate: exporting metrics", "protocol", plan.exporter, "endpoint", plan.loggedEndpoint())
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if len(readers) == 0 {
		return func() {}, nil
	}
	res, err := telemetryResource(ctx)
	if err != nil {
		log.Warn("mcpgate: OTEL_RESOURCE_ATTRIBUTES", "error", err)
	}
	mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
	otel.SetMeterProvider(mp)
	return func() {
		// The periodic reader's last export; a collector that is down
		// cannot hold the process longer than this.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		defer cancel()
		if err := mp.Shutdown(sctx); err != nil {
			log.Warn("mcpgate: flushing metrics", "error", err)
		}
	}, nil
}

// meterProvider returns the SDK provider startMetrics installed, or nil
// when OpenTelemetry metrics are off.
func meterProvider() *sdkmetric.MeterProvider {
	mp, _ := otel.GetMeterProvider().(*sdkmetric.MeterProvider)
	return mp
}

// serverTracing gives s a server span per request (outermost, so that
// the request's own log lines carry its trace) and its duration, and
// each session's, in the OpenTelemetry metrics, when tracing or those
// metrics are on; stdio says which transport the spans name, and args
// whether tool calls' arguments are recorded (sanitized).
func serverTracing(s *mcp.Server, stdio, args bool) {
	if tracerProvider() == nil && meterProvider() == nil {
		return
	}
	attrs := []attribute.KeyValue{semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http")}
	if stdio {
		attrs = []attribute.KeyValue{semconv.NetworkTransportPipe}
	}
	opts := &otelmcp.Options{Attributes: attrs}
	if args {
		opts.RecordArguments = gateway.SanitizeArguments
	}
	s.AddMiddleware(otelmcp.ServerMiddleware(opts))
}

// httpTracing has h continue the trace of a caller's W3C headers, when
// tracing is on.
func httpTracing(h http.Handler) http.Handler {
	if tracerProvider() == nil {
		return h
	}
	return otelmcp.HTTPHandler(h, nil)
}

// clientTracing is the client middleware of the client commands: a
// client span per request, its context carried in params._meta.
func clientTracing() []mcp.ClientMiddleware {
	if tracerProvider() == nil {
		return nil
	}
	return []mcp.ClientMiddleware{otelmcp.ClientMiddleware(nil)}
}

// roundTripTracing sends the trace context as W3C headers too.
func roundTripTracing(rt http.RoundTripper) http.RoundTripper {
	if tracerProvider() == nil {
		return rt
	}
	return otelmcp.Transport(rt, nil)
}
