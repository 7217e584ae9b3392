package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// Options configure a Gateway. The zero value is a good default.
type Options struct {
	// Logger receives the gateway's diagnostics and the upstreams'
	// stderr, with secrets redacted (by name and by shape) on the way.
	// Nil means slog.Default().
	Logger *slog.Logger
	// Version is the gateway's version, told to upstreams and clients.
	Version string
	// Server configures the downstream server (instructions, page size,
	// tasks...). The gateway sets the features, logging and completion.
	Server mcp.ServerOptions
	// Limits bound each caller's tool calls (rate and concurrency); zero
	// means the configuration's limits section.
	Limits Limits
	// Metrics, when set, receives the gateway's Prometheus series (see
	// OpsHandler).
	Metrics prometheus.Registerer
	// TokenStore keeps the OAuth tokens of upstreams with the
	// authorization_code grant, obtained beforehand by a person (mcpgate
	// login) and refreshed by the gateway. Nil means no such upstream can
	// be reached.
	TokenStore oauthclient.TokenStore
	// Audit, when set, receives a record of every tool call.
	Audit *Audit
	// Builtins are servers run in this process and published like any
	// upstream (prefixed with their name): the gateway's own tools.
	Builtins map[string]*mcp.Server
	// Setup, when set, registers the gateway's own tools (the built-ins)
	// on the downstream server before any upstream is published.
	Setup func(*mcp.Server) error
	// InputWindow is how long a tool call whose upstream asked a
	// 2026-07-28 client for input waits for the client to call again
	// with the answer before it is cancelled upstream. Zero means
	// DefaultInputWindow, or Server.StateTTL where that is shorter.
	InputWindow time.Duration
	// StartWindow bounds how long the first lists (tools, prompts,
	// resources, tool search) wait, at start, for every upstream to be
	// listed or to fail. Zero means DefaultStartWindow.
	StartWindow time.Duration
	// Embedder, when set, adds dense retrieval to tool search, fused with
	// BM25 (see toolsearch.OpenAIEmbedder).
	Embedder toolsearch.Embedder
	// Pins keeps the tool-definition pins (see pinning.go). Nil opens
	// the configuration's state.db, or keeps the pins in memory (for the
	// life of the gateway) when that is empty. The caller closes a
	// store it passes; the gateway closes one it opened.
	Pins *pins.Store
	// StateDB is the state database that the caller opened Pins from,
	// as a path or a postgres:// URL with its password: what tool search
	// learns from use is kept there too (clickstore.go). Empty means the
	// configuration's state.db, else Pins's own path when it shows in
	// full (a Postgres URL with a password does not).
	StateDB string
	// Cluster, when set, is the state this replica shares with the
	// gateway's other replicas: the rate limits (calls, tools and
	// sampling) hold across all of them. Nil means this process holds
	// everything alone.
	Cluster *cluster.Cluster
	// TracerProvider, when set, traces each request's hops to the
	// upstreams (see tracing.go): a client span per upstream request,
	// with the trace context carried to the upstream. Nil means no
	// tracing, at no cost. The gateway's own server span is the
	// caller's to add (otelmcp.ServerMiddleware on Server()).
	TracerProvider trace.TracerProvider
	// MeterProvider, when set, records the hops' durations by the MCP
	// semantic conventions (mcp.client.operation.duration and
	// mcp.client.session.duration, with the upstream's name). Nil means
	// none are recorded.
	MeterProvider metric.MeterProvider
	// TraceArguments records each hop's tool-call arguments on its span
	// (gen_ai.tool.call.arguments), sanitized as the request log and the
	// audit log sanitize them ([SanitizeArguments]). Off by default:
	// arguments may hold personal data that the redaction rules do not
	// recognise.
	TraceArguments bool
}

