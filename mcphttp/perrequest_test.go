package mcphttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

const perRequestMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func perRequestBody(method, params string) string {
	if params != "" {
		params += ","
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":{%s%s}}`, method, params, perRequestMeta)
}

// Per-request POSTs: the status and code table of 2026-07-28, no session.
func TestPerRequestHTTP(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv) // no session: 2026-07-28 requests need none
	std := func(method string) []string {
		return []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", method}
	}
	for _, tt := range []struct {
		name   string
		body   string
		hdr    []string
		status int
		code   int64 // 0: a result
		has    string
	}{
		{"discover", perRequestBody("server/discover", ""), std("server/discover"), 200, 0, `"supportedVersions"`},
		{"tools/call", perRequestBody("tools/call", `"name":"echo","arguments":{"text":"hi"}`), append(std("tools/call"), "Mcp-Name", "echo"), 200, 0, `"resultType":"complete"`},
		{"Mcp-Name in base64", perRequestBody("tools/call", `"name":"echo","arguments":{"text":"hi"}`), append(std("tools/call"), "Mcp-Name", "=?base64?ZWNobw==?="), 200, 0, `hi`},
		{"no version header", perRequestBody("server/discover", ""), []string{"Mcp-Method", "server/discover"}, 400, -32020, ""},
		{"version header differs", perRequestBody("server/discover", ""), []string{"Mcp-Protocol-Version", "2025-11-25", "Mcp-Method", "server/discover"}, 400, -32020, ""},
		{"no Mcp-Method", perRequestBody("server/discover", ""), []string{"Mcp-Protocol-Version", "2026-07-28"}, 400, -32020, ""},
		{"Mcp-Method differs", perRequestBody("tools/list", ""), std("server/discover"), 400, -32020, ""},
		{"no Mcp-Name", perRequestBody("tools/call", `"name":"echo"`), std("tools/call"), 400, -32020, ""},
		{"Mcp-Name differs", perRequestBody("tools/call", `"name":"echo"`), append(std("tools/call"), "Mcp-Name", "other"), 400, -32020, ""},
		{"unsupported version", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}}`, []string{"Mcp-Protocol-Version", "v999.0.0", "Mcp-Method", "server/discover"}, 400, -32022, `"requested":"v999.0.0"`},
		{"claim without capabilities", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, std("server/discover"), 400, -32602, ""},
		{"per-request header, no claim", `{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}`, std("server/discover"), 400, -32602, ""},
		{"removed method", perRequestBody("ping", ""), std("ping"), 404, -32601, ""},
		{"unknown method", perRequestBody("nope", ""), std("nope"), 404, -32601, ""},
		{"undeclared capability", perRequestBody("tools/call", `"name":"sample"`), append(std("tools/call"), "Mcp-Name", "sample"), 400, -32021, `"requiredCapabilities":{"sampling":{}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.post(tt.body, tt.hdr...)
			body := readAll(t, resp)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.code != 0 && errorCode(t, body) != tt.code {
				t.Errorf("body %s, want code %d", body, tt.code)
			}
			if tt.code != 0 && !strings.Contains(body, `"id":7`) {
				t.Errorf("the error lacks the request id: %s", body)
			}
			if tt.has != "" && !strings.Contains(body, tt.has) {
				t.Errorf("body %s lacks %s", body, tt.has)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Errorf("a per-request answer carries Mcp-Session-Id")
			}
		})
	}
	// A 2026-07-28 request that streams (progress) has no SSE event ids.
	resp := c.post(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		append(std("tools/call"), "Mcp-Name", "progress")...)
	body := readAll(t, resp)
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(body, "notifications/progress") {
		t.Errorf("progress did not stream: %s", body)
	}
	if strings.Contains(body, "\nid:") || strings.HasPrefix(body, "id:") {
		t.Errorf("per-request SSE with event ids: %s", body)
	}
}

// One endpoint serves a legacy session and 2026-07-28 requests at once.
func TestBothErasOverHTTP(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	legacy := newClient(t, srv)
	legacy.initialize("2025-11-25")
	perRequest := newClient(t, srv)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if st, body := legacy.call(100+i, "tools/call", `{"name":"echo","arguments":{"text":"legacy"}}`); st != 200 || !strings.Contains(body, "legacy") || strings.Contains(body, "resultType") {
				t.Errorf("legacy: %d %s", st, body)
			}
		}()
		go func() {
			defer wg.Done()
			resp := perRequest.post(perRequestBody("tools/call", `"name":"echo","arguments":{"text":"perrequest"}`), "Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo")
			if body := readAll(t, resp); resp.StatusCode != 200 || !strings.Contains(body, `"resultType":"complete"`) {
				t.Errorf("per-request: %d %s", resp.StatusCode, body)
			}
		}()
	}
	wg.Wait()
}

