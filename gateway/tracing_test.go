package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
)

// tracedSearchGateway is searchGateway with tracing on, recording every
// span it ends.
func tracedSearchGateway(t *testing.T) (*tracetest.SpanRecorder, func(name string, args map[string]any)) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	cfg := &config.Config{Servers: catalogServers(t), ToolSearch: config.ToolSearch{Listing: config.ListingSearch}}
	cfg.ApplyDefaults()
	for _, s := range cfg.Servers {
		s.Start = "eager"
	}
	g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger(), TracerProvider: tp})
	g.Server().AddMiddleware(otelmcp.ServerMiddleware(&otelmcp.Options{TracerProvider: tp}))
	waitState(t, g, StateReady)
	cs := connectTo(t, g.Server(), nil)
	call := func(name string, args map[string]any) {
		t.Helper()
		if res, err := cs.CallTool(context.Background(), name, args); err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", name, err, res)
		}
	}
	return rec, call
}

// TestMetaToolsShowTheSearchAndTheInnerCallAsChildSpans: search_tools'
// search is a span under the call's server span, and call_tool's inner
// call a span between the call's server span and the hop's client span,
// which names its upstream.
func TestMetaToolsShowTheSearchAndTheInnerCallAsChildSpans(t *testing.T) {
	rec, call := tracedSearchGateway(t)
	call(MetaSearchTools, map[string]any{"query": "create an issue in a repository", "k": 3})
	call(MetaCallTool, map[string]any{"name": "github_create_issue", "arguments": map[string]any{"owner": "me", "repo": "r", "title": "t"}})

	spans := rec.Ended()
	find := func(name string, kind trace.SpanKind, parent trace.SpanID) sdktrace.ReadOnlySpan {
		t.Helper()
		for _, s := range spans {
			if s.Name() == name && s.SpanKind() == kind && s.Parent().SpanID() == parent {
				return s
			}
		}
		var got []string
		for _, s := range spans {
			got = append(got, s.Name()+" ("+s.SpanKind().String()+", parent "+s.Parent().SpanID().String()+")")
		}
		t.Fatalf("no %s span %q under %s among %q", kind, name, parent, got)
		return nil
	}
	tests := []struct {
		name  string
		chain []struct {
			name string
			kind trace.SpanKind
		}
		attrs map[string]string // of the chain's last span
	}{
		{
			name: "search_tools",
			chain: []struct {
				name string
				kind trace.SpanKind
			}{{"tools/call " + MetaSearchTools, trace.SpanKindServer}, {spanToolSearch, trace.SpanKindInternal}},
			attrs: map[string]string{"mcpgate.search.k": "3"},
		},
		{
			name: "call_tool",
			chain: []struct {
				name string
				kind trace.SpanKind
			}{
				{"tools/call " + MetaCallTool, trace.SpanKindServer},
				{MetaCallTool + " github_create_issue", trace.SpanKindInternal},
				{"tools/call create_issue", trace.SpanKindClient},
			},
			attrs: map[string]string{"mcpgate.upstream": "github", "gen_ai.tool.name": "create_issue"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parent trace.SpanID
			var last sdktrace.ReadOnlySpan
			for _, c := range tt.chain {
				last = find(c.name, c.kind, parent)
				parent = last.SpanContext().SpanID()
			}
			got := map[string]string{}
			for _, kv := range last.Attributes() {
				got[string(kv.Key)] = kv.Value.Emit()
			}
			for k, v := range tt.attrs {
				if got[k] != v {
					t.Errorf("%s: %s = %q, want %q (all: %v)", last.Name(), k, got[k], v, got)
				}
			}
		})
	}
}

// TestTracingOffAddsNoMiddleware: without a tracer provider the
// upstreams' clients get no middleware and meta-tool spans are the
// caller's own (no-op) span.
func TestTracingOffAddsNoMiddleware(t *testing.T) {
	var off *tracing
	if mw := off.clientMiddleware(&upstream{cfg: &config.Server{Name: "x", Command: "x"}}); mw != nil {
		t.Errorf("middleware with tracing off: %d", len(mw))
	}
	ctx := context.Background()
	if got, span := off.start(ctx, "x", attribute.Int("k", 1)); got != ctx || span.SpanContext().IsValid() {
		t.Errorf("a span started with tracing off: %v", span.SpanContext())
	}
}

