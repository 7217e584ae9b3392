package gateway

import (
	"encoding/json"
	"maps"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpgate/mcpgate/cluster"
)

// metrics are the gateway's Prometheus series. Tool and upstream labels
// take only names the gateway publishes ("unknown" otherwise), so a
// client cannot grow the series without bound.
type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	restarts    *prometheus.CounterVec
}

// restarted counts a reconnection of an upstream.
func (m *metrics) restarted(upstream string) {
	if m != nil {
		m.restarts.WithLabelValues(upstream).Inc()
	}
}

// withReplica labels every series registered through reg with the
// replica's id (replica="..."), when the gateway is one of several
// sharing a cluster: their series then stay apart where they are
// gathered together.
func withReplica(reg prometheus.Registerer, c *cluster.Cluster) prometheus.Registerer {
	if c == nil {
		return reg
	}
	return prometheus.WrapRegistererWith(prometheus.Labels{"replica": c.ReplicaID()}, reg)
}

// ReplicaRegisterer is reg as the gateway registers its own series on
// it: labelled with the replica's id when c is not nil. Series that
// other code puts on the same registry (the OpenTelemetry exporter's)
// then stay apart across replicas as the gateway's do.
func ReplicaRegisterer(reg prometheus.Registerer, c *cluster.Cluster) prometheus.Registerer {
	return withReplica(reg, c)
}

func newMetrics(g *Gateway, reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_requests_total", Help: "MCP requests served, by method, tool, upstream and outcome (ok, tool_error, error).",
		}, []string{"method", "tool", "upstream", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcpgate_request_duration_seconds", Help: "Time to answer MCP requests, by method and upstream.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "upstream"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_upstream_restarts_total", Help: "Sessions of an upstream after its first: reconnections after it failed, restarts after it died.",
		}, []string{"upstream"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpgate_rate_limited_total", Help: "Tool calls refused by a rate or concurrency limit, by tool.",
		}, []string{"tool"}),
	}
	up := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcpgate_upstreams_ready", Help: "Upstreams ready (or idle, for lazy ones)."}, func() float64 {
		n := 0
		for _, st := range g.Status() {
			if st.State == StateReady || st.State == StateIdle {
				n++
			}
		}
		return float64(n)
	})
	sessions := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "mcpgate_sessions", Help: "Client sessions open."}, func() float64 {
		return float64(len(g.server.Sessions()))
	})
	state := &stateCollector{g: g, desc: prometheus.NewDesc("mcpgate_upstream_state", "1 for each upstream's current state.", []string{"upstream", "state"}, nil)}
	pinned := &pinCollector{g: g, desc: prometheus.NewDesc("mcpgate_tool_pins",
		"Tools held back or let through unapproved by their definition pins: withheld (new or changed, waiting for approval), blocked (the pinned definition served, calls refused), unapproved (published under warn), suspicious (flagged by the scanner, whatever was published).",
		[]string{"state"}, nil)}
	reg.MustRegister(m.requests, m.duration, m.rateLimited, m.restarts, up, sessions, state, pinned)
	return m
}

// pinCollector reports the pins' decisions at scrape time.
type pinCollector struct {
	g    *Gateway
	desc *prometheus.Desc
}

func (c *pinCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *pinCollector) Collect(ch chan<- prometheus.Metric) {
	withheld, blocked, unapproved, flagged := c.g.pinCounts()
	for state, n := range map[string]int{"withheld": withheld, "blocked": blocked, "unapproved": unapproved, "suspicious": flagged} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), state)
	}
}

// stateCollector reports every upstream's state at scrape time.
type stateCollector struct {
	g    *Gateway
	desc *prometheus.Desc
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range c.g.Status() {
		for _, s := range []State{StateStarting, StateReady, StateDegraded, StateIdle, StateDown, StateFailed, StateAuthFailed} {
			v := 0.0
			if st.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, v, st.Name, string(s))
		}
	}
}

