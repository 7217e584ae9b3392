package cluster_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/conformance"
	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// BenchmarkWarmCall compares tools/call on warm sessions through HAProxy:
// one process on its own (the embedded default) against three replicas
// sharing Redis, with 1 and 32 clients, each client a session of its own.
// It reports calls per second and the p50 and p99 latency of a call.
//
//	go test -run '^$' -bench WarmCall ./cluster
func BenchmarkWarmCall(b *testing.B) {
	rd := testservice.Redis(b)
	for _, setup := range []struct {
		name   string
		shared bool
		n      int
	}{{"single", false, 1}, {"3-replicas-redis", true, 3}} {
		var url string
		if setup.shared {
			_, url = replicasTB(b, rd.URL(), setup.n, nil)
		} else {
			h := mcphttp.NewHandler(conformance.NewServer(), nil)
			ts := httptest.NewServer(h)
			b.Cleanup(ts.Close)
			url = testservice.HAProxy(b, []string{strings.TrimPrefix(ts.URL, "http://")}, nil).URL() + "/mcp"
		}
		for _, clients := range []int{1, 32} {
			b.Run(setup.name+"/clients="+strconv.Itoa(clients), func(b *testing.B) {
				ctx := context.Background()
				var css []*mcp.ClientSession
				for range clients {
					c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
					cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
					if err != nil {
						b.Fatal(err)
					}
					defer cs.Close()
					for range 6 {
						cs.CallTool(ctx, "test_simple_text", nil)
					}
					css = append(css, cs)
				}
				var mu sync.Mutex
				var lat []time.Duration
				b.ResetTimer()
				start := time.Now()
				var wg sync.WaitGroup
				per := max(b.N/clients, 1)
				for _, cs := range css {
					wg.Go(func() {
						mine := make([]time.Duration, 0, per)
						for range per {
							t0 := time.Now()
							if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
								b.Error(err)
								return
							}
							mine = append(mine, time.Since(t0))
						}
						mu.Lock()
						lat = append(lat, mine...)
						mu.Unlock()
					})
				}
				wg.Wait()
				el := time.Since(start)
				b.StopTimer()
				slices.Sort(lat)
				if len(lat) > 0 {
					b.ReportMetric(float64(len(lat))/el.Seconds(), "calls/s")
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
					b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				}
			})
		}
	}
}