// Gateway is the aggregate of the configured upstreams.
type Gateway struct {
	cfg     *config.Config
	logger  *slog.Logger
	version string
	sep     string
	server  *mcp.Server

	tokenStore oauthclient.TokenStore
	tracing    *tracing // nil when tracing is off
	limiter    *limiter
	sampling   *limiter // sampling relays, per server and per caller
	metrics    *metrics
	audit      *Audit
	relays     *relays
	search     *toolsearch.Index
	validators validators // call_tool's schemas
	// sessionTenants: the tenant of each downstream session.
	sessionTenants sessionTenants
	coCalls        coCallTracker
	clicks         clickTracker
	prune          chan struct{} // asks the pruner of upstream subscriptions to run
	// maxSubscriptions bounds one session's resource subscriptions.
	maxSubscriptions int
	// discovered is closed when the first round of upstream discovery
	// ends (endDiscovery), within startWindow.
	discovered  chan struct{}
	startWindow time.Duration
	// starts bounds the command servers starting at once.
	starts  chan struct{}
	started atomic.Bool
	// fileLimits: the limits come from the file, so a reload changes them.
	fileLimits bool
	pins       *pins.Store // the tool-definition pins
	ownPins    bool        // opened by New, closed by Close

	// instances: the running session instances (instances.go).
	instances sessionInstances

	mu          sync.Mutex
	upstreams   map[string]*upstream
	tenantUps   map[string]*upstream // "tenant/server" → that tenant's own instance
	toolOwner   map[string]*upstream // published tool name → its upstream
	downTools   map[string]*upstream // tools withdrawn while their upstream is down or restarting
	promptOwner map[string]*upstream

	ctx    context.Context // the upstreams' parent, from Start
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds a gateway for cfg; Start connects the upstreams.
func New(cfg *config.Config, opts *Options) (*Gateway, error) {
	if opts == nil {
		opts = &Options{}
	}
	g := &Gateway{
		cfg: cfg, logger: opts.Logger, version: opts.Version, sep: cfg.Separator,
		upstreams: map[string]*upstream{}, tenantUps: map[string]*upstream{}, toolOwner: map[string]*upstream{}, promptOwner: map[string]*upstream{}, downTools: map[string]*upstream{},
		prune: make(chan struct{}, 1), discovered: make(chan struct{}),
		starts:      make(chan struct{}, cmp.Or(cfg.MaxConcurrentStarts, max(runtime.NumCPU(), 2))),
		startWindow: cmp.Or(opts.StartWindow, cfg.StartWindow.D(), DefaultStartWindow),
	}
	if g.logger == nil {
		g.logger = slog.Default()
	}
	if _, ok := g.logger.Handler().(*redact.Handler); !ok {
		// Whatever an upstream, a caller or an error says, secrets
		// never reach the log (see internal/redact).
		g.logger = slog.New(redact.NewHandler(g.logger.Handler()))
	}
	if g.version == "" {
		g.version = "dev"
	}
	if g.sep == "" {
		g.sep = "_"
	}
	so := opts.Server
	so.Logger = g.logger
	so.HasTools, so.HasPrompts, so.HasResources, so.Logging = true, true, true, true
	so.CompletionHandler = g.complete
	so.ResourceFallback = g.readResource
	so.Filter = g.visible
	so.SessionClosedHandler = g.sessionClosed
	if so.MaxSubscriptions == 0 {
		so.MaxSubscriptions = cmp.Or(cfg.Limits.SubscriptionsPerSession, DefaultSubscriptionsPerSession)
	}
	g.maxSubscriptions = so.MaxSubscriptions
	so.Experimental = map[string]any{ExtensionToolSearch: map[string]any{"methods": []string{MethodDiscover, MethodGetSchema, MethodGetFullSchema}}}
	g.search = toolsearch.New(&toolsearch.Options{Embedder: opts.Embedder})
	if len(cfg.Tenants) > 0 && so.CacheScope == "" {
		so.CacheScope = "private" // lists depend on the caller's tenant
	}
	limits := opts.Limits
	if reflect.DeepEqual(limits, Limits{}) {
		limits, g.fileLimits = LimitsFromConfig(cfg.Limits), true
	}
	g.limiter = newLimiter(limits)
	g.sampling = newLimiter(Limits{Calls: LimitsFromConfig(cfg.Limits).Sampling})
	if g.fileLimits {
		g.limiter.setTenants(tenantLimits(cfg))
	}
	if opts.Cluster != nil {
		shared := opts.Cluster.Limiter()
		g.limiter.share(shared, "calls:")
		g.sampling.share(shared, "sampling:")
	}
	g.audit = opts.Audit
	if g.audit != nil {
		g.learnFromAudit(context.Background())
	}
	g.relays = newRelays(cmp.Or(opts.InputWindow, time.Duration(cfg.Limits.InputWindow)), opts.Server.StateTTL, g.logger)
	g.tokenStore = opts.TokenStore
	g.tracing = newTracing(opts.TracerProvider, opts.MeterProvider, opts.TraceArguments)
	so.Middleware = append([]mcp.Middleware{g.policy, g.listMiddleware, g.subscribeMiddleware}, so.Middleware...)
	g.server = mcp.NewServer(&mcp.Implementation{Name: "mcpgate", Version: g.version}, &so)
	if err := g.setupSearch(); err != nil {
		return nil, err
	}
	if opts.Metrics != nil {
		g.metrics = newMetrics(g, withReplica(opts.Metrics, opts.Cluster))
	}
	if opts.Setup != nil {
		if err := opts.Setup(g.server); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(cfg.Servers))
	for name, sc := range cfg.Servers {
		if sc.Disabled {
			continue
		}
		if sc.Name == "" {
			sc.Name = name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		g.upstreams[name] = newUpstream(g, cfg.Servers[name])
	}
	for key, sc := range tenantConfigs(cfg) {
		g.tenantUps[key] = newTenantUpstream(g, key, sc)
	}
	for name, srv := range opts.Builtins {
		if _, dup := g.upstreams[name]; dup {
			return nil, fmt.Errorf("gateway: a configured server is named %q, like a built-in; rename it", name)
		}
		u := newUpstream(g, &config.Server{Name: name, ServerOptions: config.ServerOptions{Start: "eager", HealthInterval: -1}})
		u.local = srv
		g.upstreams[name] = u
	}
	g.pins = opts.Pins
	if g.pins == nil {
		var err error
		if g.pins, err = pins.Open(cfg.State.DB); err != nil {
			return nil, fmt.Errorf("gateway: the state database: %w", err)
		}
		g.ownPins = true
	}
	g.clicks.store = g.newClickStore(opts.Cluster, opts.StateDB)
	g.clicks.shared = newSharedSearches(opts.Cluster)
	return g, nil
}

// Retry starts again an upstream that failed (StateFailed) or refused
// the gateway's credentials (StateAuthFailed), or asks one that is down
// to try again now. It reports false for a name the gateway does not
// have.
func (g *Gateway) Retry(name string) bool {
	g.mu.Lock()
	u := g.upstreams[name]
	g.mu.Unlock()
	if u == nil {
		return false
	}
	select {
	case u.retry <- struct{}{}:
	default: // asked already
	}
	return true
}

// Server is the downstream server: serve it over stdio or HTTP.
func (g *Gateway) Server() *mcp.Server { return g.server }

// Start connects every upstream in the background; each one's tools
// appear as it becomes ready. Start returns at once.
func (g *Gateway) Start(ctx context.Context) {
	ctx, g.cancel = context.WithCancel(ctx)
	g.wg.Add(2)
	go func() {
		defer g.wg.Done()
		g.pruneLoop(ctx)
	}()
	go func() {
		defer g.wg.Done()
		g.watchPins(ctx)
	}()
	if g.clicks.shared != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.runSharedClicks(ctx)
		}()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctx = ctx
	var first sync.WaitGroup
	for _, u := range g.upstreams {
		first.Add(1)
		u.firstRound = sync.OnceFunc(first.Done)
		g.startUpstream(ctx, u)
	}
	for _, u := range g.tenantUps {
		g.startUpstream(ctx, u)
	}
	g.started.Store(true)
	go g.endDiscovery(ctx, &first)
}

// DefaultStartWindow bounds how long the first lists wait for the first
// round of upstream discovery.
const DefaultStartWindow = 5 * time.Second

// endDiscovery ends the first round of upstream discovery once every
// upstream has been listed or has failed, or the start window passes:
// the first lists of the clients wait for it (awaitDiscovery), so that a
// client that lists once, at once, sees every upstream's tools. What an
// upstream publishes later comes with list_changed, as always.
func (g *Gateway) endDiscovery(ctx context.Context, first *sync.WaitGroup) {
	select {
	case <-roundListed(first):
	case <-time.After(g.startWindow):
		var slow []string
		for _, st := range g.Status() {
			if st.State == StateStarting {
				slow = append(slow, st.Name)
			}
		}
		g.logger.Warn("gateway: not every upstream was listed within the start window; the first lists go out without them, and their tools follow with list_changed",
			"window", g.startWindow, "starting", slow)
	case <-ctx.Done():
	}
	close(g.discovered)
}

// roundListed is closed once every upstream of a round has been listed or has
// failed: each calls its firstRound, which is the group's Done.
func roundListed(round *sync.WaitGroup) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		round.Wait()
		close(done)
	}()
	return done
}

