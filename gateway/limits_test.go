package gateway

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// A flood of calls from one caller: the excess gets -32001 with the
// delay in data (and Retry-After over HTTP), nothing else fails, and
// another caller is not held back.
func TestGatewayRateLimitFlood(t *testing.T) {
	var logs logBuffer
	up := httpServer(t, "alpha")
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": up}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), Limits: Limits{Calls: Limit{Rate: 2, Burst: 5}}})
	waitState(t, g, StateReady)
	h := mcphttp.NewHandler(g.Server(), &mcphttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close) // after the clients' cleanups, which close their streams
	connect := func(user string) *mcp.ClientSession { return connectUser(t, srv, user) }
	alice, bob := connect("alice"), connect("bob")

	var mu sync.Mutex
	ok, limited := 0, 0
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			_, err := alice.CallTool(context.Background(), "alpha_echo", map[string]string{"text": "x"})
			mu.Lock()
			defer mu.Unlock()
			var e *jsonrpc.Error
			switch {
			case err == nil:
				ok++
			case errors.As(err, &e) && e.Code == CodeRateLimited && strings.Contains(string(e.Data), "retryAfterMs"):
				limited++
			default:
				t.Errorf("a call failed otherwise: %v", err)
			}
		})
	}
	wg.Wait()
	if ok < 5 || limited == 0 || ok+limited != 30 {
		t.Errorf("%d passed, %d limited", ok, limited)
	}
	if got := callText(t, bob, "alpha_echo", map[string]string{"text": "bob"}); got != "alpha: bob" {
		t.Errorf("bob: %q", got)
	}
	// Over HTTP the refusal also says when, in Retry-After.
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	var sawRetry bool
	for range 10 {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "alpha_echo", "X-User": "carol"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Retry-After") != "" {
			sawRetry = true
			break
		}
	}
	if !sawRetry {
		t.Error("no Retry-After on a rate-limited HTTP call")
	}
}

