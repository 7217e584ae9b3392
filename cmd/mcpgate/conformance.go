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

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/conformance"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/spf13/cobra"
)

func newConformanceCmd() *cobra.Command {
	var addr, redisURL, replicaID string
	cmd := &cobra.Command{
		Use:    "conformance-server",
		Hidden: true, // for make conformance, not for users
		Short:  "Serve the fixtures of the official MCP conformance suite over HTTP",
		Long: `Serve the tools, resources and prompts that the official conformance suite
(@modelcontextprotocol/conformance) calls, at http://ADDR/mcp, so that the
suite can score this implementation: make conformance runs it.

With --redis, several of these servers share their sessions through that
Redis, so that the suite can score them behind a round-robin load
balancer (make conformance-cluster).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := &mcphttp.Options{LegacySSE: true, Logger: slog.Default()}
			if redisURL != "" {
				c, err := cluster.Open(ctx, cluster.Options{URL: redisURL, ReplicaID: replicaID, Logger: slog.Default()})
				if err != nil {
					return err
				}
				defer c.Close()
				opts.Cluster = c
			}
			h := mcphttp.NewHandler(conformance.NewServer(), opts)
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
	cmd.Flags().StringVar(&redisURL, "redis", envOr("MCPGATE_REDIS_URL", ""), "share sessions with the other replicas through this Redis, redis://host:port/db (env MCPGATE_REDIS_URL)")
	cmd.Flags().StringVar(&replicaID, "replica-id", envOr("MCPGATE_REPLICA_ID", ""), "this replica's name in logs (env MCPGATE_REPLICA_ID; default host name and pid)")
	return cmd
}

func newConformanceClientCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "conformance-client URL",
		Hidden: true, // for make conformance, not for users
		Short:  "Play the client side of an official MCP conformance suite scenario",
		Long: `Connect to the suite's test server at URL and do what the scenario named in
MCP_CONFORMANCE_SCENARIO asks (credentials, for some auth scenarios, come
in MCP_CONFORMANCE_CONTEXT): the suite's client mode runs this command,
and make conformance scores it. Exits non-zero when the scenario could not
be completed or, for scenarios that test a refusal, when the client refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The runner gives up on a scenario after 30 s; end sooner,
			// with a message, rather than be killed silently.
			ctx, cancel := context.WithTimeout(ctx, 25*time.Second)
			defer cancel()
			scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
			if scenario == "" {
				return errors.New("MCP_CONFORMANCE_SCENARIO is not set: this command is run by the conformance suite")
			}
			return conformance.RunClient(ctx, args[0], scenario, os.Getenv("MCP_CONFORMANCE_CONTEXT"), slog.Default())
		},
	}
}
