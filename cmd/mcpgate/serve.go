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
	"strings"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
	"github.com/mcpgate/mcpgate/taskstore"
	"github.com/spf13/cobra"
)

type serveFlags struct {
	stdio           bool
	addr            string
	stateless       bool
	allowedHosts    []string
	allowedOrigins  []string
	cors            bool
	legacySSE       bool
	db              string
	maxMessageSize  int
	shutdownTimeout time.Duration
	sessionIdle     time.Duration
	perCaller       int // --max-sessions-per-principal
	auth            authFlags
	config          string
	addrSet         bool
	metricsAddr     string
	traceArguments  bool // --trace-arguments
	adminTokenFile  string
	adminToken      string // read from adminTokenFile or MCPGATE_ADMIN_TOKEN
	tenant          string
	redis           string // --redis, or MCPGATE_REDIS_URL
	redisFrom       string // which of them set redis, for messages
	replicaID       string
	shared          *cluster.Cluster // opened by openCluster; nil when none is set
}

const defaultAddr = "127.0.0.1:8765"

func newServeCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve MCP: a gateway for the servers of --config, or the built-in task tools",
		Long: `Serve MCP to AI clients, over Streamable HTTP or (with --stdio) standard
input and output.

With --config FILE, mcpgate is a gateway: it runs the MCP servers the file
lists (commands over stdio, URLs over HTTP; a Claude Desktop config works
as it is), supervises them, and serves all their tools, prompts and
resources here, each name prefixed with its server's name
(github_create_issue). The built-in task tools join them when the file
enables builtins.tasks. Check a file first with "mcpgate check-config FILE".

Without --config, mcpgate serves its built-in task store: the tools
create_task, get_task, list_tasks, update_task, complete_task and
delete_task, the prompt review_tasks and the resource tasks://open. Tasks
are kept in a SQLite file, by default in your data directory
(` + defaultDBHint() + `); set --db or MCPGATE_TASKS_DB to use another,
or to a postgres:// URL to keep them in Postgres, where replicas behind a
load balancer share them.

Over HTTP mcpgate listens on http://` + defaultAddr + `/mcp (loopback only;
--addr changes it, and an address other machines can reach needs
--auth-keys, --auth-users or --oauth-issuer). The older HTTP+SSE transport
of 2024-11-05 clients is served at /sse as well.

With --stdio, messages are read from standard input and written to standard
output, one per line: this is how desktop clients such as Claude Desktop
start a server.

Either way mcpgate stops on SIGINT or SIGTERM (and, with --stdio, at the end
of its input) after letting calls in progress finish.`,
		Example: `  mcpgate serve
  mcpgate serve --stdio
  mcpgate serve --config gateway.yaml
  mcpgate serve --config claude_desktop_config.json --stdio`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.addrSet = cmd.Flags().Changed("addr")
			if f.metricsAddr != "" && f.config == "" {
				// The ops listener reports on the gateway's upstreams; the
				// plain task server has none.
				return errors.New("--metrics-addr serves the gateway's metrics and health: it needs --config FILE (a gateway); without one there is nothing to report on")
			}
			if err := f.readAdminToken(); err != nil {
				return err
			}
			if err := flagFromEnv(cmd, "max-sessions-per-principal", "MCPGATE_MAX_SESSIONS_PER_PRINCIPAL"); err != nil {
				return err
			}
			f.clusterFromEnv(cmd)
			return withTelemetry(cmd.Context(), func() error {
				if f.config != "" {
					return serveGateway(cmd.Context(), f)
				}
				return serve(cmd.Context(), f)
			})
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.stdio, "stdio", false, "serve over standard input and output instead of HTTP")
	fl.StringVar(&f.tenant, "tenant", envOr("MCPGATE_TENANT", ""), "with --config and --stdio: act for this tenant of the configuration (its servers, tools, credentials and limits); without it the local user sees every server (env MCPGATE_TENANT)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", envOr("MCPGATE_METRICS_ADDR", ""), "with --config: serve /metrics (Prometheus), /healthz and /readyz on this address of their own, such as 127.0.0.1:9464 (env MCPGATE_METRICS_ADDR)")
	fl.BoolVar(&f.traceArguments, "trace-arguments", envOr("MCPGATE_TRACE_ARGUMENTS", "") == "1", "with tracing on (OTEL_*): record each tool call's arguments on its spans as gen_ai.tool.call.arguments, with secrets redacted and long values cut as in the request log; off by default, as arguments may hold personal data (env MCPGATE_TRACE_ARGUMENTS=1)")
	fl.StringVar(&f.adminTokenFile, "admin-token-file", envOr("MCPGATE_ADMIN_TOKEN_FILE", ""), "with --metrics-addr: a file holding the admin token, which callers of /readyz?verbose=1 must send as \"Authorization: Bearer TOKEN\" to see each upstream's state (env MCPGATE_ADMIN_TOKEN_FILE, or the token itself in MCPGATE_ADMIN_TOKEN)")
	fl.StringVarP(&f.config, "config", "c", envOr("MCPGATE_CONFIG", ""), "gateway configuration (JSON or YAML; a Claude Desktop config works as it is): serve its MCP servers behind this endpoint, reloading on change or SIGHUP (env MCPGATE_CONFIG)")
	fl.StringVar(&f.addr, "addr", envOr("MCPGATE_ADDR", defaultAddr), "HTTP listen address (env MCPGATE_ADDR); keep it on 127.0.0.1 unless clients are remote and --auth-keys, --auth-users or --oauth-issuer is set")
	fl.BoolVar(&f.stateless, "stateless", false, "HTTP without sessions, for replicas behind a load balancer (no server-to-client requests, no GET stream)")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "host name clients may use in the Host header besides localhost, 127.0.0.1 and ::1 (repeatable)")
	fl.StringSliceVar(&f.allowedOrigins, "allowed-origin", nil, "browser origin allowed to call the server, such as https://app.example.com (repeatable)")
	fl.BoolVar(&f.cors, "cors", false, "answer CORS preflights for allowed origins (browser clients)")
	fl.BoolVar(&f.legacySSE, "legacy-sse", true, "also serve the 2024-11-05 HTTP+SSE transport at /sse and /message")
	fl.StringVar(&f.db, "db", "", "task database: a SQLite file, or a Postgres database as postgres://user:password@host:5432/db (default: MCPGATE_TASKS_DB or a file in the user data directory)")
	fl.IntVar(&f.maxMessageSize, "max-message-size", 4<<20, "largest message accepted, in bytes")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 10*time.Second, "how long calls in progress may run on after a signal (or the end of input)")
	fl.DurationVar(&f.sessionIdle, "session-idle-timeout", 30*time.Minute, "end HTTP sessions idle for this long")
	fl.IntVar(&f.perCaller, "max-sessions-per-principal", 64, "most HTTP sessions one caller may hold (anonymous callers counted by IP address); past it the caller's oldest idle session is ended, or if all are busy the new one is refused with 429 (env MCPGATE_MAX_SESSIONS_PER_PRINCIPAL)")
	fl.StringVar(&f.redis, "redis", "", "share sessions, streams, rate limits and tasks with the other replicas behind a load balancer, in the Redis at this URL, redis://[:password@]host:6379/0 or rediss:// (env MCPGATE_REDIS_URL; over the configuration's cluster.redis)")
	fl.StringVar(&f.replicaID, "replica-id", "", "with --redis: this replica's name in logs and metrics (env MCPGATE_REPLICA_ID; over the configuration's cluster.replicaId; default: host name and process id)")
	f.auth.register(fl)
	return cmd
}

