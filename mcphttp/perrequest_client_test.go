package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Against a dual-era server the client probes, speaks 2026-07-28 and
// sends every routing header; no session, no GET stream, no DELETE; a
// tool that needs sampling is answered through the input_required rounds.
func TestPerRequestClient(t *testing.T) {
	h := NewHandler(testServer(), nil)
	rec := &recorder{}
	srv := newServer(t, h, rec.wrap(h))
	cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{
		ProtocolVersion: "auto",
		CreateMessageHandler: func(context.Context, *mcp.ClientSession, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []byte(`{"type":"text","text":"sampled"}`)}, nil
		},
	})
	if cs.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("negotiated %s", cs.ProtocolVersion())
	}
	if got := callText(t, cs, "echo", map[string]any{"text": "hi"}); got != "hi" {
		t.Errorf("echo: %q", got)
	}
	if got := callText(t, cs, "sample", nil); got != "model m" {
		t.Errorf("sample: %q", got)
	}
	ctx := context.Background()
	_, err := cs.CallTool(ctx, "nope", nil)
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: %v", err)
	}
	if err := cs.Ping(ctx); err != nil {
		t.Errorf("ping: %v", err)
	}
	cs.Close()
	for _, r := range rec.all() {
		if r.method != http.MethodPost {
			t.Errorf("%s sent to a per-request server", r.method)
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string         `json:"name"`
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		json.Unmarshal([]byte(r.body), &m)
		if r.header.Get("Mcp-Session-Id") != "" || r.header.Get("Mcp-Protocol-Version") != "2026-07-28" || r.header.Get("Mcp-Method") != m.Method {
			t.Errorf("headers of %s: %v", m.Method, r.header)
		}
		if m.Method == "tools/call" && r.header.Get("Mcp-Name") != m.Params.Name {
			t.Errorf("Mcp-Name %q for %q", r.header.Get("Mcp-Name"), m.Params.Name)
		}
		if m.Params.Meta["io.modelcontextprotocol/protocolVersion"] != "2026-07-28" || m.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
			t.Errorf("_meta of %s: %v", m.Method, m.Params.Meta)
		}
	}
}

// A legacy Streamable HTTP server refuses the probe as it refuses any
// request without a session (400, an error without our id): the client
// initializes instead, over Streamable HTTP, not the 2024-11-05 fallback.
func TestPerRequestClientFallsBack(t *testing.T) {
	f := newFake(t)
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get(headerSessionID) == "" && r.Header.Get("Mcp-Method") == "server/discover" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`))
			return
		}
		inner.ServeHTTP(w, r)
	})
	cs := connectClient(t, f.url(), nil, &mcp.ClientOptions{ProtocolVersion: "auto"})
	if cs.ProtocolVersion() != mcp.LatestNegotiatedVersion {
		t.Errorf("negotiated %q, want %s by initialize", cs.ProtocolVersion(), mcp.LatestNegotiatedVersion)
	}
	if n := f.rec.count(http.MethodGet, ""); n > 1 {
		t.Errorf("%d GETs: the client fell back to the legacy SSE transport", n)
	}
	if n := f.rec.count(http.MethodPost, `"initialize"`); n != 1 {
		t.Errorf("%d initialize POSTs", n)
	}
}

// The client repeats x-mcp-header arguments as Mcp-Param-* headers, which
// our server checks: a call to such a tool works without a listing first
// (the -32020 leads to one and a retry).
func TestPerRequestClientParamHeaders(t *testing.T) {
	s := testServer()
	type in struct {
		Region string `json:"region"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "where", Description: "d", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}},
		func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult("in " + in.Region), nil, nil
		})
	h := NewHandler(s, nil)
	rec := &recorder{}
	srv := newServer(t, h, rec.wrap(h))
	cs := connectClient(t, srv.URL+"/mcp", nil, &mcp.ClientOptions{ProtocolVersion: "auto"})
	if got := callText(t, cs, "where", map[string]any{"region": "Zürich"}); got != "in Zürich" {
		t.Errorf("got %q", got)
	}
	if got := callText(t, cs, "where", map[string]any{"region": "eu"}); got != "in eu" {
		t.Errorf("got %q", got)
	}
	var sent []string
	for _, r := range rec.all() {
		if v := r.header.Get("Mcp-Param-Region"); v != "" {
			sent = append(sent, v)
		}
	}
	if strings.Join(sent, " ") != "=?base64?WsO8cmljaA==?= eu" {
		t.Errorf("Mcp-Param-Region headers sent: %v", sent)
	}
}
