package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// blindWorld is a gateway with two servers: alpha, which every tenant
// sees, and beta (an HTTP upstream that records what reaches it), which
// only globex sees. alice (acme), dave (lookers, in search mode) and
// carol (no tenant) are blind to beta; ops acts for globex and, as a
// delegate, for acme.
type blindWorld struct {
	g    *Gateway
	beta *methodRecorder
	url  string
}

func newBlindWorld(t *testing.T) *blindWorld {
	t.Helper()
	var logs logBuffer
	beta := newMethodRecorder(t, "beta", "")
	cfg := &config.Config{
		Servers: map[string]*config.Server{"alpha": stdioServer("alpha"), "beta": {Name: "beta", URL: beta.srv.URL + "/mcp"}},
		Tenants: map[string]*config.Tenant{
			"acme":    {Principals: []string{"apikey:alice"}, Delegates: []string{"apikey:ops"}, Servers: []string{"alpha"}},
			"globex":  {Principals: []string{"apikey:bob", "apikey:ops"}},
			"lookers": {Principals: []string{"apikey:dave"}, Servers: []string{"alpha"}, ToolListing: config.ListingSearch},
		},
	}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady, StateIdle)
	srv := serveTenants(t, g)
	return &blindWorld{g: g, beta: beta, url: srv.URL + "/mcp"}
}

func (w *blindWorld) connect(t *testing.T, user, tenant, era string) *mcp.ClientSession {
	t.Helper()
	hdr := http.Header{"X-User": {user}}
	if tenant != "" {
		hdr.Set("X-Tenant-ID", tenant)
	}
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: era}).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: w.url, Header: hdr, DisableLegacyFallback: true})
	if err != nil {
		t.Fatalf("%s@%s: %v", user, tenant, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// forwarded counts the requests beta has received that the gateway
// forwards for its clients.
func (w *blindWorld) forwarded() int {
	n := 0
	for _, m := range []string{"tools/call", "prompts/get", "resources/read", "resources/subscribe", "completion/complete", "subscriptions/listen"} {
		n += w.beta.count(m)
	}
	return n
}

// answer renders what a request got, for comparing the answer about a
// hidden name with the answer about a name that does not exist.
func answer(res any, err error) string {
	var e *jsonrpc.Error
	switch {
	case errors.As(err, &e):
		return fmt.Sprintf("error %d: %s", e.Code, e.Message)
	case err != nil:
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return string(b)
}

// A blind case asks about one name (of beta's, or of zeta, a server that
// does not exist) and renders the answer.
type blindCase func(ctx context.Context, cs *mcp.ClientSession, server string) string

// blindCases walk, for each method of the gateway's server, what a
// caller might name through it. Methods that name nothing are checked
// by their lists leaving beta's items out (listed).
var blindCases = map[string]blindCase{
	"tools/call": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(cs.CallTool(ctx, s+"_echo", map[string]string{"text": "x"}))
	},
	"prompts/get": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(cs.GetPrompt(ctx, s+"_greet", map[string]string{"who": "x"}))
	},
	"resources/read": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(cs.ReadResource(ctx, s+"+mem://a"))
	},
	"resources/subscribe": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(nil, cs.Subscribe(ctx, s+"+mem://a"))
	},
	"resources/unsubscribe": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(nil, cs.Call(ctx, "resources/unsubscribe", map[string]string{"uri": s + "+mem://a"}, nil))
	},
	"completion/complete": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		a := answer(cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: s + "_greet"}, Argument: mcp.CompleteArgument{Name: "who", Value: "x"}}))
		b := answer(cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: s + "+mem://items/{id}"}, Argument: mcp.CompleteArgument{Name: "id", Value: "x"}}))
		return a + "\n" + b
	},
	"tools/getSchema": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		var out any
		return answer(out, cs.Call(ctx, MethodGetSchema, GetSchemaParams{Name: s + "_echo"}, &out))
	},
	"tools/getFullSchema": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		var out any
		return answer(out, cs.Call(ctx, MethodGetFullSchema, GetSchemaParams{Name: s + "_echo"}, &out))
	},
	// The meta-tools name tools inside a tools/call.
	"tools/call call_tool": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(cs.CallTool(ctx, MetaCallTool, map[string]any{"name": s + "_echo", "arguments": map[string]string{"text": "x"}}))
	},
	"tools/call describe_tool": func(ctx context.Context, cs *mcp.ClientSession, s string) string {
		return answer(cs.CallTool(ctx, MetaDescribeTool, map[string]any{"name": s + "_echo"}))
	},
}

