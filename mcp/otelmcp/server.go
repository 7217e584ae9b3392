package otelmcp

import (
	"context"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// ServerMiddleware returns middleware that gives each request and
// notification a server span and records its duration in
// mcp.server.operation.duration. The span continues the trace context
// in params._meta (SEP-414), else the one already in the handler's
// context (see [HTTPHandler]).
func ServerMiddleware(opts *Options) mcp.Middleware {
	c := newConfig(opts)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req *mcp.Request) (any, error) {
			return c.serve(ctx, req, next)
		}
	}
}

func (c *config) serve(ctx context.Context, req *mcp.Request, next mcp.MethodHandler) (any, error) {
	start := time.Now()
	p := readParams(req.Method, req.RawParams)
	ctx = c.prop.Extract(ctx, p.carrier())
	var sessionID string
	if req.Session != nil {
		sessionID = req.Session.ID()
	}
	attrs := c.requestAttrs(req.Method, req.ID, sessionID, req.ProtocolVersion(), p)
	ctx, span := c.tracer.Start(ctx, spanName(req.Method, p),
		trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	defer span.End()
	if c.recordArgs != nil && req.Method == "tools/call" && len(p.Arguments) > 0 {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(c.recordArgs(p.Name, p.Arguments)))
	}
	res, err := next(ctx, req)
	var o outcome
	switch {
	case err != nil:
		o = errorOutcome(ctx, err)
	case req.Method == "tools/call" && resultIsToolError(res):
		o = toolError
	}
	attrs = o.finish(span, attrs)
	c.serverDur.Record(ctx, time.Since(start).Seconds(), mcpconv.MethodNameAttr(req.Method), metricAttrs(attrs)...)
	if req.Method == "initialize" && err == nil && req.Session != nil {
		c.timeServerSession(req.Session, start)
	}
	return res, err
}

// timeServerSession records the session's duration in
// mcp.server.session.duration when it ends: from the initialize request
// that began it (a server sees no other start) to its close.
func (c *config) timeServerSession(ss *mcp.ServerSession, start time.Time) {
	ss.AfterClose(func() {
		attrs := append([]attribute.KeyValue{semconv.McpProtocolVersion(ss.ProtocolVersion())}, c.attrs...)
		c.serverLife.Record(context.Background(), time.Since(start).Seconds(), attrs...)
	})
}
