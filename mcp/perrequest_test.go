package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
)

// perRequestParams returns params claiming the 2026-07-28 revision, with extra
// members (a JSON fragment without braces) and extra _meta members.
func perRequestParams(extra, meta string) string {
	m := `"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}`
	if meta != "" {
		m += "," + meta
	}
	p := `{"_meta":{` + m + `}`
	if extra != "" {
		p += "," + extra
	}
	return p + "}"
}

func TestPerRequestRequests(t *testing.T) {
	p := startPeer(t, featureServer(&ServerOptions{CacheTTLMs: 60000}), nil)
	for _, tt := range []struct {
		name, method, params string
		code                 int64  // want this error code, or a result when 0
		has                  string // the raw message contains this
		lacks                string
	}{
		{"discover", "server/discover", perRequestParams("", ""), 0, `"supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26","2024-11-05"]`, ""},
		{"discover has hints", "server/discover", perRequestParams("", ""), 0, `"resultType":"complete","ttlMs":60000,"cacheScope":"public"`, `"protocolVersion"`},
		{"discover names the server", "server/discover", perRequestParams("", ""), 0, `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"feature","version":"2"}}`, ""},
		{"tools/list is cacheable", "tools/list", perRequestParams("", ""), 0, `"ttlMs":60000`, ""},
		{"tools/call is not", "tools/call", perRequestParams(`"name":"echo","arguments":{"text":"hi"}`, ""), 0, `"resultType":"complete"`, `ttlMs`},
		{"resources/read", "resources/read", perRequestParams(`"uri":"file:///a.txt"`, ""), 0, `"cacheScope":"public"`, ""},
		{"missing resource is -32602", "resources/read", perRequestParams(`"uri":"file:///nope"`, ""), -32602, `"uri":"file:///nope"`, ""},
		{"unknown tool", "tools/call", perRequestParams(`"name":"nope"`, ""), -32602, "", ""},
		{"no capabilities", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`, -32602, "clientCapabilities", ""},
		{"capabilities not an object", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, -32602, "", ""},
		{"version not a string", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":7,"io.modelcontextprotocol/clientCapabilities":{}}}`, -32602, "", ""},
		{"unknown version", "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}`, -32022, `"requested":"v999.0.0"`, ""},
		{"an old date is not per-request", "server/discover", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`, -32022, `"supported":["2026-07-28"`, ""},
		{"a legacy version claimed in _meta", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}`, -32022, "", ""},
		{"bad log level", "tools/list", perRequestParams("", `"io.modelcontextprotocol/logLevel":"loud"`), -32602, "", ""},
		{"initialize is gone", "initialize", perRequestParams(`"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}`, ""), -32601, "", ""},
		{"ping is gone", "ping", perRequestParams("", ""), -32601, "", ""},
		{"setLevel is gone", "logging/setLevel", perRequestParams(`"level":"debug"`, ""), -32601, "", ""},
		{"subscribe is gone", "resources/subscribe", perRequestParams(`"uri":"file:///a.txt"`, ""), -32601, "", ""},
		{"unknown method", "nope/nope", perRequestParams("", ""), -32601, "", ""},
		{"claim-less discover", "server/discover", `{}`, -32602, "", ""},
		{"unknown capability members are fine", "tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{},"roots":{"listChanged":true},"x-new":{"a":1}}}}`, 0, `"tools":[`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := p.call(tt.method, tt.params)
			switch {
			case tt.code == 0 && m.Error != nil:
				t.Fatalf("error %d %s", m.Error.Code, m.Error.Message)
			case tt.code != 0 && (m.Error == nil || m.Error.Code != tt.code):
				t.Fatalf("got %s, want error %d", m.Raw, tt.code)
			}
			if tt.has != "" && !strings.Contains(m.Raw, tt.has) {
				t.Errorf("%s lacks %s", m.Raw, tt.has)
			}
			if tt.lacks != "" && strings.Contains(m.Raw, tt.lacks) {
				t.Errorf("%s has %s", m.Raw, tt.lacks)
			}
		})
	}
}

// The -32022 data lists only versions that server/discover lists.
func TestPerRequestUnsupportedVersionData(t *testing.T) {
	p := startPeer(t, featureServer(nil), nil)
	var d DiscoverResult
	p.result("server/discover", perRequestParams("", ""), &d)
	m := p.call("tools/list", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`)
	var data struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	if m.Error == nil || json.Unmarshal(m.Error.Data, &data) != nil {
		t.Fatalf("got %s", m.Raw)
	}
	if data.Requested != "2099-01-01" || len(data.Supported) == 0 {
		t.Errorf("data %+v", data)
	}
	for _, v := range data.Supported {
		if !strings.Contains(fmt.Sprint(d.SupportedVersions), v) {
			t.Errorf("%s is in supported but not in supportedVersions %v", v, d.SupportedVersions)
		}
	}
}

// A 2026-07-28 request gets log messages only when its _meta asks, at the
// level it names, and only before its own response.
func TestPerRequestLogging(t *testing.T) {
	p := startPeer(t, featureServer(nil), nil)
	call := func(meta string) (logs int) {
		id := p.nextID.Add(1) + 5000
		p.send(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, perRequestParams(`"name":"slow"`, meta))
		for {
			m := p.recv()
			if m.Method == "notifications/message" {
				logs++
				continue
			}
			if m.Method == "" && string(m.ID) == fmt.Sprint(id) {
				if m.Error != nil {
					t.Fatalf("slow: %s", m.Raw)
				}
				return logs
			}
		}
	}
	if n := call(""); n != 0 {
		t.Errorf("%d log messages without logLevel", n)
	}
	if n := call(`"io.modelcontextprotocol/logLevel":"debug"`); n != 1 {
		t.Errorf("%d log messages at debug, want 1", n)
	}
	if n := call(`"io.modelcontextprotocol/logLevel":"error"`); n != 0 {
		t.Errorf("%d log messages at error, want 0 (the tool logs at info)", n)
	}
}

// One stdio process serves both eras: a discover probe does not pin the
// process, session-era initialize follows it, and per-request and session-era requests
// interleave afterwards, each answered in its own era's shape.
func TestBothErasOnOneProcess(t *testing.T) {
	p := startPeer(t, featureServer(nil), nil)
	p.result("server/discover", perRequestParams("", ""), nil)
	p.initialize("2025-11-25", `{}`)
	sessionEra := p.call("resources/read", `{"uri":"file:///nope"}`)
	if sessionEra.Error == nil || sessionEra.Error.Code != -32002 {
		t.Errorf("legacy missing resource: %s, want -32002", sessionEra.Raw)
	}
	perRequest := p.call("resources/read", perRequestParams(`"uri":"file:///nope"`, ""))
	if perRequest.Error == nil || perRequest.Error.Code != -32602 {
		t.Errorf("per-request missing resource: %s, want -32602", perRequest.Raw)
	}
	lt := p.call("tools/list", "")
	if strings.Contains(lt.Raw, "resultType") || strings.Contains(lt.Raw, "ttlMs") {
		t.Errorf("session-era result shaped as per-request: %s", lt.Raw)
	}
	mt := p.call("tools/list", perRequestParams("", ""))
	if !strings.Contains(mt.Raw, `"resultType":"complete"`) {
		t.Errorf("per-request result not shaped: %s", mt.Raw)
	}
	if m := p.call("ping", ""); m.Error != nil {
		t.Errorf("session-era ping after per-request traffic: %s", m.Raw)
	}
}

// A handler's own _meta is kept beside the server's identity.
func TestShapePerRequestMergesMeta(t *testing.T) {
	s := NewServer(&Implementation{Name: "n", Version: "1"}, nil)
	got := string(s.shapePerRequest("tools/call", []byte(`{"content":[],"_meta":{"k":1},"resultType":"x"}`)))
	want := `{"resultType":"complete","content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"n","version":"1"},"k":1}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var v any
	if err := json.Unmarshal([]byte(got), &v); err != nil {
		t.Error(err)
	}
}

// A tool whose x-mcp-header annotation is invalid is refused when it is
// added, with the reason.
func TestAddToolRefusesBadParamHeader(t *testing.T) {
	_, err := newServerTool(&Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": "number", "x-mcp-header": "X"}}}},
		func(context.Context, *CallToolRequest) (*CallToolResult, error) { return nil, nil })
	if err == nil || !strings.Contains(err.Error(), "x-mcp-header") {
		t.Errorf("got %v", err)
	}
}

// The HTTP transport finds a claim by the key package httpmeta knows: it
// must be the one mcp documents.
func TestMetaProtocolVersionIsTheKeyTheTransportReads(t *testing.T) {
	if MetaProtocolVersion != httpmeta.MetaProtocolVersion {
		t.Errorf("mcp.MetaProtocolVersion %q, httpmeta.MetaProtocolVersion %q", MetaProtocolVersion, httpmeta.MetaProtocolVersion)
	}
}