// listed are the methods that name nothing: what a blind caller gets
// from them must not mention beta.
var listed = map[string]func(ctx context.Context, cs *mcp.ClientSession) string{
	"tools/list": func(ctx context.Context, cs *mcp.ClientSession) string {
		return answer(cs.ListTools(ctx, nil))
	},
	"prompts/list": func(ctx context.Context, cs *mcp.ClientSession) string {
		return answer(cs.ListPrompts(ctx, nil))
	},
	"resources/list": func(ctx context.Context, cs *mcp.ClientSession) string {
		return answer(cs.ListResources(ctx, nil))
	},
	"resources/templates/list": func(ctx context.Context, cs *mcp.ClientSession) string {
		return answer(cs.ListResourceTemplates(ctx, nil))
	},
	"tools/discover": func(ctx context.Context, cs *mcp.ClientSession) string {
		var out any
		return answer(out, cs.Call(ctx, MethodDiscover, DiscoverParams{Query: "echo text greet job"}, &out))
	},
	"tools/call search_tools": func(ctx context.Context, cs *mcp.ClientSession) string {
		return answer(cs.CallTool(ctx, MetaSearchTools, map[string]any{"query": "echo text", "k": 20}))
	},
}

// Methods walked elsewhere, with the test that does it.
var walkedElsewhere = map[string]string{
	"initialize":           "every connection here: names nothing",
	"ping":                 "names nothing",
	"server/discover":      "names nothing (2026-07-28 clients connect with it)",
	"logging/setLevel":     "TestUpstreamLogsReachOnlySessionsThatSeeTheUpstream",
	"subscriptions/listen": "TestNothingReachesWhatTheCallerCannotSee (2026-07-28 Subscribe)",
	"tasks/get":            "TestTasksOfAnotherTenantAreNotFound",
	"tasks/result":         "TestTasksOfAnotherTenantAreNotFound",
	"tasks/list":           "TestTasksOfAnotherTenantAreNotFound",
	"tasks/cancel":         "TestTasksOfAnotherTenantAreNotFound",
	"tasks/update":         "TestTasksOfAnotherTenantAreNotFound",
}

// Every method the gateway's server answers has a policy rule, and is
// walked by a test from a caller that cannot see the target: a method
// added to the library or the gateway fails here until both exist.
func TestEveryMethodHasAPolicy(t *testing.T) {
	g := runConfigured(t, &config.Config{}, &Options{Logger: slogDiscard})
	for _, m := range g.Server().Methods() {
		if _, ok := methodRules[m]; !ok {
			t.Errorf("%s has no rule in methodRules: decide what it names and whether it reaches upstreams", m)
		}
		_, a := blindCases[m]
		_, b := listed[m]
		_, c := walkedElsewhere[m]
		if !a && !b && !c {
			t.Errorf("%s is not walked by a blind caller: add it to blindCases, listed or walkedElsewhere", m)
		}
	}
	for m := range methodRules {
		if !slices.Contains(g.Server().Methods(), m) {
			t.Errorf("methodRules has %s, which the server does not answer", m)
		}
	}
}

