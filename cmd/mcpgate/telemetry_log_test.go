package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/internal/redact"
)

func TestLogLinesOfATracedRequestNameTheTraceAndSpan(t *testing.T) {
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	traced := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled,
	}))
	// A remote parent not sampled here still names the trace: the
	// caller's backend may have it.
	unsampled := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, Remote: true,
	}))
	tests := []struct {
		name      string
		ctx       context.Context
		log       func(l *slog.Logger, ctx context.Context)
		wantTrace bool
	}{
		{name: "no context", ctx: nil, log: func(l *slog.Logger, _ context.Context) { l.Info("m") }},
		{name: "a context without a span", ctx: context.Background(), log: func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m") }},
		{name: "a traced context", ctx: traced, log: func(l *slog.Logger, ctx context.Context) { l.InfoContext(ctx, "m") }, wantTrace: true},
		{name: "an unsampled remote parent", ctx: unsampled, log: func(l *slog.Logger, ctx context.Context) { l.WarnContext(ctx, "m") }, wantTrace: true},
		{name: "a logger With attributes", ctx: traced, log: func(l *slog.Logger, ctx context.Context) { l.With("upstream", "u").InfoContext(ctx, "m") }, wantTrace: true},
		{name: "LogAttrs", ctx: traced, log: func(l *slog.Logger, ctx context.Context) { l.LogAttrs(ctx, slog.LevelInfo, "m", slog.Int("n", 1)) }, wantTrace: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			// As root.go builds it: redaction outside, the ids inside.
			l := slog.New(redact.NewHandler(withTraceIDs(slog.NewJSONHandler(&buf, nil))))
			tt.log(l, tt.ctx)
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("%v: %s", err, buf.Bytes())
			}
			gotTrace, gotSpan := line["trace_id"], line["span_id"]
			if !tt.wantTrace {
				if gotTrace != nil || gotSpan != nil {
					t.Fatalf("line %s names a trace, want none", buf.Bytes())
				}
				return
			}
			if gotTrace != traceID.String() || gotSpan != spanID.String() {
				t.Fatalf("line %s: trace_id %v span_id %v, want %s %s", buf.Bytes(), gotTrace, gotSpan, traceID, spanID)
			}
		})
	}
}