// discovering reports whether the first round of upstream discovery is
// going on.
func (g *Gateway) discovering() bool {
	select {
	case <-g.discovered:
		return false
	default:
		return g.started.Load()
	}
}

// awaitDiscovery waits (within ctx) for the first round of upstream
// discovery, if it is still going on.
func (g *Gateway) awaitDiscovery(ctx context.Context) {
	if !g.started.Load() {
		return // not started: nothing is being discovered
	}
	select {
	case <-g.discovered:
	case <-ctx.Done():
	}
}

func (g *Gateway) startUpstream(ctx context.Context, u *upstream) {
	uctx, cancel := context.WithCancel(ctx)
	u.cancel = cancel
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		u.run(uctx)
		u.dropInstanceDir()
	}()
}

// Close stops every upstream (their processes end) and waits.
func (g *Gateway) Close() error {
	g.relays.closeAll() // cancelled on the servers while they are still connected
	if g.cancel != nil {
		g.cancel()
	}
	g.wg.Wait()
	g.clicks.store.close()
	if g.ownPins {
		return g.pins.Close()
	}
	return nil
}

// UpstreamStatus is one upstream's state, for health endpoints, mcpgate
// status and tests.
type UpstreamStatus struct {
	Name  string `json:"name"`
	State State  `json:"state"`
	// Since is when the upstream entered State.
	Since time.Time `json:"since"`
	Tools int       `json:"tools"`
	Error string    `json:"error,omitempty"`
	// Required upstreams decide the gateway's readiness (/readyz).
	Required bool `json:"required,omitempty"`
	// Restarts counts the sessions after the first (reconnections).
	Restarts int `json:"restarts"`
	// Bare: the upstream is a bare tool server, without the MCP
	// lifecycle (its protocol setting, or found at its latest start).
	Bare bool `json:"bare,omitempty"`
	// Calls and Errors count the requests sent to it and those that
	// failed; P50Ms and P99Ms are the latency of the latest 512.
	Calls  int64   `json:"calls"`
	Errors int64   `json:"errors"`
	P50Ms  float64 `json:"p50Ms"`
	P99Ms  float64 `json:"p99Ms"`
}

