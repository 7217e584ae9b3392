// Package interop holds the interoperability matrix: tests that pair
// mcpgate's server and client with other MCP implementations (the
// TypeScript SDK, the official Go SDK, mcp-go, mcp-remote, the MCP
// Inspector and the reference servers) over real pipes and loopback HTTP.
// Run it with `make interop`; see README.md.
package interop
