package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/taskstore"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// serveGateway serves the upstreams of a configuration file (and the
// built-in tools when it enables them) behind one endpoint, reloading the
// file when it changes or on SIGHUP.
func serveGateway(ctx context.Context, f serveFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := loadConfig(f.config)
	if err != nil {
		return err
	}
	if f.tenant != "" {
		if !f.stdio {
			return fmt.Errorf("--tenant is for --stdio; over HTTP the tenant comes from each caller's credentials (or X-Tenant-ID)")
		}
		if _, ok := cfg.Tenants[f.tenant]; !ok {
			return fmt.Errorf("--tenant %q: %s configures no such tenant; it has %s", f.tenant, f.config, tenantNames(cfg))
		}
	}
	opts := &gateway.Options{Logger: slog.Default(), Version: buildVersion(), Server: mcp.ServerOptions{
		Instructions: "mcpgate serves the tools of several MCP servers; each tool's name starts with its server's name.",
	}}
	if f.shared, err = openCluster(ctx, f, cfg); err != nil {
		return err
	}
	if f.shared != nil {
		defer f.shared.Close()
		opts.Cluster = f.shared
	}
	dbPath := ""
	if cfg.Builtins.Tasks {
		var store *taskstore.Store
		if store, dbPath, err = openStore(cmpOr(cfg.Builtins.TasksDB, f.db), "builtins.tasksDb or --db"); err != nil {
			return err
		}
		defer store.Close()
		opts.Builtins = map[string]*mcp.Server{"tasks": newServer(store)}
	}
	if cfg.Audit.DB != "" {
		a, err := gateway.OpenAudit(cfg.Audit.DB, cfg.Audit.Retention.D(), slog.Default())
		if err != nil {
			return fmt.Errorf("opening the audit log: %w", err)
		}
		defer a.Close()
		opts.Audit = a
	}
	if e := cfg.ToolSearch.Embeddings; e != nil {
		eo := &toolsearch.EmbedOptions{Embedder: &toolsearch.OpenAIEmbedder{Endpoint: e.URL, Model: e.Model, APIKey: e.APIKey}, Logger: slog.Default()}
		if e.Cache != "" {
			c, err := toolsearch.OpenCache(e.Cache)
			if err != nil {
				return fmt.Errorf("opening the embeddings cache: %w", err)
			}
			defer c.Close()
			eo.Cache = c
		}
		opts.Embedder = eo // search keeps to BM25 while the endpoint is down
	}
	var reg *prometheus.Registry
	if f.metricsAddr != "" {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		opts.Metrics = reg
	}
	var promReg prometheus.Registerer
	if reg != nil {
		promReg = gateway.ReplicaRegisterer(reg, f.shared)
	}
	stopMetrics, err := startMetrics(ctx, promReg, os.Getenv, slog.Default())
	if err != nil {
		return err
	}
	defer stopMetrics()
	statePath := cfg.State.DB
	if statePath == "" {
		if statePath, err = pins.DefaultPath(); err != nil {
			slog.Warn("mcpgate: no place for the state database; tool pins are kept in memory until the gateway stops (set state.db)", "error", err)
		}
	}
	ps, err := pins.Open(statePath)
	if err != nil {
		return fmt.Errorf("opening the state database %s: %w (set state.db in the configuration, or MCPGATE_STATE_DB)", postgres.Redact(statePath), err)
	}
	defer ps.Close()
	opts.Pins, opts.StateDB = ps, statePath
	slog.Info("mcpgate: tool-definition pins", "state", cmpOr(ps.Path(), "memory"))
	if tf, err := oauthTokenFile(); err == nil {
		opts.TokenStore = oauthclient.NewFileStore(tf) // what mcpgate login keeps
	}
	if tp := tracerProvider(); tp != nil {
		opts.TracerProvider = tp
	}
	if mp := meterProvider(); mp != nil {
		opts.MeterProvider = mp
	}
	opts.TraceArguments = f.traceArguments
	g, err := gateway.New(cfg, opts)
	if err != nil {
		return err
	}
	serverTracing(g.Server(), f.stdio, f.traceArguments)
	if reg != nil {
		ln, err := net.Listen("tcp", f.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		ops := &http.Server{Handler: g.OpsHandler(reg, &gateway.OpsOptions{AdminToken: f.adminToken}), ReadHeaderTimeout: 10 * time.Second}
		go ops.Serve(ln)
		defer ops.Close()
		slog.Info("mcpgate metrics and health", "url", "http://"+ln.Addr().String()+"/metrics")
	}
	gctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		g.Close()
	}()
	g.Start(gctx)
	// SIGHUP is caught from here on, before the "listening" line: a
	// reload signalled as soon as the gateway says it is up must not kill it.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go watchConfig(gctx, f.config, g, hup)

	s := g.Server()
	if f.stdio {
		slog.Info("mcpgate gateway serving on stdio", "version", buildVersion(), "config", f.config, "servers", len(cfg.Servers), "tenant", f.tenant)
		if f.tenant != "" {
			// The one local user acts for the tenant; a reload that
			// removes the tenant leaves it seeing nothing.
			ctx = gateway.WithTenant(ctx, f.tenant)
		}
		return s.ServeStdio(ctx, &mcp.ServeOptions{MaxMessageSize: f.maxMessageSize, ShutdownTimeout: f.shutdownTimeout})
	}
	if cfg.Listen != "" && !f.addrSet {
		f.addr = cfg.Listen
	}
	return serveHTTP(ctx, s, f, dbPath, &gatewayHTTP{wrap: g.TenantMiddleware, principal: gateway.PrincipalWithTenant, g: g, config: f.config, servers: len(cfg.Servers)})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// loadConfig reads the file and reports every problem with its place.
func loadConfig(path string) (*config.Config, error) {
	cfg, err := config.Load(path, os.LookupEnv)
	if errs := config.ErrorList(err); errs != nil {
		for _, d := range errs {
			fmt.Fprintln(os.Stderr, d)
		}
		// The first error itself, so that a log line (a rejected reload)
		// says what is wrong, not only where to look.
		if len(errs) == 1 {
			return nil, fmt.Errorf("%s has an error: %v", path, errs[0])
		}
		return nil, fmt.Errorf("%s has %d errors, the first: %v; `mcpgate check-config %s` lists them all", path, len(errs), errs[0], path)
	}
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		slog.Warn("mcpgate: configuration", "warning", w.Error())
	}
	return cfg, nil
}

// watchConfig reloads the configuration when the file's content changes
// (checked every second: editors replace files in ways a watch on the
// inode misses) or on SIGHUP. A file with errors is reported and the
// running configuration kept.
func watchConfig(ctx context.Context, path string, g *gateway.Gateway, hup chan os.Signal) {
	defer signal.Stop(hup)
	sum := fileSum(path)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			slog.Info("mcpgate: SIGHUP; reloading the configuration", "config", path)
		case <-tick.C:
			s := fileSum(path)
			if bytes.Equal(s, sum) || s == nil {
				continue
			}
			slog.Info("mcpgate: the configuration changed; reloading", "config", path)
		}
		sum = fileSum(path)
		cfg, err := loadConfig(path)
		if err != nil {
			slog.Error("mcpgate: the new configuration has errors; keeping the running one", "error", err)
			continue
		}
		g.Reload(cfg)
	}
}

func fileSum(path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := sha256.Sum256(b)
	return s[:]
}

func tenantNames(cfg *config.Config) string {
	if len(cfg.Tenants) == 0 {
		return "none"
	}
	names := make([]string, 0, len(cfg.Tenants))
	for n := range cfg.Tenants {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
