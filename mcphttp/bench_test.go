package mcphttp

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkHTTPToolsCall measures tools/call echo over real loopback HTTP:
// the client's request, our transport and engine, the reply read to its
// end. Workers each keep one request in flight on their own keep-alive
// connection, as the shared harness's http mode does.
// The "per-request" mode is the 2026-07-28 revision: no session, every POST
// carries its _meta and routing headers and is served by a session of its
// own.
func BenchmarkHTTPToolsCall(b *testing.B) {
	for _, mode := range []struct {
		name       string
		sse        bool
		perRequest bool
	}{{"json", false, false}, {"sse", true, false}, {"perrequest", false, true}} {
		for _, workers := range []int{1, 32} {
			b.Run(mode.name+"/c="+strconv.Itoa(workers), func(b *testing.B) {
				_, srv := startHTTP(b, testServer(), &Options{StreamResponses: mode.sse})
				tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers}
				defer tr.CloseIdleConnections()
				c := newClient(b, srv)
				c.hc = &http.Client{Transport: tr}
				if !mode.perRequest {
					c.initialize("2025-11-25")
				}
				text := bytes.Repeat([]byte("x"), 100)
				var ids atomic.Int64
				want := []byte(`"result"`)
				var wg sync.WaitGroup
				b.ReportAllocs()
				b.ResetTimer()
				for w := range workers {
					n := b.N / workers
					if w < b.N%workers {
						n++
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						buf := make([]byte, 0, 1024)
						var body []byte
						for range n {
							// In-flight ids must differ within a session.
							body = append(body[:0], `{"jsonrpc":"2.0","id":`...)
							body = strconv.AppendInt(body, ids.Add(1), 10)
							body = append(body, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...)
							body = append(body, text...)
							if mode.perRequest {
								body = append(body, `"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`...)
							} else {
								body = append(body, `"}}}`...)
							}
							req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
							req.Header.Set("Content-Type", "application/json")
							req.Header.Set("Accept", "application/json, text/event-stream")
							if mode.perRequest {
								req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
								req.Header.Set("Mcp-Method", "tools/call")
								req.Header.Set("Mcp-Name", "echo")
							} else {
								req.Header.Set("Mcp-Session-Id", c.sid)
								req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
							}
							resp, err := c.hc.Do(req)
							if err != nil {
								b.Error(err)
								return
							}
							buf = buf[:0]
							for {
								if len(buf) == cap(buf) {
									buf = append(buf, 0)[:len(buf)]
								}
								m, err := resp.Body.Read(buf[len(buf):cap(buf)])
								buf = buf[:len(buf)+m]
								if err == io.EOF {
									break
								}
								if err != nil {
									b.Error(err)
									return
								}
							}
							resp.Body.Close()
							if resp.StatusCode != 200 || !bytes.Contains(buf, want) {
								b.Errorf("%d %s", resp.StatusCode, buf)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
			})
		}
	}
}
