package main

// Log lines joined to traces: a line written with a context that carries
// a span names the span's trace and span ids, so that an operator can go
// from a log line to its trace, and from a trace to its lines.

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// traceLogHandler adds trace_id and span_id to each record logged with a
// context that carries a valid span context. Under a group (WithGroup)
// they land inside the group, as every attribute the record carries does.
type traceLogHandler struct{ inner slog.Handler }

// withTraceIDs wraps h in a traceLogHandler.
func withTraceIDs(h slog.Handler) slog.Handler { return traceLogHandler{inner: h} }

func (h traceLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h traceLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		// A copy of its own: the caller may hand r to other handlers.
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.inner.Handle(ctx, r)
}

func (h traceLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return traceLogHandler{inner: h.inner.WithAttrs(as)}
}

func (h traceLogHandler) WithGroup(name string) slog.Handler {
	return traceLogHandler{inner: h.inner.WithGroup(name)}
}
