package otelmcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// ClientMiddleware returns middleware that gives each request a client
// sends a client span, puts the span's context in params._meta as
// traceparent, tracestate and baggage (SEP-414: the one carrier every
// transport has), and records the request's duration in
// mcp.client.operation.duration.
func ClientMiddleware(opts *Options) mcp.ClientMiddleware {
	c := newConfig(opts)
	return func(next mcp.ClientHandler) mcp.ClientHandler {
		return func(ctx context.Context, req *mcp.ClientRequest) (json.RawMessage, error) {
			return c.send(ctx, req, next)
		}
	}
}

func (c *config) send(ctx context.Context, req *mcp.ClientRequest, next mcp.ClientHandler) (json.RawMessage, error) {
	start := time.Now()
	p := readParams(req.Method, req.Params)
	var version string
	if req.Session != nil {
		version = req.Session.ProtocolVersion()
	}
	attrs := c.requestAttrs(req.Method, req.ID, "", version, p)
	ctx, span := c.tracer.Start(ctx, spanName(req.Method, p),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	if c.recordArgs != nil && req.Method == "tools/call" && len(p.Arguments) > 0 {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(c.recordArgs(p.Name, p.Arguments)))
	}
	if err := c.inject(ctx, req); err != nil {
		// Params the session could not add to would fail on their own;
		// the request goes as it was.
		span.RecordError(err)
	}
	res, err := next(ctx, req)
	var o outcome
	switch {
	case err != nil:
		o = errorOutcome(ctx, err)
	case req.Method == "tools/call" && isToolError(res):
		o = toolError
	}
	attrs = o.finish(span, attrs)
	c.clientDur.Record(ctx, time.Since(start).Seconds(), mcpconv.MethodNameAttr(req.Method), metricAttrs(attrs)...)
	if req.Method == "initialize" && err == nil && req.Session != nil {
		c.timeClientSession(req.Session, start)
	}
	return res, err
}

// timeClientSession records the session's duration in
// mcp.client.session.duration when it ends, from its first initialize
// request, with error.type when it ended by failing rather than by
// Close.
func (c *config) timeClientSession(cs *mcp.ClientSession, start time.Time) {
	if _, again := c.timed.LoadOrStore(cs, struct{}{}); again {
		return
	}
	cs.AfterClose(func() {
		c.timed.Delete(cs)
		attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(cs.ProtocolVersion())}, c.attrs...)
		if err := cs.Err(); err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errorOutcome(context.Background(), err).errType))
		}
		c.clientLife.Record(context.Background(), time.Since(start).Seconds(), attrs...)
	})
}

// inject puts the trace context of ctx in the request's _meta.
func (c *config) inject(ctx context.Context, req *mcp.ClientRequest) error {
	carrier := propagation.MapCarrier{}
	c.prop.Inject(ctx, carrier)
	for _, k := range c.prop.Fields() {
		if v, ok := carrier[k]; ok {
			if err := req.SetMeta(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}
