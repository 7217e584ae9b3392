package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/conformance"
	"github.com/mcpgate/mcpgate/mcp"
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
			server := conformance.NewServer()
			if redisURL != "" {
				c, err := cluster.Open(ctx, cluster.Options{URL: redisURL, ReplicaID: replicaID, Logger: slog.Default()})
				if err != nil {
					return err
				}
				defer c.Close()
				opts.Cluster = c
				if err := shareListChanges(ctx, server, c); err != nil {
					return err
				}
			}
			h := mcphttp.NewHandler(server, opts)
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

// The fixtures' list changes, on every replica. test_trigger_tool_change
// and test_trigger_prompt_change add or remove a tool or a prompt of the
// one process they run in; replicas behind a load balancer must agree,
// as replicas of one configuration do, or a tools/list that reaches
// another replica tells a different story. With a cluster, the triggers
// count their calls in Redis (odd: present) and announce the count;
// every replica applies it and acknowledges, and the trigger answers once
// all have, so that the client's next request finds the change wherever
// it lands.

// listChange is one of the fixtures' changing lists.
type listChange struct {
	trigger string // the tool that toggles it
	apply   func(on bool)
}

func fixtureChanges(s *mcp.Server) map[string]listChange {
	text := &mcp.TextContent{Text: "here"}
	return map[string]listChange{
		"tool": {"test_trigger_tool_change", func(on bool) {
			if !on {
				s.RemoveTools("test_dynamic_tool")
				return
			}
			s.AddTool(&mcp.Tool{Name: "test_dynamic_tool", Description: "A tool that comes and goes", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{text}}, nil
				})
		}},
		"prompt": {"test_trigger_prompt_change", func(on bool) {
			if !on {
				s.RemovePrompts("test_dynamic_prompt")
				return
			}
			s.AddPrompt(&mcp.Prompt{Name: "test_dynamic_prompt", Description: "A prompt that comes and goes"},
				func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: mcp.RoleUser, Content: text}}}, nil
				})
		}},
	}
}

// changeAckTimeout bounds a trigger's wait for the replicas: one that
// died must not hold it.
const changeAckTimeout = 5 * time.Second

// shareListChanges replaces the triggers of s with ones that change every
// replica's lists (see above).
func shareListChanges(ctx context.Context, s *mcp.Server, c *cluster.Cluster) error {
	rdb := c.Redis()
	channel := c.Key("conformance:changes")
	sub := rdb.Subscribe(ctx, channel)
	if _, err := sub.Receive(ctx); err != nil {
		sub.Close()
		return fmt.Errorf("subscribing to %s: %w", channel, err)
	}
	changes := fixtureChanges(s)
	var mu sync.Mutex
	applied := map[string]int64{} // the count each list is at here
	apply := func(kind string, n int64) {
		mu.Lock()
		defer mu.Unlock()
		if n > applied[kind] {
			applied[kind] = n
			changes[kind].apply(n%2 == 1)
		}
	}
	// A replica that starts late catches up first.
	for kind := range changes {
		if n, err := rdb.Get(ctx, c.Key("conformance:"+kind)).Int64(); err == nil {
			apply(kind, n)
		}
	}
	go func() {
		for msg := range sub.Channel() {
			var kind string
			var n int64
			if _, err := fmt.Sscanf(msg.Payload, "%s %d", &kind, &n); err != nil || changes[kind].apply == nil {
				continue
			}
			apply(kind, n)
			rdb.RPush(context.Background(), c.Key(fmt.Sprintf("conformance:ack:%s:%d", kind, n)), c.Tag())
		}
	}()
	for kind, lc := range changes {
		mcp.AddTool(s, &mcp.Tool{Name: lc.trigger, Description: "Adds or removes the dynamic " + kind + " on every replica", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
				n, err := rdb.Incr(ctx, c.Key("conformance:"+kind)).Result()
				if err != nil {
					return nil, nil, err
				}
				receivers, err := rdb.Publish(ctx, channel, fmt.Sprintf("%s %d", kind, n)).Result()
				if err != nil {
					return nil, nil, err
				}
				acks := c.Key(fmt.Sprintf("conformance:ack:%s:%d", kind, n))
				defer rdb.Del(context.WithoutCancel(ctx), acks)
				for range receivers {
					if err := rdb.BLPop(ctx, changeAckTimeout, acks).Err(); err != nil {
						return nil, nil, fmt.Errorf("a replica did not apply the %s change: %w", kind, err)
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: kind + " list changed"}}}, nil, nil
			})
	}
	return nil
}