// openStore opens the task database at path (a file, or a postgres://
// URL), or at the default place when path is empty; hint names the
// settings that choose another. The name it returns, for logs, hides a
// URL's password.
func openStore(path, hint string) (*taskstore.Store, string, error) {
	if path == "" {
		var err error
		if path, err = taskstore.DefaultPath(); err != nil {
			return nil, "", fmt.Errorf("finding the task database: %w (set %s)", err, hint)
		}
	}
	name := path
	if postgres.IsURL(path) {
		name = postgres.Redact(path)
	}
	store, err := taskstore.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("opening the task database %s: %w", name, err)
	}
	return store, name, nil
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

	store, path, err := openStore(f.db, "--db or MCPGATE_TASKS_DB")
	if err != nil {
		return err
	}
	defer store.Close()
	stopMetrics, err := startMetrics(ctx, nil, os.Getenv, slog.Default())
	if err != nil {
		return err
	}
	defer stopMetrics()
	s := newServer(store)
	serverTracing(s, f.stdio, f.traceArguments)

	if f.stdio {
		// One client over a pipe: there is nothing to share with
		// replicas, so no Redis is opened, and none is required.
		slog.Info("mcpgate serving on stdio", "version", buildVersion(), "db", path)
		return s.ServeStdio(ctx, &mcp.ServeOptions{MaxMessageSize: f.maxMessageSize, ShutdownTimeout: f.shutdownTimeout})
	}
	if f.shared, err = openCluster(ctx, f, nil); err != nil {
		return err
	}
	if f.shared != nil {
		defer f.shared.Close()
	}
	return serveHTTP(ctx, s, f, path, nil)
}

// gatewayHTTP is what the gateway adds to HTTP serving: its tenant
// resolution, inside authentication, and sessions bound to the tenant.
type gatewayHTTP struct {
	wrap      func(http.Handler) http.Handler
	principal func(*http.Request) string
	g         *gateway.Gateway
	config    string // the configuration file, for the banner
	servers   int    // how many servers it configures
}