// knownMethods keep their name as a label; any other is "other".
var knownMethods = map[string]bool{}

func init() {
	for _, m := range []string{"initialize", "ping", "server/discover", "subscriptions/listen", "tools/list", "tools/call",
		"resources/list", "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
		"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"} {
		knownMethods[m] = true
	}
}

func (m *metrics) observe(method, tool, upstream, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	if !knownMethods[method] {
		method = "other"
	}
	m.requests.WithLabelValues(method, tool, upstream, outcome).Inc()
	m.duration.WithLabelValues(method, upstream).Observe(d.Seconds())
}

// OpsOptions configure the ops listener.
type OpsOptions struct {
	// AdminToken admits to the details (see OpsHandler) as a bearer
	// token. Empty: details are refused to everyone.
	AdminToken string
}

// OpsHandler serves, for a listener of their own, /metrics (Prometheus),
// /healthz (the process answers) and /readyz (200 once the first round
// of upstream discovery is over and every required upstream is ready or
// idle, 503 otherwise). /healthz and /readyz say only that, to
// anyone; /readyz?verbose=1 lists each upstream's state and error, which
// name servers, tenants and URLs, to callers with the admin token only
// (AdminAuth), as is the admin API of the tool-definition pins under
// /admin/pins (see pinsAdmin) and /admin/status, every upstream's state,
// since when, last error, restarts, calls, errors and latency (what
// mcpgate status shows). A nil opts is the zero OpsOptions.
func (g *Gateway) OpsHandler(reg *prometheus.Registry, opts *OpsOptions) http.Handler {
	if opts == nil {
		opts = &OpsOptions{}
	}
	mux := http.NewServeMux()
	// OpenMetrics, when the scraper asks for it, carries exemplars: the
	// trace ids on the OpenTelemetry duration histograms.
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	details := AdminAuth(opts.AdminToken)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := g.Status()
		writeReady(w, g.ready(status), map[string]any{"upstreams": status})
	}))
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("verbose") {
			details.ServeHTTP(w, r)
			return
		}
		writeReady(w, g.ready(g.Status()), nil)
	})
	mux.Handle("GET /admin/status", AdminAuth(opts.AdminToken)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := g.Status()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(map[string]any{"ready": g.ready(status), "version": g.version, "upstreams": status})
	})))
	mux.Handle("POST /admin/retry", AdminAuth(opts.AdminToken)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("server")
		w.Header().Set("Content-Type", "application/json")
		if !g.Retry(name) {
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": "no server named " + strconv.Quote(name)})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"retrying": name})
	})))
	// What tool search learnt from one tenant's calls (?tenant=T; absent,
	// the callers with no tenant) is forgotten.
	mux.Handle("POST /admin/learning/reset", AdminAuth(opts.AdminToken)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := r.URL.Query().Get("tenant")
		g.ResetLearning(tenant)
		adminJSON(w, map[string]any{"reset": tenant})
	})))
	admin := AdminAuth(opts.AdminToken)(g.pinsAdmin())
	mux.Handle("/admin/pins", admin)
	mux.Handle("/admin/pins/", admin)
	return mux
}

// ready says whether the gateway can serve: its first round of upstream
// discovery is over and its required upstreams are up. An optional
// upstream that is down leaves it ready (a load balancer would otherwise
// drain a gateway that serves everything else); its state is in
// mcpgate status.
func (g *Gateway) ready(status []UpstreamStatus) bool {
	select {
	case <-g.discovered:
	default:
		if g.started.Load() {
			return false
		}
	}
	for _, st := range status {
		if st.Required && st.State != StateReady && st.State != StateIdle {
			return false
		}
	}
	return true
}

// writeReady answers {"ready":...} with 200 or 503, and more fields.
func writeReady(w http.ResponseWriter, ok bool, more map[string]any) {
	body := map[string]any{"ready": ok}
	maps.Copy(body, more)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	json.NewEncoder(w).Encode(body)
}
