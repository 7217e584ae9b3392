package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/taskstore"
	"github.com/spf13/cobra"
)

type serveFlags struct {
	stdio           bool
	db              string
	maxMessageSize  int
	shutdownTimeout time.Duration
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the built-in task tools over MCP",
		Long: `Serve the built-in task store's tools (create_task, get_task, list_tasks,
update_task, complete_task, delete_task) to an MCP client.

With --stdio, messages are read from standard input and written to standard
output, one per line: this is how desktop clients such as Claude Desktop
start a server. The server stops when its input ends or on SIGINT/SIGTERM,
after letting calls in progress finish.

Tasks are kept in a SQLite file, by default in your data directory
(` + defaultDBHint() + `); set --db or MCPGATE_TASKS_DB to use another.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return serve(cmd.Context(), f)
		},
	}
	cmd.Flags().BoolVar(&f.stdio, "stdio", false, "serve over standard input and output (the only transport in this version, also used without the flag)")
	cmd.Flags().StringVar(&f.db, "db", "", "task database file (default: MCPGATE_TASKS_DB or the user data directory)")
	cmd.Flags().IntVar(&f.maxMessageSize, "max-message-size", 4<<20, "largest message accepted, in bytes")
	cmd.Flags().DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long calls in progress may run on after input ends or a signal")
	return cmd
}

func defaultDBHint() string {
	if p, err := taskstore.DefaultPath(); err == nil {
		return p
	}
	return "the user data directory"
}

func serve(ctx context.Context, f serveFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	path := f.db
	if path == "" {
		var err error
		if path, err = taskstore.DefaultPath(); err != nil {
			return fmt.Errorf("finding the task database: %w (set --db or MCPGATE_TASKS_DB)", err)
		}
	}
	store, err := taskstore.Open(path)
	if err != nil {
		return fmt.Errorf("opening the task database %s: %w", path, err)
	}
	defer store.Close()

	s := newServer(store)
	slog.Info("mcpgate serving on stdio", "version", buildVersion(), "db", path)
	err = s.ServeStdio(ctx, &mcp.ServeOptions{MaxMessageSize: f.maxMessageSize, ShutdownTimeout: f.shutdownTimeout})
	slog.Debug("mcpgate stopped")
	return err
}

func newServer(store *taskstore.Store) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{
		Name:        "mcpgate",
		Title:       "mcpgate",
		Version:     buildVersion(),
		Description: "Task store tools served by mcpgate",
	}, &mcp.ServerOptions{
		Instructions: "mcpgate keeps a persistent task list. Use create_task to record work, " +
			"list_tasks to find tasks (filter by status, tag or text), update_task and complete_task to track progress.",
		Logger: slog.Default(),
	})
	taskstore.Register(s, store)
	return s
}