func serveHTTP(ctx context.Context, s *mcp.Server, f serveFlags, db string, gw *gatewayHTTP) error {
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", f.addr, err)
	}
	defer ln.Close()
	authn, err := f.auth.build(f.addr, ln.Addr().String())
	if err != nil {
		return err
	}
	opts := &mcphttp.Options{
		Stateless:          f.stateless,
		AllowedHosts:       f.allowedHosts,
		AllowedOrigins:     f.allowedOrigins,
		CORS:               f.cors,
		MaxBodySize:        int64(f.maxMessageSize),
		SessionIdleTimeout: f.sessionIdle,
		LegacySSE:          f.legacySSE,
		Logger:             slog.Default(),
	}
	opts.MaxSessionsPerPrincipal = f.perCaller
	if f.shared != nil {
		// Sessions, streams and deliveries shared through Redis.
		opts.Cluster = f.shared
		if gw != nil {
			// A session's own upstream processes live on one replica.
			opts.Route = gw.g.Route(f.shared)
			opts.CarryContext = gateway.ContextCarrier()
		}
	}
	if authn != nil {
		opts.Principal = authn.PrincipalID
		opts.Authorize = authn.Authorize
	}
	if gw != nil {
		opts.Principal = gw.principal
	}
	mh := mcphttp.NewHandler(s, opts)
	var handler http.Handler = mh
	if gw != nil {
		handler = gw.wrap(handler)
	}
	if authn != nil {
		handler = authn.Wrap(handler)
	}
	// A foreign Host or Origin is refused (403) before authentication:
	// a DNS-rebinding page is not asked for credentials.
	handler = mh.CheckHost(handler)
	handler = httpTracing(handler)
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	url := "http://" + ln.Addr().String() + "/mcp"
	attrs := []any{"url", url, "version", buildVersion(), "db", db}
	if gw != nil {
		attrs = append(attrs, "config", gw.config, "servers", gw.servers)
	}
	if f.shared != nil {
		attrs = append(attrs, "replica", f.shared.ReplicaID())
	}
	slog.Info("mcpgate serving Streamable HTTP", attrs...)
	headers := ""
	if f.auth.keys != "" {
		headers = `,"headers":{"Authorization":"Bearer YOUR_API_KEY"}`
	}
	if gw != nil {
		fmt.Fprintf(os.Stderr, "mcpgate gateway: %d servers from %s\n", gw.servers, gw.config)
	}
	fmt.Fprintf(os.Stderr, "mcpgate is listening on %s\nclient config: {\"mcpServers\":{\"mcpgate\":{\"type\":\"http\",\"url\":%q%s}}}\n", url, url, headers)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("mcpgate shutting down", "timeout", f.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	// Streams end and requests in flight finish first; the server then
	// closes its idle connections.
	herr := mh.Shutdown(sctx)
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if herr != nil {
		slog.Warn("mcpgate: shutdown", "error", herr)
	}
	return nil
}

// flagFromEnv gives flag name the value of the environment variable env
// when the command line does not set it; a value the flag cannot take is
// an error naming the variable.
func flagFromEnv(cmd *cobra.Command, name, env string) error {
	v := os.Getenv(env)
	if v == "" || cmd.Flags().Changed(name) {
		return nil
	}
	if err := cmd.Flags().Set(name, v); err != nil {
		return fmt.Errorf("%s=%q: %w", env, v, err)
	}
	return nil
}

// minAdminToken is the shortest admin token accepted, in bytes.
const minAdminToken = 16

// readAdminToken reads the ops listener's admin token from
// --admin-token-file, or else from MCPGATE_ADMIN_TOKEN.
func (f *serveFlags) readAdminToken() error {
	what := "MCPGATE_ADMIN_TOKEN"
	if f.metricsAddr != "" {
		f.adminToken = os.Getenv(what)
	}
	if f.adminTokenFile != "" {
		if f.metricsAddr == "" || f.config == "" {
			return errors.New("--admin-token-file guards the ops listener: it needs --config and --metrics-addr")
		}
		b, err := os.ReadFile(f.adminTokenFile)
		if err != nil {
			return fmt.Errorf("--admin-token-file: %w", err)
		}
		what, f.adminToken = "--admin-token-file "+f.adminTokenFile, strings.TrimSpace(string(b))
	}
	if f.adminToken != "" && len(f.adminToken) < minAdminToken {
		return fmt.Errorf("%s: the admin token is %d bytes; use at least %d, such as the output of `openssl rand -hex 32`", what, len(f.adminToken), minAdminToken)
	}
	return nil
}

func newServer(store *taskstore.Store) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{
		Name:        "mcpgate",
		Title:       "mcpgate",
		Version:     buildVersion(),
		Description: "A task store served by mcpgate: tools, a review prompt and the open tasks as a resource",
	}, &mcp.ServerOptions{
		Instructions: "mcpgate keeps a persistent task list. Use create_task to record work, " +
			"list_tasks to find tasks (filter by status, tag or text), update_task and complete_task to track progress.",
		Logger: slog.Default(),
	})
	taskstore.Register(s, store)
	taskstore.RegisterPrompts(s, store)
	taskstore.RegisterResources(s, store)
	return s
}
