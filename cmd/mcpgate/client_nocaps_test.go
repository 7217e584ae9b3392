package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
)

// A server of tools only, to see what the client commands say of the
// resources and prompts it does not have: this test binary started again
// with MCPGATE_CLIENT_FIXTURE=tools-only.
func init() {
	if os.Getenv(fixtureEnv) != "tools-only" {
		return
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "tools-only", Version: "1"}, nil)
	if err := s.AddTool(&mcp.Tool{Name: "noop", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.TextResult("ok"), nil
		}); err != nil {
		panic(err)
	}
	if err := s.ServeStdio(context.Background(), nil); err != nil {
		fmt.Fprintln(os.Stderr, "fixture:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestClientServerWithoutResourcesOrPrompts(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := []string{"--env", fixtureEnv + "=tools-only", "--env", "GORACE=atexit_sleep_ms=0", "--", exe}
	// An empty list, and a note on stderr.
	for _, kind := range []string{"resources", "prompts"} {
		r := cli(t, nil, args(kind, "list", "--json", server)...)
		if r.code != 0 || !strings.Contains(r.stderr, "offers no "+kind) {
			t.Errorf("%s list: %v", kind, r)
		}
		if v := decode[map[string][]any](t, r.stdout); v[kind] == nil || len(v[kind]) != 0 {
			t.Errorf("%s list --json: %s", kind, r.stdout)
		}
	}
	fails(t, []string{"prompts capability"}, "prompts", "get", "x", server)
	fails(t, []string{"resources capability"}, "resources", "read", "file:///x", server)
}
