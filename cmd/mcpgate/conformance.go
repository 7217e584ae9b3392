package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/conformance"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/spf13/cobra"
)

func newConformanceCmd() *cobra.Command {
	var addr string
	cmd := &cobra.Command{
		Use:   "conformance-server",
		Short: "Serve the fixtures of the official MCP conformance suite over HTTP",
		Long: `Serve the tools, resources and prompts that the official conformance suite
(@modelcontextprotocol/conformance) calls, at http://ADDR/mcp, so that the
suite can score this implementation: make conformance runs it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			h := mcphttp.NewHandler(conformance.NewServer(), &mcphttp.Options{LegacySSE: true, Logger: slog.Default()})
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "conformance fixtures on http://%s/mcp\n", ln.Addr())
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				return err
			case <-ctx.Done():
			}
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h.Shutdown(sctx)
			if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:3001", "listen address")
	return cmd
}
