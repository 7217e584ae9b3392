package gateway

// OpenTelemetry in the gateway: the spans of a request's hops to its
// upstreams, and the gateway's decisions on the way (circuit breaker,
// rate limits, retries) as events on them. The MCP spans themselves come
// from mcp/otelmcp (a client span per upstream request, with the trace
// context in params._meta and, over HTTP, the W3C headers); this file
// adds what only the gateway knows: which upstream, where it is, and
// for whom (tenant, principal), never the arguments or credentials.
//
// With Options.TracerProvider and Options.MeterProvider nil, nothing here
// is installed: upstream clients get no middleware, and span events fall
// on the context's no-op span. With only a meter provider, the hops'
// durations are recorded (mcp.client.operation.duration and
// mcp.client.session.duration, labelled with the upstream) and no spans
// are made.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
)

// tracingScope names the gateway's own spans.
const tracingScope = "github.com/mcpgate/mcpgate/gateway"

// Attributes of the gateway's own, beside the semantic conventions'.
const (
	attrUpstream   = attribute.Key("mcpgate.upstream")
	attrTenant     = attribute.Key("mcpgate.tenant")
	attrPrincipal  = attribute.Key("mcpgate.principal")
	attrCommand    = attribute.Key("mcpgate.upstream.command")
	attrWait       = attribute.Key("mcpgate.wait_ms")
	attrSends      = attribute.Key("mcpgate.send")
	attrSearchK    = attribute.Key("mcpgate.search.k")
	attrSearchHits = attribute.Key("mcpgate.search.hits")
)

// spanToolSearch is the span of search_tools' search.
const spanToolSearch = "mcpgate.tool_search"

// The gateway's decisions, as events on the request's span.
const (
	eventRateLimited   = "mcpgate.upstream.rate_limited"   // refused: the upstream asked us to hold back
	eventBreakerOpen   = "mcpgate.circuit_breaker.refused" // refused: the breaker is open
	eventBreakerOpened = "mcpgate.circuit_breaker.opened"  // this call's failure opened it
	eventResend        = "mcpgate.upstream.resend"         // the connection failed before an answer; sent again
)

// tracing is the gateway's instrumentation; nil when both tracing and
// metrics are off.
type tracing struct {
	tracer trace.Tracer
	opts   otelmcp.Options // the providers; no attributes
}

// newTracing returns the instrumentation for the providers given, either
// of which may be nil (no spans, or no durations), or nil when both are.
// A nil provider is a no-op one, never the global: a program embedding
// the gateway says what it wants recorded.
// With args, hops record their tools' arguments, sanitized.
func newTracing(tp trace.TracerProvider, mp metric.MeterProvider, args bool) *tracing {
	if tp == nil && mp == nil {
		return nil
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t := &tracing{tracer: tp.Tracer(tracingScope), opts: otelmcp.Options{TracerProvider: tp, MeterProvider: mp}}
	if args {
		t.opts.RecordArguments = SanitizeArguments
	}
	return t
}

// clientMiddleware is what an upstream's client sends its requests
// through: the caller's tenant and principal on the request's span, then
// the client span of the hop and its durations (otelmcp), labelled with
// the upstream's name, transport and address.
func (t *tracing) clientMiddleware(u *upstream) []mcp.ClientMiddleware {
	if t == nil {
		return nil
	}
	opts := t.opts
	opts.Attributes = u.hopAttrs()
	return []mcp.ClientMiddleware{
		func(next mcp.ClientHandler) mcp.ClientHandler {
			return func(ctx context.Context, req *mcp.ClientRequest) (json.RawMessage, error) {
				callerAttrs(ctx)
				return next(ctx, req)
			}
		},
		otelmcp.ClientMiddleware(&opts),
	}
}

// transport sends the trace context as W3C headers too, to HTTP
// upstreams that read only those.
func (t *tracing) transport(rt http.RoundTripper) http.RoundTripper {
	if t == nil {
		return rt
	}
	return otelmcp.Transport(rt, &t.opts)
}

// start starts an internal span of the gateway's own (a meta-tool's
// search or inner call); with tracing off it returns ctx and the no-op
// span already there.
func (t *tracing) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if t == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// end ends a span start returned, unless it is the caller's own.
func (t *tracing) end(span trace.Span) {
	if t != nil {
		span.End()
	}
}

// endCall ends the span of a meta-tool's inner call with its outcome:
// an error, or a tool error (isError), sets the status and error.type.
func (t *tracing) endCall(span trace.Span, res *mcp.CallToolResult, err error) {
	if t == nil {
		return
	}
	switch {
	case err != nil:
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		span.SetAttributes(semconv.ErrorTypeKey.String("tool_error"))
		span.SetStatus(codes.Error, "tool_error")
	}
	span.End()
}

// errorType is error.type for err: a JSON-RPC error's code, as otelmcp
// and the conventions write it, else "_OTHER".
func errorType(err error) string {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return strconv.FormatInt(e.Code, 10)
	}
	return "_OTHER"
}

// hopAttrs describe the upstream of a hop: its name, and how and where
// it is reached (a command's name, without its arguments, which may
// hold secrets, over a pipe; server.address and server.port of a URL,
// over HTTP on TCP). They label the durations too, so they are few and
// bounded by the configuration.
func (u *upstream) hopAttrs() []attribute.KeyValue {
	attrs := []attribute.KeyValue{attrUpstream.String(u.cfg.Name)}
	if u.cfg.Command != "" {
		return append(attrs, attrCommand.String(filepath.Base(u.cfg.Command)), semconv.NetworkTransportPipe)
	}
	attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	if pu, err := url.Parse(u.cfg.URL); err == nil && pu.Host != "" {
		host, port := pu.Hostname(), pu.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[pu.Scheme]
		}
		attrs = append(attrs, semconv.ServerAddress(host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, semconv.ServerPort(p))
		}
	}
	return attrs
}

// callerAttrs puts the caller's tenant and principal on the span of ctx
// (the gateway's server span, or a meta-tool's span under it).
func callerAttrs(ctx context.Context) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	if t, ok := TenantFrom(ctx); ok && t != "" {
		span.SetAttributes(attrTenant.String(t))
	}
	if p := displayPrincipal(ctx); p != "" {
		span.SetAttributes(attrPrincipal.String(p))
	}
}

// spanEvent records a decision of the gateway on the span of ctx: a call
// refused by the circuit breaker or a rate limit, a request sent again.
// On a span that is not recording it costs a method call.
func spanEvent(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}