// Status reports every upstream, by name.
func (g *Gateway) Status() []UpstreamStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]UpstreamStatus, 0, len(g.upstreams)+len(g.tenantUps))
	all := slices.Collect(maps.Values(g.upstreams))
	all = append(all, slices.Collect(maps.Values(g.tenantUps))...)
	for _, u := range all {
		st := UpstreamStatus{Name: u.cfg.Name}
		if u.tenantKey != "" {
			st.Name = u.cfg.Name + "@" + u.tenantKey[:strings.IndexByte(u.tenantKey, '/')]
		}
		if u.catalog != nil {
			st.Tools = len(u.catalog.tools)
		}
		u.mu.Lock()
		st.State, st.Since, st.Restarts = u.state, u.since, u.restarts
		if u.lastErr != nil {
			st.Error = redact.String(u.lastErr.Error())
		}
		u.mu.Unlock()
		st.Required = u.cfg.Required
		st.Bare = u.bare.Load()
		var p50, p99 time.Duration
		st.Calls, st.Errors, p50, p99 = u.stats.snapshot()
		st.P50Ms, st.P99Ms = ms(p50), ms(p99)
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b UpstreamStatus) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (g *Gateway) owner(tool string) *upstream {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.toolOwner[tool]
}

func (g *Gateway) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	rt := routeFor(ctx, mcp.KindTool, req.Params.Name)
	if rt == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown tool %q; call tools/list to see the available tools", req.Params.Name)
	}
	if err := g.pinBlocked(rt); err != nil {
		return nil, err
	}
	tasks := rt.tasks
	p := &mcp.CallToolParams{Name: rt.orig, Arguments: req.Params.Arguments}
	run := func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		return cs.CallToolParams(ctx, p)
	}
	// A tool the upstream runs only as a task, or a task of the
	// gateway's whose tool the upstream can run as one, runs as the
	// upstream's task: the gateway waits for it, untimed (the task ends
	// when its caller cancels it or its time to live passes). A
	// 2026-07-28 upstream with tasks decides for itself, so a plain
	// call goes plainly and again as a task if the upstream wants one
	// (-32021 naming the extension), timed as a call.
	_, inTask := mcp.TaskIDFrom(ctx)
	switch {
	case tasks == mcp.TaskSupportRequired || tasks != "" && inTask:
		ctx = context.WithValue(ctx, untimedKey{}, true)
		run = func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
			return cs.CallToolAsTask(ctx, p, nil)
		}
	case tasks == taskServerDecides:
		run = func(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
			res, err := cs.CallToolParams(ctx, p)
			var ce *mcp.CallError
			if errors.As(err, &ce) && ce.Err.Code == mcp.CodeMissingRequiredClientCapability && bytes.Contains(ce.Err.Data, []byte(mcp.ExtensionTasks)) {
				return cs.CallToolAsTask(ctx, p, nil)
			}
			return res, err
		}
	}
	res, err := viaUpstream(ctx, g, routedCall{rt, req.Request, req.Params.Arguments}, run)
	if err != nil {
		return nil, err
	}
	rewriteContent(rt.server, res.Content)
	res.Meta = ownMeta(res.Meta)
	return res, nil
}

