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
		Short: "An MCP gateway: many MCP servers behind one endpoint, with built-in task tools",
		Long: `mcpgate speaks the Model Context Protocol (MCP), through which AI clients
such as Claude Desktop, Claude Code and Cursor discover and call tools.

  A gateway      "mcpgate serve --config FILE" runs the MCP servers a file
                 lists (a Claude Desktop config works as it is) and serves
                 all their tools, prompts and resources behind one endpoint,
                 over Streamable HTTP or stdio. Check a file first with
                 "mcpgate check-config FILE".
  Built-in tools "mcpgate serve" alone serves a task store (create, list,
                 update and complete tasks, kept in SQLite) at
                 http://127.0.0.1:8765/mcp, or over stdio with --stdio.
  A client       "mcpgate tools|resources|prompts|ping" talk to any MCP
                 server: a URL, or a command after "--".
  A Go library   github.com/mcpgate/mcpgate/mcp and mcphttp, for writing
                 MCP servers and clients (see the README).

Logs go to standard error. Under "serve --stdio" standard output carries
only protocol messages; the client commands print their results there.`,
		Example: `  mcpgate serve
  mcpgate check-config gateway.yaml
  mcpgate tools list http://127.0.0.1:8765/mcp
  mcpgate tools call echo --args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio`,
		Version:       buildVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("mcpgate {{.Version}}\n")
	var logLevel, logFormat string
	root.PersistentFlags().StringVar(&logLevel, "log-level", envOr("MCPGATE_LOG_LEVEL", "info"), "log detail on stderr: debug, info, warn or error (env MCPGATE_LOG_LEVEL)")
	root.PersistentFlags().StringVar(&logFormat, "log-format", envOr("MCPGATE_LOG_FORMAT", "text"), "log lines on stderr as text (key=value) or json, one object a line (env MCPGATE_LOG_FORMAT)")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(strings.ToUpper(logLevel))); err != nil {
			return fmt.Errorf("--log-level %q: use debug, info, warn or error", logLevel)
		}
		// Secrets never reach the log, whoever logs them (a library's
		// error text, an upstream's stderr).
		var h slog.Handler
		switch strings.ToLower(logFormat) {
		case "text":
			h = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})
		case "json":
			h = slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lvl})
		default:
			return fmt.Errorf("--log-format %q: use text or json", logFormat)
		}
		// Lines logged during a traced request name its trace and span.
		slog.SetDefault(slog.New(redact.NewHandler(withTraceIDs(h))))
		return nil
	}
	root.AddCommand(newServeCmd(), newCheckConfigCmd(), newLoginCmd(), newAuthCmd(), newPinsCmd(), newVersionCmd(), newConformanceCmd(), newConformanceClientCmd(), newStatusCmd())
	root.AddCommand(newClientCmds()...) // tools, resources, prompts, ping
	return root
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
