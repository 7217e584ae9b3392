package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/internal/otlptest"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// TestFailedCallsSetErrorStatusAndErrorTypeOnTheirSpans: through a
// gateway over HTTP, exporting with the real OTLP/HTTP exporter, each way
// a call fails (a tool error, a JSON-RPC error of the upstream's, the
// upstream's timeout, the gateway's rate limit) ends the gateway's
// server span with status Error and error.type as the MCP conventions
// say: "tool_error" for isError, else the JSON-RPC code the caller got.
// The hop's client span says the same of the upstream's answer; a call
// the gateway refused itself has no hop.
func TestFailedCallsSetErrorStatusAndErrorTypeOnTheirSpans(t *testing.T) {
	rec := otlptest.NewReceiver(t)
	up := startReplica(t, fixturesReady, "conformance-server", "--addr", "127.0.0.1:0")
	cfg := filepath.Join(t.TempDir(), "gateway.json")
	b, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"conf": map[string]any{"url": "http://" + up.addr + "/mcp", "timeout": "1s"}},
		"limits":     map[string]any{"tools": map[string]any{"conf_test_simple_text": map[string]any{"perMinute": 1}}},
	})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	gw := startHTTPEnv(t, otelEnv(rec, "gateway"), "--config", cfg)
	waitForTools(t, gw.url, "conf_test_error_handling", "conf_slow_compute")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "errors-test", Version: "1"}, nil).
		Connect(ctx, &mcphttp.ClientTransport{Endpoint: gw.url})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		calls    int    // the last one is the failed one
		wantCode int64  // the JSON-RPC code the caller gets; 0: a tool error
		wantType string // error.type of the gateway's server span
		hopType  string // error.type of the hop's client span; "": no hop
	}{
		{"a tool error", "conf_test_error_handling", nil, 1, 0, "tool_error", "tool_error"},
		{"an unknown tool", "conf_no_such_tool", nil, 1, jsonrpc.CodeInvalidParams, "-32602", ""},
		{"a timeout", "conf_slow_compute", map[string]any{"seconds": 30, "label": "slow"}, 1, gateway.CodeUpstreamTimeout, strconv.Itoa(gateway.CodeUpstreamTimeout), "timeout"},
		{"rate limited", "conf_test_simple_text", nil, 2, gateway.CodeRateLimited, strconv.Itoa(gateway.CodeRateLimited), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(findSpans(rec, "gateway", "server", "tools/call "+tt.tool, ""))
			var res *mcp.CallToolResult
			var err error
			for range tt.calls {
				res, err = cs.CallTool(ctx, tt.tool, tt.args)
			}
			var rpc *jsonrpc.Error
			switch {
			case tt.wantCode == 0 && (err != nil || !res.IsError):
				t.Fatalf("got %+v %v, want a tool error", res, err)
			case tt.wantCode != 0 && (!errors.As(err, &rpc) || rpc.Code != tt.wantCode):
				t.Fatalf("got %+v %v, want code %d", res, err, tt.wantCode)
			}
			srv := waitForSpan(t, rec, "gateway", "server", "tools/call "+tt.tool, before+tt.calls, "")
			checkErrorSpan(t, srv, tt.wantType)
			hops := spansUnder(rec.Spans(), srv)
			switch {
			case tt.hopType == "" && len(hops) != 0:
				t.Errorf("the refused call has hops: %+v", hops)
			case tt.hopType != "":
				hop := waitForSpan(t, rec, "gateway", "client", "tools/call "+tt.tool[len("conf_"):], 1, srv.SpanID)
				checkErrorSpan(t, hop, tt.hopType)
			}
		})
	}
}

// waitForSpan waits until rec holds n spans of service with that kind
// and name (children of parent when that is not ""), and returns the
// last of them.
func waitForSpan(t *testing.T, rec *otlptest.Receiver, service, kind, name string, n int, parent string) otlptest.Span {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		found := findSpans(rec, service, kind, name, parent)
		if len(found) >= n {
			return found[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d %s spans %q of %s (parent %q), want %d: %+v", len(found), kind, name, service, parent, n, rec.Spans())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findSpans returns the spans of service with that kind and name
// (children of parent when that is not ""), in the order received.
func findSpans(rec *otlptest.Receiver, service, kind, name, parent string) []otlptest.Span {
	var found []otlptest.Span
	for _, s := range rec.Spans() {
		if s.Resource["service.name"] == service && s.Kind == kind && s.Name == name && (parent == "" || s.ParentID == parent) {
			found = append(found, s)
		}
	}
	return found
}

func spansUnder(spans []otlptest.Span, parent otlptest.Span) []otlptest.Span {
	var out []otlptest.Span
	for _, s := range spans {
		if s.TraceID == parent.TraceID && s.ParentID == parent.SpanID {
			out = append(out, s)
		}
	}
	return out
}

func checkErrorSpan(t *testing.T, s otlptest.Span, wantType string) {
	t.Helper()
	if s.StatusCode != "error" || s.Attributes["error.type"] != wantType {
		t.Errorf("%s span %q: status %q (%q), error.type %q; want error, %q", s.Kind, s.Name, s.StatusCode, s.StatusMessage, s.Attributes["error.type"], wantType)
	}
}