// ownMeta drops from an upstream's result _meta what describes the
// upstream's end of the protocol, its serverInfo (2026-07-28), and what
// is in the gateway's namespace, which only the gateway writes. The
// client talks to the gateway, which names itself there where its
// client's revision has the key; passed on, the upstream's identity
// would also reach session-era clients, and the result would lose the
// encoder's fast path (a fifth of the gateway's own CPU per relayed
// call).
func ownMeta(m mcp.Meta) mcp.Meta {
	if _, ok := m[mcp.MetaServerInfo]; ok {
		delete(m, mcp.MetaServerInfo) // decoded for this call: the gateway's own
	}
	m = foreignMeta(m)
	if len(m) == 0 {
		return nil
	}
	return m
}

// rewriteContent publishes the URIs of resources a tool returned, so a
// client can read them through the gateway, and drops the gateway's
// _meta keys from each block.
func rewriteContent(server string, content []mcp.Content) {
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			c.Meta = foreignMeta(c.Meta)
		case *mcp.ImageContent:
			c.Meta = foreignMeta(c.Meta)
		case *mcp.AudioContent:
			c.Meta = foreignMeta(c.Meta)
		case *mcp.ResourceLink:
			c.URI = publishURI(server, c.URI)
			c.Meta = foreignMeta(c.Meta)
		case *mcp.EmbeddedResource:
			c.Meta = foreignMeta(c.Meta)
			if c.Resource != nil {
				c.Resource.URI = publishURI(server, c.Resource.URI)
				c.Resource.Meta = foreignMeta(c.Resource.Meta)
			}
		}
	}
}

