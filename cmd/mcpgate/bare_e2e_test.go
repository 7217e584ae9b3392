package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testbin"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// The client commands work against a bare tool server: found out (with
// a warning) or declared with --bare (quietly, without initialize).
func TestClientBareToolServer(t *testing.T) {
	server := []string{"--", testbin.Build(t, testbin.BareServer)}
	const warning = "does not speak the MCP lifecycle"
	for _, tc := range []struct {
		name   string
		args   []any
		code   int
		stdout []string // each a part of standard output
		stderr []string // each a part of standard error; none when empty
	}{
		{"list, detected", []any{"tools", "list", server}, 0,
			[]string{"add     Add two numbers", "greet   Greet someone", "lookup  Look a record up"}, []string{warning}},
		{"list, declared", []any{"tools", "list", "--bare", server}, 0,
			[]string{"add     Add two numbers", "note    The latest note"}, nil},
		{"call, detected, as JSON", []any{"tools", "call", "add", "--args", `{"a":2,"b":3}`, "--json", server}, 0,
			[]string{`"structuredContent": {`, `"sum": 5`, `"text": "{\"sum\":5}"`}, []string{warning}},
		{"call, declared", []any{"tools", "call", "greet", "--bare", "--args", `{"name":"Ada"}`, server}, 0,
			[]string{"Hello, Ada!"}, nil},
		{"an error answered is the tool's error", []any{"tools", "call", "lookup", "--bare", server}, 1,
			nil, []string{`tool "lookup" reported an error: the database is locked`}},
		{"ping, declared", []any{"ping", "--bare", server}, 0,
			[]string{"pong from a bare tool server (no MCP lifecycle; it answered tools/list)"}, nil},
		{"--bare with a revision", []any{"tools", "list", "--bare", "--protocol-version", "2025-11-25", server}, 1,
			nil, []string{"--bare speaks no protocol revision: drop --protocol-version"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := cli(t, nil, args(tc.args...)...)
			if r.code != tc.code {
				t.Fatalf("want exit %d, got %v", tc.code, r)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("stdout lacks %q:\n%v", s, r)
				}
			}
			if len(tc.stderr) == 0 && r.stderr != "" {
				t.Errorf("stderr not empty:\n%v", r)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%v", s, r)
				}
			}
			if n := strings.Count(r.stderr, warning); n > 1 {
				t.Errorf("warned %d times:\n%v", n, r)
			}
		})
	}
}

// A gateway serves bare tool servers, declared (protocol: bare) or
// found out, under their prefixes: a value comes back as structured
// content and text, an upstream's error as isError, and mcpgate status
// says they are bare.
func TestGatewayBinaryBareToolServers(t *testing.T) {
	bin := testbin.Build(t, testbin.BareServer)
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"calc":  map[string]any{"command": bin, "protocol": "bare"},
		"found": map[string]any{"command": bin},
	}})
	file := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(file, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "adm-bare-0123456789"
	p := startHTTPEnv(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "--config", file, "--metrics-addr", "127.0.0.1:0")
	ops := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(p.log())
	if ops == nil {
		t.Fatalf("no ops address:\n%s", p.log())
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
	defer cancel()
	cs, err := mcp.NewClient(nil, nil).Connect(ctx, &mcphttp.ClientTransport{Endpoint: p.url})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	for _, want := range []string{"calc_add", "calc_lookup", "found_add", "found_lookup"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s\n%s", names, want, p.log())
		}
	}
	for _, server := range []string{"calc", "found"} {
		res, err := cs.CallTool(ctx, server+"_add", map[string]any{"a": 2, "b": 3})
		if err != nil {
			t.Fatalf("%s_add: %v", server, err)
		}
		if text, _ := res.Content[0].(*mcp.TextContent); res.IsError || text == nil || text.Text != `{"sum":5}` ||
			!reflect.DeepEqual(res.StructuredContent, map[string]any{"sum": 5.0}) {
			t.Errorf("%s_add: %+v, want {\"sum\":5} as structured content and text", server, res)
		}
		res, err = cs.CallTool(ctx, server+"_lookup", nil)
		if err != nil {
			t.Fatalf("%s_lookup: %v", server, err)
		}
		if text, _ := res.Content[0].(*mcp.TextContent); !res.IsError || text == nil || text.Text != "the database is locked" {
			t.Errorf("%s_lookup: %+v, want an isError result with the upstream's message", server, res)
		}
	}
	r := cli(t, []string{"MCPGATE_ADMIN_TOKEN=" + token}, "status", ops[1])
	if r.code != 0 || !strings.Contains(r.stdout, "calc (bare)") || !strings.Contains(r.stdout, "found (bare)") {
		t.Errorf("mcpgate status:\n%v", r)
	}
}