// Mcp-Param-* headers repeat annotated arguments: required when the
// argument is there, equal to it, strict about Base64.
func TestPerRequestParamHeaders(t *testing.T) {
	s := testServer()
	type in struct {
		Region string `json:"region,omitempty"`
		Count  int    `json:"count,omitempty"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "where", Description: "d", InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"count":{"type":"integer","x-mcp-header":"Count"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in in) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult("ok " + in.Region), nil, nil
		})
	_, srv := startHTTP(t, s, nil)
	c := newClient(t, srv)
	hdr := func(extra ...string) []string {
		return append([]string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "where"}, extra...)
	}
	for _, tt := range []struct {
		name string
		args string
		hdr  []string
		ok   bool
	}{
		{"plain", `{"region":"eu-west"}`, hdr("Mcp-Param-Region", "eu-west"), true},
		{"base64", `{"region":"Hello"}`, hdr("Mcp-Param-Region", "=?base64?SGVsbG8=?="), true},
		{"non-ASCII needs base64", `{"region":"Zürich"}`, hdr("Mcp-Param-Region", "=?base64?WsO8cmljaA==?="), true},
		{"integer compared as a number", `{"count":7}`, hdr("Mcp-Param-Count", "7"), true},
		{"absent argument, no header", `{}`, hdr(), true},
		{"missing header", `{"region":"eu"}`, hdr(), false},
		{"different value", `{"region":"eu"}`, hdr("Mcp-Param-Region", "us"), false},
		{"bad padding", `{"region":"Hello"}`, hdr("Mcp-Param-Region", "=?base64?SGVsbG8?="), false},
		{"bad characters", `{"region":"Hello"}`, hdr("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="), false},
		{"no suffix is literal", `{"region":"=?base64?SGVsbG8="}`, hdr("Mcp-Param-Region", "=?base64?SGVsbG8="), true},
		{"integer mismatch", `{"count":7}`, hdr("Mcp-Param-Count", "8"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp := c.post(perRequestBody("tools/call", `"name":"where","arguments":`+tt.args), tt.hdr...)
			body := readAll(t, resp)
			if tt.ok && resp.StatusCode != 200 {
				t.Errorf("%d %s, want 200", resp.StatusCode, body)
			}
			if !tt.ok && (resp.StatusCode != 400 || errorCode(t, body) != -32020) {
				t.Errorf("%d %s, want 400 and -32020", resp.StatusCode, body)
			}
		})
	}
}

// A 2026-07-28 client's notification needs no session: 202.
func TestPerRequestNotification(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	resp := c.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, "Mcp-Protocol-Version", "2026-07-28")
	if body := readAll(t, resp); resp.StatusCode != 202 {
		t.Errorf("%d %s, want 202", resp.StatusCode, body)
	}
}

// A claim-less ping from a 2026-07-28 client (the Go SDK sends one) is
// answered, though the revision removed ping.
func TestPerRequestPing(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	resp := c.post(`{"jsonrpc":"2.0","id":4,"method":"ping"}`, "Mcp-Protocol-Version", "2026-07-28")
	if body := readAll(t, resp); resp.StatusCode != 200 || body != `{"jsonrpc":"2.0","id":4,"result":{}}` {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// A requestState is good only for the principal it was issued to.
func TestPerRequestRequestStateBoundToPrincipal(t *testing.T) {
	s := testServer()
	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "d"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if _, ok := mcp.InputAs[mcp.ElicitResult](req.Request, "ok"); !ok {
			return nil, nil, req.RequireInput(map[string]*mcp.InputRequest{"ok": mcp.ElicitInput(&mcp.ElicitParams{Message: "ok?", RequestedSchema: map[string]any{"type": "object"}})}, nil)
		}
		return mcp.TextResult("done"), nil, nil
	})
	_, srv := startHTTP(t, s, &Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	c := newClient(t, srv)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	hdr := func(user string) []string {
		return []string{"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "confirm", "X-User", user}
	}
	body := readAll(t, c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm",`+meta+`}}`, hdr("alice")...))
	var r struct {
		Result struct {
			RequestState string `json:"requestState"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(body), &r); r.Result.RequestState == "" {
		t.Fatalf("no state: %s", body)
	}
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","inputResponses":{"ok":{"action":"accept"}},"requestState":"` + r.Result.RequestState + `",` + meta + `}}`
	if body := readAll(t, c.post(retry, hdr("mallory")...)); errorCode(t, body) != -32602 {
		t.Errorf("another principal's retry: %s, want -32602", body)
	}
	if body := readAll(t, c.post(retry, hdr("alice")...)); !strings.Contains(body, "done") {
		t.Errorf("the owner's retry: %s", body)
	}
}
