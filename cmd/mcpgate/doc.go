// Command mcpgate speaks the Model Context Protocol (MCP): it runs many
// MCP servers behind one endpoint (a gateway), serves a built-in task
// store, and talks to any MCP server as a client.
//
// Usage:
//
//	mcpgate serve [--config FILE] [--stdio] [flags]
//	mcpgate check-config FILE
//	mcpgate tools list|call|search TARGET ...
//	mcpgate resources list|read TARGET ...
//	mcpgate prompts list|get TARGET ...
//	mcpgate ping TARGET
//	mcpgate status [URL]
//	mcpgate pins list|diff|approve|reset ...
//	mcpgate login SERVER
//	mcpgate auth hash-password USER | new-key NAME
//	mcpgate version
//
// "mcpgate serve --config FILE" runs the servers the file lists (a Claude
// Desktop claude_desktop_config.json works as it is; see docs/config.md)
// and serves all their tools, prompts and resources over Streamable HTTP
// (http://127.0.0.1:8765/mcp by default) or, with --stdio, on standard
// input and output. Without --config it serves the task store. The client
// commands reach a TARGET that is an http(s) URL, or a command given after
// "--" and started as a subprocess. "mcpgate help COMMAND" describes each
// command and its flags.
//
// Logs go to standard error; under "serve --stdio" standard output
// carries only protocol messages.
//
// The command is built from the library: package
// [github.com/mcpgate/mcpgate/gateway] and its config, package
// [github.com/mcpgate/mcpgate/mcphttp] for HTTP, package
// [github.com/mcpgate/mcpgate/auth] for authentication and package
// [github.com/mcpgate/mcpgate/taskstore] for the built-in tools.
package main
