package gateway

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The gateway's added latency: tools/call through the gateway against
// the same call straight to the upstream, for a stdio and an HTTP
// upstream, with p50 and p99 reported. Run with -bench Hop -benchtime.

func BenchmarkHop(b *testing.B) {
	for _, kind := range []string{"stdio", "http"} {
		var srv *configServer
		if kind == "stdio" {
			srv = stdioServer("up")
			srv.Start = "eager"
		} else {
			srv = benchHTTPServer(b, "up", 1)
		}
		b.Run(kind+"/direct", func(b *testing.B) {
			u := &upstream{cfg: srv, logger: discard(), g: &Gateway{logger: discard()}}
			tr, err := u.transport()
			if err != nil {
				b.Fatal(err)
			}
			cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), tr)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			measure(b, cs, "echo")
		})
		b.Run(kind+"/gateway", func(b *testing.B) {
			cs := benchGateway(b, srv)
			measure(b, cs, "up_echo")
		})
	}
}

func measure(b *testing.B, cs *mcp.ClientSession, tool string) {
	args := map[string]string{"text": "x"}
	for range 50 { // warm up
		cs.CallTool(context.Background(), tool, args)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		if _, err := cs.CallTool(context.Background(), tool, args); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkAggregatedToolsList lists the tools of 20 upstreams with 50
// tools each through the gateway, from its memory.
func BenchmarkAggregatedToolsList(b *testing.B) {
	var servers []*configServer
	for i := range 20 {
		servers = append(servers, benchHTTPServer(b, fmt.Sprintf("s%02d", i), 50))
	}
	cs := benchGateway(b, servers...)
	var n int
	for b.Loop() {
		n = 0
		for _, err := range cs.Tools(context.Background()) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	if n != 1000 {
		b.Fatalf("listed %d tools, want 1000", n)
	}
}

func benchHTTPServer(b *testing.B, name string, tools int) *configServer {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	for i := range tools {
		tool := "echo"
		if i > 0 {
			tool = fmt.Sprintf("tool_%02d", i)
		}
		mcp.AddTool(s, &mcp.Tool{Name: tool, Description: "Echoes the text it is given, for benchmarks"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult(in.Text), nil, nil
		})
	}
	h := mcphttp.NewHandler(s, nil)
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	return &configServer{Name: name, URL: srv.URL + "/mcp"}
}

func benchGateway(b *testing.B, servers ...*configServer) *mcp.ClientSession {
	cfg := &config.Config{Servers: map[string]*config.Server{}}
	for _, s := range servers {
		cfg.Servers[s.Name] = s
	}
	g, err := New(cfg, &Options{Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.Start(ctx)
	deadline := time.Now().Add(waitFor)
	for {
		ready := true
		for _, st := range g.Status() {
			ready = ready && st.State == StateReady
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("upstreams not ready: %+v", g.Status())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go g.Server().ServeConn(ctx, mcp.NewStdioConn(sr, sw, 0), nil)
	cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), mcp.ConnTransport{Conn: mcp.NewStdioConn(cr, cw, 0)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cs.Close()
		cancel()
		g.Close()
	})
	return cs
}

func discard() *slogLogger { return slogDiscard }