// Every request is logged once with its outcome, and a tool call's
// arguments as JSON (issue 20: not Go's map syntax), secrets redacted.
func TestGatewayRequestLog(t *testing.T) {
	var logs logBuffer
	_, cs := startGateway(t, &logs, nil, httpServer(t, "alpha"))
	cs.CallTool(context.Background(), "alpha_echo", map[string]any{"text": "hello", "apiToken": "s3cr3t-value", "long": strings.Repeat("x", 500)})
	out := logs.String()
	for _, want := range []string{`msg="gateway: request" method=tools/call`, "tool=alpha_echo", "upstream=alpha", "outcome=tool_error", `\"apiToken\":\"[redacted]\"`, "(500 bytes)", `arguments="{\"apiToken\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(out, "s3cr3t-value") {
		t.Error("a secret argument was logged")
	}
}

// The ops listener: Prometheus series for requests and upstreams,
// /healthz, and /readyz that turns 503 when a required upstream is down
// (an optional one that is down leaves the gateway ready), and the admin
// status of every upstream.
func TestGatewayOpsHandler(t *testing.T) {
	var logs logBuffer
	reg := prometheus.NewRegistry()
	bad := &configServer{Name: "broken", Command: "/nonexistent/server", ServerOptions: config.ServerOptions{Required: true}}
	optional := &configServer{Name: "optional", Command: "/nonexistent/other"}
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": httpServer(t, "alpha"), "broken": bad, "optional": optional}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), Metrics: reg})
	cs := connectTo(t, g.Server(), nil)
	waitUntil(t, func() bool { return len(toolNames(t, cs)) > 0 }, "alpha's tools")
	callText(t, cs, "alpha_echo", map[string]string{"text": "x"})
	cs.CallTool(context.Background(), "no_such_tool", nil)
	const admin = "ops-test-admin-token"
	ops := httptest.NewServer(g.OpsHandler(reg, &OpsOptions{AdminToken: admin}))
	defer ops.Close()
	getAs := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, ops.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	get := func(path string) (int, string) { return getAs(path, "") }
	_, m := get("/metrics")
	for _, want := range []string{
		`mcpgate_requests_total{method="tools/call",outcome="ok",tool="alpha_echo",upstream="alpha"} 1`,
		`mcpgate_requests_total{method="tools/call",outcome="error",tool="unknown",upstream=""} 1`,
		`mcpgate_upstream_state{state="down",upstream="broken"} 1`,
		`mcpgate_upstream_state{state="ready",upstream="alpha"} 1`,
		`mcpgate_sessions 1`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("healthz %d", code)
	}
	// Anyone may ask whether the gateway is ready; only the admin learns
	// which upstream is not, and why.
	for _, tt := range []struct {
		path, token string
		code        int
		details     bool
	}{
		{"/readyz", "", 503, false},
		{"/readyz", admin, 503, false},
		{"/readyz?verbose=1", "", 401, false},
		{"/readyz?verbose=1", admin + "x", 401, false},
		{"/readyz?verbose=1", admin, 503, true},
	} {
		code, body := getAs(tt.path, tt.token)
		if code != tt.code || strings.Contains(body, `"broken"`) != tt.details || strings.Contains(body, "nonexistent") != tt.details {
			t.Errorf("%s (token %q): %d %s; want %d, details %v", tt.path, tt.token, code, body, tt.code, tt.details)
		}
	}
	// Only the required upstream decides: without it, ready.
	status := g.Status()
	if g.ready(status) {
		t.Error("ready with a required upstream down")
	}
	for i := range status {
		status[i].Required = false
	}
	if !g.ready(status) {
		t.Errorf("not ready with only optional upstreams down: %+v", status)
	}
	code, body := getAs("/admin/status", admin)
	var st struct {
		Ready     bool             `json:"ready"`
		Upstreams []UpstreamStatus `json:"upstreams"`
	}
	if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil || len(st.Upstreams) != 3 {
		t.Fatalf("/admin/status: %d %s", code, body)
	}
	for _, u := range st.Upstreams {
		if u.Name == "alpha" && (u.State != StateReady || u.Calls < 1 || u.P50Ms <= 0 || u.Since.IsZero()) {
			t.Errorf("alpha's status: %+v", u)
		}
		if u.Name == "broken" && (!u.Required || !strings.Contains(u.Error, "does not exist")) {
			t.Errorf("broken's status: %+v", u)
		}
	}
	if code, _ := getAs("/admin/status", ""); code != 401 {
		t.Errorf("/admin/status without the token: %d", code)
	}
}

// Every tool call lands in the audit log, sanitized; old records go.
func TestGatewayAuditLog(t *testing.T) {
	var logs logBuffer
	a, err := OpenAudit(t.TempDir()+"/audit.db", time.Hour, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": httpServer(t, "alpha")}}
	g, err := New(cfg, &Options{Logger: logs.logger(), Audit: a})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.Start(ctx)
	cs := connectTo(t, g.Server(), nil)
	waitUntil(t, func() bool { return len(toolNames(t, cs)) > 0 }, "alpha's tools")
	// The upstream refuses the extra argument: a tool error, audited too.
	cs.CallTool(context.Background(), "alpha_echo", map[string]string{"text": "audited", "password": "hunter2"})
	cs.CallTool(context.Background(), "alpha_nope", nil)
	cancel()
	g.Close()
	a.Record(AuditRecord{Time: time.Now().Add(-2 * time.Hour), Tool: "old", Outcome: "ok"})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a, err = OpenAudit(a.path, time.Hour, logs.logger()) // reopening purges what is past the retention
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	recs, err := a.Query(context.Background(), 24*time.Hour, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	if r := recs[1]; r.Tool != "alpha_echo" || r.Upstream != "alpha" || r.Outcome != "tool_error" || !strings.Contains(r.Arguments, "audited") || strings.Contains(r.Arguments, "hunter2") {
		t.Errorf("record %+v", r)
	}
	if r := recs[0]; r.Tool != "alpha_nope" || r.Outcome != "error" || r.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("record %+v", r)
	}
}

// Every request that reaches an upstream counts against the caller's
// limit, not only tools/call: reads, prompts, completions,
// subscriptions and calls through the meta-tools draw from one bucket.
func TestGatewayLimitsCountEveryForwardedMethod(t *testing.T) {
	var logs logBuffer
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": httpServer(t, "alpha")}, ToolSearch: config.ToolSearch{Listing: config.ListingSearch}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), Limits: Limits{Calls: Limit{Rate: 0.001, Burst: 3}}})
	waitState(t, g, StateReady)
	h := mcphttp.NewHandler(g.Server(), &mcphttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ctx := context.Background()
	for name, do := range map[string]func(cs *mcp.ClientSession) error{
		"resources/read": func(cs *mcp.ClientSession) error { _, err := cs.ReadResource(ctx, "alpha+mem://a"); return err },
		"prompts/get": func(cs *mcp.ClientSession) error {
			_, err := cs.GetPrompt(ctx, "alpha_greet", map[string]string{"who": "x"})
			return err
		},
		"completion/complete": func(cs *mcp.ClientSession) error {
			_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha_greet"}, Argument: mcp.CompleteArgument{Name: "who", Value: "x"}})
			return err
		},
		"resources/subscribe": func(cs *mcp.ClientSession) error { return cs.Subscribe(ctx, "alpha+mem://a") },
		"call_tool": func(cs *mcp.ClientSession) error {
			_, err := cs.CallTool(ctx, MetaCallTool, map[string]any{"name": "alpha_echo", "arguments": map[string]string{"text": "x"}})
			return err
		},
		"tools/call": func(cs *mcp.ClientSession) error {
			_, err := cs.CallTool(ctx, "alpha_echo", map[string]string{"text": "x"})
			return err
		},
	} {
		cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}).Connect(ctx, &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", Header: http.Header{"X-User": {name}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		for i := range 3 {
			if err := do(cs); err != nil {
				t.Fatalf("%s, request %d of the burst: %v", name, i+1, err)
			}
		}
		if err := do(cs); rpcCode(err) != CodeRateLimited {
			t.Errorf("%s past the caller's burst: %v, want %d", name, err, CodeRateLimited)
		}
	}
}

// No secret shape of internal/redact's catalogue reaches any sink: each
// is sent as a tool call's arguments to an upstream that writes them to
// its stderr and fails with them in its error; the gateway's log (its
// request lines and the upstream's stderr), every column of the audit
// log and the error the client gets must hide each secret.
func TestNoSecretReachesAnySink(t *testing.T) {
	raw, err := os.ReadFile("../internal/redact/testdata/secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	var shapes []struct {
		Name   string `json:"name"`
		Input  any    `json:"input"`
		Secret string `json:"secret"`
	}
	if err := json.Unmarshal(raw, &shapes); err != nil {
		t.Fatal(err)
	}
	if len(shapes) < 40 {
		t.Fatalf("%d secret shapes, want at least 40", len(shapes))
	}
	var logs logBuffer
	auditPath := t.TempDir() + "/audit.db"
	audit, err := OpenAudit(auditPath, 0, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": stdioServer("alpha")}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), Audit: audit})
	waitState(t, g, StateReady, StateIdle)
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	var answers strings.Builder
	for _, sh := range shapes {
		args, ok := sh.Input.(map[string]any)
		if !ok {
			args = map[string]any{"command": sh.Input}
		}
		_, err := cs.CallTool(context.Background(), "alpha_leak", args)
		if err == nil {
			t.Fatalf("%s: the leaking tool did not fail", sh.Name)
		}
		var e *jsonrpc.Error
		if errors.As(err, &e) {
			fmt.Fprintf(&answers, "%s %s\n", e.Message, e.Data)
		}
		answers.WriteString(err.Error() + "\n")
		// A resource URI with the secret in it names it in the log and
		// the audit log too.
		if s, ok := sh.Input.(string); ok {
			cs.ReadResource(context.Background(), "alpha+"+s)
		}
	}
	waitUntil(t, func() bool { return strings.Count(logs.String(), "leak got") >= len(shapes) }, "the upstream's stderr")
	audit.Close() // flushes the queue
	db, err := sql.Open("sqlite", auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows strings.Builder
	r, err := db.Query(`SELECT principal, tenant, method, tool, upstream, outcome, arguments, detail FROM tool_calls`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for r.Next() {
		var cols [8]string
		if err := r.Scan(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5], &cols[6], &cols[7]); err != nil {
			t.Fatal(err)
		}
		rows.WriteString(strings.Join(cols[:], " ") + "\n")
		n++
	}
	r.Close()
	if n < len(shapes) {
		t.Fatalf("%d audit rows for %d calls", n, len(shapes))
	}
	for _, sh := range shapes {
		for sink, text := range map[string]string{"the log": logs.String(), "the audit log": rows.String(), "the error": answers.String()} {
			if strings.Contains(text, sh.Secret) {
				i := strings.Index(text, sh.Secret)
				t.Errorf("%s: the secret reached %s: …%s…", sh.Name, sink, text[max(0, i-80):min(len(text), i+len(sh.Secret)+20)])
			}
		}
	}
}
