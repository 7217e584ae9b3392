package gateway

import "github.com/mcpgate/mcpgate/mcp"

// Bare tool servers answer tools/list and tools/call but not the MCP
// lifecycle; the client library speaks to them (mcp.ClientOptions.Bare),
// and the gateway publishes their tools like any other's. The server's
// protocol setting says which it is, or leaves the client to find out.

// bareMode is the client's treatment of bare tool servers for a server's
// protocol setting: "bare" skips initialize, "mcp" fails a server that
// does not know it, unset detects a bare one.
func bareMode(protocol string) mcp.BareMode {
	switch protocol {
	case "bare":
		return mcp.BareAlways
	case "mcp":
		return mcp.BareNever
	}
	return mcp.BareDetect
}
