// Package config reads the gateway's configuration: one JSON or YAML file
// that accepts a Claude Desktop claude_desktop_config.json verbatim (its
// mcpServers map) plus mcpgate's own sections.
//
// # Reading a file
//
// [Load] reads a file and [Parse] bytes; the name picks the format (.yaml
// and .yml are YAML, .json and .jsonc JSON with comments and trailing
// commas allowed, as in VS Code's mcp.json). ${VAR} and ${VAR:-default}
// are expanded through the lookup function the caller gives (such as
// os.LookupEnv). The result is a [Config], checked ([Config.Validate]) and
// with defaults applied ([Config.ApplyDefaults]); [Config.Warnings] lists
// what was tolerated, such as other clients' keys.
//
// A [Config] has a [Server] per upstream (a command, or a URL), with its
// [ServerOptions] (start, timeouts, concurrency, protocol revision,
// instances), and the sections for [Limits], [Audit], tenants ([Tenant]),
// [ToolSearch], [State] and [Cluster]. A gateway that builds or changes
// a Config in code calls [Config.Validate] itself.
//
// # Diagnostics
//
// A file that was read but is wrong fails with [Errors], every problem at
// once in file order; [ErrorList] gets them from the error. Each
// [Diagnostic] reads like a compiler's, FILE:LINE:COL: message, with a
// hint (a did-you-mean for a misspelt key), and never quotes a secret:
// values from the environment, env, headers and credentials are named,
// not shown. [Config.LookCommands] warns of commands that would not
// start; [Config.At] says where a value stands in the file.
//
// # Secrets
//
// [Config.Redacted] is a copy safe to print or log: env and header values,
// tokens and client secrets, and whatever came from a variable whose name
// or value reads as a secret, are shown as [Redaction].
package config