// A caller that cannot see a server gets, for each thing of that server
// it names, the answer it gets for a server that does not exist, and
// nothing reaches the server. A principal of no tenant sees nothing. A
// caller who can see the server reaches it (so the hidden names exist).
func TestNothingReachesWhatTheCallerCannotSee(t *testing.T) {
	w := newBlindWorld(t)
	ctx := context.Background()
	bob := w.connect(t, "bob", "", "2025-11-25")
	if got := callText(t, bob, "beta_echo", map[string]string{"text": "x"}); got != "beta: x" {
		t.Fatalf("bob, who sees beta: %q", got)
	}
	if c := blindCases["completion/complete"](ctx, bob, "beta"); !strings.Contains(c, "beta-x") {
		t.Fatalf("bob's completions from beta: %s", c)
	}
	before := w.forwarded()
	for _, who := range []struct{ user, tenant string }{{"alice", ""}, {"ops", "acme"}, {"carol", ""}, {"dave", ""}} {
		cs := w.connect(t, who.user, who.tenant, "2025-11-25")
		for name, c := range blindCases {
			hidden, absent := c(ctx, cs, "beta"), c(ctx, cs, "zeta")
			if hidden != strings.ReplaceAll(absent, "zeta", "beta") {
				t.Errorf("%s@%s, %s of beta's: %s\nbut of a server that does not exist: %s", who.user, who.tenant, name, hidden, absent)
			}
		}
		for name, l := range listed {
			if got := l(ctx, cs); strings.Contains(got, "beta") {
				t.Errorf("%s@%s: %s shows beta: %s", who.user, who.tenant, name, got)
			}
		}
		perRequest := w.connect(t, who.user, who.tenant, mcp.Version20260728)
		if err := perRequest.Subscribe(ctx, "beta+mem://a"); !errors.Is(err, mcp.ErrNotSupported) {
			t.Errorf("%s@%s: a 2026-07-28 subscription to beta's resource: %v, want it left out of the acknowledgement", who.user, who.tenant, err)
		}
		for name, c := range blindCases {
			if name == "resources/subscribe" || name == "resources/unsubscribe" {
				continue // not methods of 2026-07-28
			}
			hidden, absent := c(ctx, perRequest, "beta"), c(ctx, perRequest, "zeta")
			if hidden != strings.ReplaceAll(absent, "zeta", "beta") {
				t.Errorf("%s@%s, 2026-07-28, %s of beta's: %s\nbut of a server that does not exist: %s", who.user, who.tenant, name, hidden, absent)
			}
		}
	}
	if n := w.forwarded() - before; n != 0 {
		t.Errorf("%d requests of blind callers reached beta", n)
	}
}

// Tasks are bound to the principal and the tenant it acted for: the
// same person acting for another tenant finds none of them.
func TestTasksOfAnotherTenantAreNotFound(t *testing.T) {
	w := newBlindWorld(t)
	ctx := context.Background()
	asGlobex := w.connect(t, "ops", "", "2025-11-25")
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	if err := asGlobex.Call(ctx, "tools/call", map[string]any{"name": "beta_job", "arguments": map[string]string{"text": "x"}, "task": map[string]any{"ttl": 60000}}, &created); err != nil || created.Task.TaskID == "" {
		t.Fatalf("creating a task: %+v %v", created, err)
	}
	id := created.Task.TaskID
	var list any
	if err := asGlobex.Call(ctx, "tasks/list", map[string]any{}, &list); err != nil || !strings.Contains(answer(list, nil), id) {
		t.Fatalf("ops@globex's own tasks: %v %v", list, err)
	}
	for _, who := range []struct{ user, tenant string }{{"ops", "acme"}, {"alice", ""}, {"carol", ""}} {
		cs := w.connect(t, who.user, who.tenant, "2025-11-25")
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			var a, b any
			hidden := answer(a, cs.Call(ctx, m, map[string]string{"taskId": id}, &a))
			absent := answer(b, cs.Call(ctx, m, map[string]string{"taskId": "no-such-task"}, &b))
			if hidden != strings.ReplaceAll(absent, "no-such-task", id) {
				t.Errorf("%s@%s, %s of ops@globex's task: %s\nbut of no task: %s", who.user, who.tenant, m, hidden, absent)
			}
		}
		var l any
		if err := cs.Call(ctx, "tasks/list", map[string]any{}, &l); strings.Contains(answer(l, err), id) {
			t.Errorf("%s@%s lists ops@globex's task: %s", who.user, who.tenant, answer(l, err))
		}
		var u any
		hidden := answer(u, cs.Call(ctx, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{}}, &u))
		absent := answer(u, cs.Call(ctx, "tasks/update", map[string]any{"taskId": "no-such-task", "inputResponses": map[string]any{}}, &u))
		if hidden != strings.ReplaceAll(absent, "no-such-task", id) {
			t.Errorf("%s@%s, tasks/update of ops@globex's task: %s\nbut of no task: %s", who.user, who.tenant, hidden, absent)
		}
	}
}
