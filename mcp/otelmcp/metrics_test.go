package otelmcp_test

import (
	"context"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// connectPipe serves s on one end of an in-memory pipe and connects c
// to the other; both end with the test.
func connectPipe(t *testing.T, s *mcp.Server, c *mcp.Client) *mcp.ClientSession {
	t.Helper()
	cs, _ := servePipe(t, s, c)
	return cs
}

// servePipe is connectPipe that also returns how to stop the server
// first (its end of the pipe closed, and ServeConn returned), as when a
// server goes away.
func servePipe(t *testing.T, s *mcp.Server, c *mcp.Client) (*mcp.ClientSession, func()) {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	sc := mcp.NewStdioConn(sr, sw, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeConn(ctx, sc, nil)
	}()
	cs, err := c.Connect(context.Background(), mcp.ConnTransport{Conn: mcp.NewStdioConn(cr, cw, 0)})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	stop := sync.OnceFunc(func() {
		cancel()
		sc.Close()
		<-done
	})
	t.Cleanup(func() {
		cs.Close()
		stop()
	})
	return cs, stop
}

func TestOperationDurationsAreRecordedWithTheConventionsBuckets(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts := &otelmcp.Options{MeterProvider: mp}
	s := newServer(nil)
	s.AddMiddleware(otelmcp.ServerMiddleware(opts))
	c := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125, Middleware: []mcp.ClientMiddleware{otelmcp.ClientMiddleware(opts)}})
	cs := connectPipe(t, s, c)
	if _, err := cs.CallTool(context.Background(), "broken", nil); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
	for _, name := range []string{"mcp.server.operation.duration", "mcp.client.operation.duration"} {
		t.Run(name, func(t *testing.T) {
			h, ok := histogram(rm, name)
			if !ok {
				t.Fatalf("no %s histogram in %+v", name, rm)
			}
			var found bool
			for _, dp := range h.DataPoints {
				if m, _ := dp.Attributes.Value("mcp.method.name"); m.AsString() != "tools/call" {
					continue
				}
				found = true
				if !slices.Equal(dp.Bounds, want) {
					t.Errorf("bounds %v, want %v", dp.Bounds, want)
				}
				if v, _ := dp.Attributes.Value("error.type"); v.AsString() != "tool_error" {
					t.Errorf("error.type %q, want tool_error", v.AsString())
				}
				if v, _ := dp.Attributes.Value("gen_ai.tool.name"); v.AsString() != "broken" {
					t.Errorf("gen_ai.tool.name %q, want broken", v.AsString())
				}
				for _, k := range []string{"jsonrpc.request.id", "mcp.session.id"} {
					if dp.Attributes.HasValue(attribute.Key(k)) {
						t.Errorf("%s is on the metric: a series per request or session", k)
					}
				}
			}
			if !found {
				t.Errorf("no tools/call data point in %+v", h.DataPoints)
			}
		})
	}
}

func histogram(rm metricdata.ResourceMetrics, name string) (metricdata.Histogram[float64], bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name {
				return h, true
			}
		}
	}
	return metricdata.Histogram[float64]{}, false
}

func TestACallPastItsDeadlineIsATimeout(t *testing.T) {
	recv := otlptest.NewReceiver(t)
	c, tp := tracedClient(t, recv, mcp.Version20251125)
	s := newServer(nil)
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done() // until the client gives up and cancels
		return nil, ctx.Err()
	})
	cs := connectPipe(t, s, c)
	ctx, root := tp.Tracer("test").Start(context.Background(), "root")
	ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := cs.CallTool(ctx, "wait", nil)
	root.End()
	if err == nil {
		t.Fatal("a call that outlived its deadline succeeded")
	}
	spans, err := recv.WaitFor(2, waitFor)
	if err != nil {
		t.Fatal(err)
	}
	got := find(spans, root.SpanContext().TraceID().String(), "tools/call wait", "client")
	if len(got) != 1 || got[0].Attributes["error.type"] != "timeout" || got[0].StatusCode != "error" {
		t.Errorf("want one client span with error.type timeout and status error; received %+v", spans)
	}
}

// Each side records a session's duration once it ends, with the
// negotiated revision and the attributes the caller gave; a client that
// lost its server marks the end with error.type.
func TestSessionDurationsAreRecordedWhenSessionsEnd(t *testing.T) {
	tests := []struct {
		name      string
		end       func(cs *mcp.ClientSession, stopServer func())
		clientErr bool
	}{
		{"the client closes", func(cs *mcp.ClientSession, _ func()) { cs.Close() }, false},
		{"the server goes away", func(cs *mcp.ClientSession, stopServer func()) { stopServer(); cs.Wait() }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			pipe := attribute.String("network.transport", "pipe")
			opts := &otelmcp.Options{MeterProvider: mp, Attributes: []attribute.KeyValue{pipe}}
			s := newServer(nil)
			s.AddMiddleware(otelmcp.ServerMiddleware(opts))
			c := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125, Middleware: []mcp.ClientMiddleware{otelmcp.ClientMiddleware(opts)}})

			cs, stopServer := servePipe(t, s, c)
			if rm := collect(t, reader); len(points(rm, "mcp.server.session.duration"))+len(points(rm, "mcp.client.session.duration")) != 0 {
				t.Fatal("a session duration was recorded before the session ended")
			}
			tt.end(cs, stopServer)
			stopServer()

			// AfterClose runs its function in a goroutine of its own.
			deadline := time.Now().Add(waitFor)
			var rm metricdata.ResourceMetrics
			for {
				rm = collect(t, reader)
				if len(points(rm, "mcp.server.session.duration")) == 1 && len(points(rm, "mcp.client.session.duration")) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("want one session duration on each side; got %+v", rm)
				}
				time.Sleep(10 * time.Millisecond)
			}
			for _, name := range []string{"mcp.server.session.duration", "mcp.client.session.duration"} {
				dp := points(rm, name)[0]
				if dp.Count != 1 {
					t.Errorf("%s: count %d, want 1", name, dp.Count)
				}
				if v, _ := dp.Attributes.Value("mcp.protocol.version"); v.AsString() != mcp.Version20251125 {
					t.Errorf("%s: mcp.protocol.version %q", name, v.AsString())
				}
				if v, _ := dp.Attributes.Value("network.transport"); v.AsString() != "pipe" {
					t.Errorf("%s: network.transport %q, want the option's pipe", name, v.AsString())
				}
				_, failed := dp.Attributes.Value("error.type")
				if want := tt.clientErr && name == "mcp.client.session.duration"; failed != want {
					t.Errorf("%s: error.type present %v, want %v (%v)", name, failed, want, dp.Attributes)
				}
			}
		})
	}
}

func collect(t *testing.T, r sdkmetric.Reader) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	return rm
}

func points(rm metricdata.ResourceMetrics, name string) []metricdata.HistogramDataPoint[float64] {
	h, _ := histogram(rm, name)
	return h.DataPoints
}