func (g *Gateway) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	rt := routeFor(ctx, mcp.KindPrompt, req.Params.Name)
	if rt == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown prompt %q; call prompts/list to see the available prompts", req.Params.Name)
	}
	args, err := json.Marshal(req.Params.Arguments) // maps marshal sorted: one digest per argument set
	if err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %v", err)
	}
	res, err := viaUpstream(ctx, g, routedCall{rt, req.Request, args}, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.GetPromptResult, error) {
		return cs.GetPrompt(ctx, rt.orig, req.Params.Arguments)
	})
	if err != nil {
		return nil, err
	}
	for _, m := range res.Messages {
		if m != nil && m.Content != nil {
			rewriteContent(rt.server, []mcp.Content{m.Content})
		}
	}
	res.Meta = ownMeta(res.Meta)
	return res, nil
}

func (g *Gateway) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rt := routeFor(ctx, mcp.KindResource, req.Params.URI)
	if rt == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	res, err := viaUpstream(ctx, g, routedCall{rt, req.Request, nil}, func(ctx context.Context, cs *mcp.ClientSession) (*mcp.ReadResourceResult, error) {
		return cs.ReadResource(ctx, rt.orig)
	})
	if err != nil {
		return nil, err
	}
	for _, c := range res.Contents {
		if c != nil && c.URI != "" {
			c.URI = publishURI(rt.server, c.URI)
		}
		if c != nil {
			c.Meta = foreignMeta(c.Meta)
		}
	}
	res.Meta = ownMeta(res.Meta)
	return res, nil
}

// routedCall is a downstream tools/call, prompts/get or resources/read
// and the route that takes it upstream.
type routedCall struct {
	rt  *route
	req *mcp.Request
	// args are the call's arguments, encoded: with the route's target,
	// what a 2026-07-28 client's retry must repeat (nil when the target
	// says it all, as a resource's URI does).
	args []byte
}

// viaUpstream runs c upstream: through a relay for a 2026-07-28 client,
// so that what the upstream asks in the middle reaches the client as
// input_required; in the request itself for a session-era one, whose
// client is asked directly. Progress goes back either way.
func viaUpstream[T any](ctx context.Context, g *Gateway, c routedCall, run func(context.Context, *mcp.ClientSession) (*T, error)) (*T, error) {
	if c.req.ProtocolVersion() == mcp.Version20260728 {
		return relayPerRequest(ctx, g, c, run)
	}
	rt, r := c.rt, c.req
	var res *T
	err := rt.do(ctx, r, func(ctx context.Context, cs *mcp.ClientSession) error {
		ctx = mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
			r.NotifyProgress(p.Progress, p.Total, p.Message)
		})
		var err error
		res, err = run(ctx, cs)
		return err
	})
	return res, err
}

// complete routes completion/complete by the prompt or template it names.
func (g *Gateway) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: ref is required")
	}
	var rt *route
	switch ref.Type {
	case "ref/prompt":
		rt = routeFor(ctx, mcp.KindPrompt, ref.Name)
	case "ref/resource":
		rt = routeFor(ctx, mcp.KindResourceTemplate, ref.URI)
	}
	if rt == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s %q is not known to this gateway", ref.Type, ref.Name+ref.URI)
	}
	p := *req.Params
	r := *ref
	p.Ref = &r
	if ref.Type == "ref/prompt" {
		r.Name = rt.orig
	} else {
		r.URI = rt.orig
	}
	var res *mcp.CompleteResult
	err := rt.do(ctx, req.Request, func(ctx context.Context, cs *mcp.ClientSession) error {
		var err error
		res, err = cs.Complete(ctx, &p)
		if errors.Is(err, mcp.ErrNotSupported) {
			// An upstream without completions completes nothing.
			res, err = &mcp.CompleteResult{Completion: mcp.CompletionValues{Values: []string{}}}, nil
		}
		return err
	})
	if res != nil {
		res.Meta = ownMeta(res.Meta)
	}
	return res, err
}
