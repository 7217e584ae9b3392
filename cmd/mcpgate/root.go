package main

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise it comes from the module's build information.
var version = ""

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "mcpgate",
		Short: "An MCP server and gateway",
		Long: `mcpgate serves tools to AI clients over the Model Context Protocol (MCP).

Out of the box it offers a task store (create, list, update and complete
tasks, kept in a SQLite file in your data directory), so an assistant such
as Claude Desktop or Claude Code can keep track of work across sessions.

Run "mcpgate serve" and point a client at http://127.0.0.1:8765/mcp, or let
the client start it over stdio:

  {"mcpServers": {"mcpgate": {"command": "mcpgate", "args": ["serve", "--stdio"]}}}

It is also a client for any MCP server, local or remote:

  mcpgate tools list http://127.0.0.1:8765/mcp
  mcpgate tools call echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything

Logs go to standard error. Under "serve --stdio" standard output carries
only protocol messages; the client commands print their results there.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var logLevel string
	root.PersistentFlags().StringVar(&logLevel, "log-level", envOr("MCPGATE_LOG_LEVEL", "info"), "log detail on stderr: debug, info, warn or error (env MCPGATE_LOG_LEVEL)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(strings.ToUpper(logLevel))); err != nil {
			return fmt.Errorf("--log-level %q: use debug, info, warn or error", logLevel)
		}
		// Secrets never reach the log, whoever logs them (a library's
		// error text, an upstream's stderr).
		slog.SetDefault(slog.New(redact.NewHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))))
		return nil
	}
	root.AddCommand(newServeCmd(), newCheckConfigCmd(), newLoginCmd(), newAuthCmd(), newPinsCmd(), newVersionCmd(), newConformanceCmd(), newConformanceClientCmd())
	root.AddCommand(newClientCmds()...) // tools, resources, prompts, ping
	return root
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
