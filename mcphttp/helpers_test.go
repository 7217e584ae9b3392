package mcphttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestMain(m *testing.M) {
	if os.Getenv("MCPGATE_TEST_LOG") == "" {
		slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	}
	os.Exit(m.Run())
}

const waitFor = 10 * time.Second // a bound on a hang, never a timing assertion

type echoIn struct {
	Text string `json:"text"`
}

// testServer is an mcp.Server with tools that exercise the transport.
func testServer() *mcp.Server { return testServerWithTimeout(waitFor) }

func testServerWithTimeout(clientRequests time.Duration) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "http-test", Version: "1"}, &mcp.ServerOptions{Logging: true, ClientRequestTimeout: clientRequests})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult(in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		for i := 1; i <= 3; i++ {
			req.NotifyProgress(float64(i), 3, "")
		}
		return mcp.TextResult("done"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's model"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: "hi"})}})
		if err != nil {
			return nil, nil, err
		}
		return mcp.TextResult("model " + res.Model), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "detach", Description: "Closes its stream, then reports and answers"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		req.NotifyProgress(1, 2, "before")
		CloseSSEStream(ctx)
		req.NotifyProgress(2, 2, "after")
		return mcp.TextResult("after detach"), nil, nil
	})
	return s
}

type client struct {
	t       testing.TB
	url     string
	sid     string
	version string
	hc      *http.Client
	headers map[string]string
}

func startHTTP(t testing.TB, s *mcp.Server, opts *Options) (*Handler, *httptest.Server) {
	t.Helper()
	h := NewHandler(s, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		h.Shutdown(ctx)
		srv.Close()
	})
	return h, srv
}

func newClient(t testing.TB, srv *httptest.Server) *client {
	return &client{t: t, url: srv.URL + "/mcp", hc: srv.Client(), headers: map[string]string{}}
}

// post sends a body and returns the response, its body read fully for
// JSON and left open for SSE.
func (c *client) post(body string, hdr ...string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("POST: %v", err)
	}
	return resp
}

func (c *client) initialize(version string) {
	c.t.Helper()
	resp := c.post(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	body := readAll(c.t, resp)
	if resp.StatusCode != 200 {
		c.t.Fatalf("initialize: %d %s", resp.StatusCode, body)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	c.version = version
	if r := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.StatusCode != 202 {
		c.t.Fatalf("initialized: %d", r.StatusCode)
	} else {
		readAll(c.t, r)
	}
}

// call posts a request and returns its reply, read from JSON or SSE.
func (c *client) call(id int, method, params string) (int, string) {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"` + method + `"`
	if params != "" {
		body += `,"params":` + params
	}
	resp := c.post(body + "}")
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		events := readEvents(c.t, resp.Body, -1)
		resp.Body.Close()
		if len(events) == 0 {
			c.t.Fatalf("%s: empty SSE stream", method)
		}
		return resp.StatusCode, events[len(events)-1].data
	}
	return resp.StatusCode, readAll(c.t, resp)
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return string(b)
}

type event struct{ id, name, data, retry string }

// readEvents parses SSE events (comments and empty-data events skipped
// unless they carry an id) until the stream ends or n events were read.
func readEvents(t testing.TB, r io.Reader, n int) []event {
	t.Helper()
	var out []event
	done := make(chan struct{})
	var mu sync.Mutex
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		var cur event
		has := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if has {
					mu.Lock()
					out = append(out, cur)
					full := n >= 0 && len(out) >= n
					mu.Unlock()
					if full {
						return
					}
				}
				cur, has = event{}, false
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "id: "):
				cur.id, has = line[4:], true
			case strings.HasPrefix(line, "event: "):
				cur.name, has = line[7:], true
			case strings.HasPrefix(line, "data: "):
				cur.data, has = line[6:], true
			case strings.HasPrefix(line, "retry: "):
				cur.retry, has = line[7:], true
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(waitFor):
		t.Fatalf("SSE stream did not end; got %d events", len(out))
	}
	mu.Lock()
	defer mu.Unlock()
	return out
}

func errorCode(t testing.TB, body string) int64 {
	t.Helper()
	var m struct {
		Error *struct{ Code int64 } `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Error == nil {
		t.Fatalf("not a JSON-RPC error: %q", body)
	}
	return m.Error.Code
}

var errTimeout = errors.New("timeout")