// TestTheGatewaysRefusalsAreEventsOnTheRequestsSpan: a call refused by
// the open circuit breaker, or held back by the rate limit an upstream
// asked for, leaves an event naming the upstream on the request's span.
func TestTheGatewaysRefusalsAreEventsOnTheRequestsSpan(t *testing.T) {
	tests := []struct {
		name  string
		set   func(u *upstream)
		event string
	}{
		{name: "breaker open", set: func(u *upstream) {
			u.breaker.mu.Lock()
			u.breaker.openTill = time.Now().Add(time.Hour)
			u.breaker.mu.Unlock()
		}, event: eventBreakerOpen},
		{name: "rate limited", set: func(u *upstream) {
			u.mu.Lock()
			u.limitedTill = time.Now().Add(time.Hour)
			u.mu.Unlock()
		}, event: eventRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			defer tp.Shutdown(context.Background())
			var logs logBuffer
			g, _ := startGateway(t, &logs, nil, stdioServer("alpha"))
			g.mu.Lock()
			u := g.upstreams["alpha"]
			g.mu.Unlock()
			tt.set(u)
			ctx, span := tp.Tracer("test").Start(context.Background(), "request")
			err := u.do(ctx, nil, false, func(context.Context, *mcp.ClientSession) error { return nil })
			span.End()
			if err == nil {
				t.Fatal("the call went through")
			}
			ended := rec.Ended()
			if len(ended) != 1 || len(ended[0].Events()) != 1 || ended[0].Events()[0].Name != tt.event {
				t.Fatalf("spans %v, want one with the event %s", ended, tt.event)
			}
			ev := ended[0].Events()[0]
			if !slices.Contains(ev.Attributes, attrUpstream.String("alpha")) {
				t.Errorf("event %s attributes %v lack the upstream", ev.Name, ev.Attributes)
			}
		})
	}
}

// TestTraceArgumentsRecordsSanitizedArgumentsOnTheHop: with
// TraceArguments the hop's span records the call's arguments as the
// request log shows them, a secret redacted; without it, none.
func TestTraceArgumentsRecordsSanitizedArgumentsOnTheHop(t *testing.T) {
	const secret = "sk-live-4eC39HqLyjWDarjtT1zdp7dc"
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("TraceArguments=", on), func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			t.Cleanup(func() { tp.Shutdown(context.Background()) })
			s := stdioServer("alpha")
			cfg := &config.Config{Servers: map[string]*config.Server{s.Name: s}}
			g := runConfigured(t, cfg, &Options{Logger: (&logBuffer{}).logger(), TracerProvider: tp, TraceArguments: on})
			waitState(t, g, StateReady, StateIdle)
			cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
			if _, err := cs.CallTool(context.Background(), "alpha_echo", map[string]string{"text": "hello", "apiToken": secret}); err != nil {
				t.Fatal(err)
			}
			var hop sdktrace.ReadOnlySpan
			for _, sp := range rec.Ended() {
				if sp.SpanKind() == trace.SpanKindClient && sp.Name() == "tools/call echo" {
					hop = sp
				}
			}
			if hop == nil {
				t.Fatal("no client span of the hop")
			}
			var args string
			for _, kv := range hop.Attributes() {
				if kv.Key == "gen_ai.tool.call.arguments" {
					args = kv.Value.AsString()
				}
			}
			switch {
			case !on && args != "":
				t.Errorf("arguments recorded without the opt-in: %s", args)
			case on && (!strings.Contains(args, `"text":"hello"`) || !strings.Contains(args, "[redacted]")):
				t.Errorf("arguments %q: want the text and the token redacted", args)
			}
			if strings.Contains(args, secret) {
				t.Errorf("the secret is on the span: %s", args)
			}
		})
	}
}
