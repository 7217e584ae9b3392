package otelmcp

import (
	"encoding/json"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// scope names the instrumentation in the spans and metrics it makes.
const scope = "github.com/mcpgate/mcpgate/mcp/otelmcp"

// Options configure the instrumentation. The zero value uses the global
// providers and propagator, and records no arguments.
type Options struct {
	// TracerProvider makes the spans. Nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the duration histograms. Nil means
	// otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads and writes the trace context in params._meta and
	// in HTTP headers. Nil means otel.GetTextMapPropagator(), or W3C
	// TraceContext and Baggage when that propagates nothing (no global
	// one was set).
	Propagator propagation.TextMapPropagator
	// RecordArguments, when set, records a tools/call's arguments on its
	// span as gen_ai.tool.call.arguments: the text it returns for the
	// tool's name and its raw arguments, which it must redact (secrets,
	// personal data). Nil means arguments are never recorded.
	RecordArguments func(tool string, args json.RawMessage) string
	// Attributes are added to every span and duration the middleware
	// records: what it cannot see from a request, such as the transport
	// (network.transport "pipe" for stdio, "tcp" for HTTP,
	// network.protocol.name "http") and, on a client, the server's
	// address (server.address, server.port). Keep them few and of low
	// cardinality: they label the histograms too.
	Attributes []attribute.KeyValue
}

// config is Options resolved, with the instruments made once.
type config struct {
	tracer     trace.Tracer
	prop       propagation.TextMapPropagator
	recordArgs func(string, json.RawMessage) string
	attrs      []attribute.KeyValue
	serverDur  mcpconv.ServerOperationDuration
	clientDur  mcpconv.ClientOperationDuration
	serverLife mcpconv.ServerSessionDuration
	clientLife mcpconv.ClientSessionDuration
	// timed are the client sessions whose duration is being timed: a
	// client that initializes again (its server forgot the session)
	// keeps its first start.
	timed sync.Map // *mcp.ClientSession -> struct{}
}

// durationBuckets are the bucket boundaries, in seconds, the semantic
// conventions recommend for the MCP duration histograms, operations and
// sessions alike.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

func newConfig(opts *Options) *config {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	c := &config{
		tracer:     o.TracerProvider.Tracer(scope, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:       propagator(o.Propagator),
		recordArgs: o.RecordArguments,
		attrs:      o.Attributes,
	}
	m := o.MeterProvider.Meter(scope, metric.WithSchemaURL(semconv.SchemaURL))
	buckets := metric.WithExplicitBucketBoundaries(durationBuckets...)
	// An instrument that cannot be made is a no-op one: telemetry never
	// stops the calls it observes.
	c.serverDur, _ = mcpconv.NewServerOperationDuration(m, buckets)
	c.clientDur, _ = mcpconv.NewClientOperationDuration(m, buckets)
	c.serverLife, _ = mcpconv.NewServerSessionDuration(m, buckets)
	c.clientLife, _ = mcpconv.NewClientSessionDuration(m, buckets)
	return c
}

// propagator returns p, else the global propagator, else W3C
// TraceContext and Baggage: the global one propagates nothing until an
// application sets it, and SEP-414 names the W3C fields.
func propagator(p propagation.TextMapPropagator) propagation.TextMapPropagator {
	if p != nil {
		return p
	}
	if g := otel.GetTextMapPropagator(); len(g.Fields()) > 0 {
		return g
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}
