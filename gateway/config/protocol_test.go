package config

import (
	"strings"
	"testing"
)

// protocol says whether a server speaks MCP or is a bare tool server;
// anything else is an error at its place, with a hint.
func TestServerProtocolIsMCPOrBare(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string // the protocol kept, when valid
		err       string // a part of the error, hint included
	}{
		{"unset", servers(`"a": {"command": "x"}`), "", ""},
		{"mcp", servers(`"a": {"command": "x", "protocol": "mcp"}`), "mcp", ""},
		{"bare", servers(`"a": {"command": "x", "protocol": "bare"}`), "bare", ""},
		{"bare negotiating", servers(`"a": {"command": "x", "protocol": "bare", "protocolVersion": "auto"}`), "bare", ""},
		{"near miss", servers(`"a": {"command": "x", "protocol": »"bar"}`), "",
			`protocol "bar" is not mcp or bare (hint: did you mean "bare"?)`},
		{"something else", servers(`"a": {"command": "x", "protocol": »"jsonrpc"}`), "",
			`protocol "jsonrpc" is not mcp or bare (hint: use "mcp", or "bare"`},
		{"bare with a revision", servers(`"a": {"command": "x", "protocol": "bare", "protocolVersion": »"2025-11-25"}`), "",
			`protocolVersion with protocol "bare" (hint: a bare tool server is sent no initialize`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, at := markers(tc.src)
			c, err := Parse([]byte(src), "c.json", env())
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := c.Servers["a"].Protocol; got != tc.want {
					t.Errorf("protocol %q, want %q", got, tc.want)
				}
				return
			}
			errs := ErrorList(err)
			if len(errs) != 1 || errs[0].Pos != at[0] || !strings.Contains(errs[0].Error(), tc.err) {
				t.Errorf("got %v, want one error at %d:%d with %q", err, at[0].Line, at[0].Col, tc.err)
			}
		})
	}
}
