// Command mcpgate serves MCP tools: its built-in task store today, and
// (with the gateway) many MCP servers behind one endpoint.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgate:", err)
		os.Exit(1)
	}
}
