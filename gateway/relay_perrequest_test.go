package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type topicIn struct {
	Topic string `json:"topic,omitempty"`
}

// addInterview adds to a test upstream a tool that asks three things in
// one call: the user's name, a model's greeting, the client's roots.
func addInterview(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "interview", Description: "Asks the user, the model and the roots"}, func(ctx context.Context, req *mcp.CallToolRequest, in topicIn) (*mcp.CallToolResult, any, error) {
		failed := func(err error) (*mcp.CallToolResult, any, error) {
			if ctx.Err() != nil {
				fmt.Fprintln(os.Stderr, "interview was cancelled")
			}
			return nil, nil, err
		}
		who, err := req.Elicit(ctx, &mcp.ElicitParams{Message: "Your name? " + in.Topic, RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return failed(err)
		}
		if who.Action != "accept" {
			return mcp.TextResult("the user chose to " + who.Action), nil, nil
		}
		name := fmt.Sprint(who.Content["name"])
		msg, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{mcp.NewSamplingMessage(mcp.RoleUser, &mcp.TextContent{Text: "greet " + name})}, MaxTokens: 20})
		if err != nil {
			return failed(err)
		}
		var said struct{ Text string }
		json.Unmarshal(msg.Content, &said)
		roots, err := req.ListRoots(ctx)
		if err != nil {
			return failed(err)
		}
		uris := []string{}
		for _, r := range roots.Roots {
			uris = append(uris, r.URI)
		}
		return mcp.TextResult(fmt.Sprintf("%s; %s; roots %v", name, said.Text, uris)), nil, nil
	})
}

// perRequestRelayUpstreams are one upstream of each era: alpha speaks
// 2025-11-25 (its handler waits in a real request to the gateway), gamma
// 2026-07-28 (it answers input_required to the gateway and runs again).
func perRequestRelayUpstreams(t *testing.T) []*configServer {
	alpha := stdioServer("alpha")
	alpha.ProtocolVersion = "2025-11-25"
	alpha.Start = "eager"
	gamma := httpServer(t, "gamma")
	for _, s := range []*configServer{alpha, gamma} {
		s.ClientFeatures = allClientFeatures()
	}
	return []*configServer{alpha, gamma}
}

// allClientFeatures grant a server sampling, elicitation and roots.
func allClientFeatures() config.ClientFeatures {
	yes := true
	return config.ClientFeatures{Sampling: &yes, Elicitation: &yes, Roots: &yes}
}

// asker is a 2026-07-28 downstream client's answers, recorded.
type asker struct {
	mu     sync.Mutex
	asked  []string
	action string        // the elicitation's answer: accept unless set
	delay  time.Duration // before each answer
}

func (a *asker) note(what string) {
	time.Sleep(a.delay)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, what)
}

func (a *asker) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.asked
	a.asked = nil
	return out
}

// options declares elicitation and sampling, and roots when roots is set.
func (a *asker) options(roots bool) *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		ProtocolVersion: mcp.Version20260728,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			a.note("elicit " + p.Message)
			if a.action != "" && a.action != "accept" {
				return &mcp.ElicitResult{Action: a.action}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
		CreateMessageHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			var said struct{ Text string }
			json.Unmarshal(p.Messages[0].Content, &said)
			a.note("sample " + said.Text)
			b, _ := json.Marshal(&mcp.TextContent{Text: "hi " + strings.TrimPrefix(said.Text, "greet ")})
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: b, Model: "m"}, nil
		},
	}
	if roots {
		o.RootsHandler = func(context.Context, *mcp.ClientSession) (*mcp.ListRootsResult, error) {
			a.note("roots")
			return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///r"}}}, nil
		}
	}
	return o
}

// An elicitation of either era's upstream reaches a 2026-07-28 client as
// input_required, and its answer the upstream, which then finishes. The
// time the client takes is not counted against the upstream's timeout.
func TestGatewayRelayPerRequestElicit(t *testing.T) {
	var logs logBuffer
	ups := perRequestRelayUpstreams(t)
	ups[0].Timeout = config.Duration(time.Second)
	a := &asker{delay: 1500 * time.Millisecond}
	g, cs := startGateway(t, &logs, a.options(true), ups...)
	if cs.ProtocolVersion() != mcp.Version20260728 {
		t.Fatalf("downstream speaks %s", cs.ProtocolVersion())
	}
	for _, s := range []string{"alpha", "gamma"} {
		if got := callText(t, cs, s+"_ask", nil); got != "hello ada" {
			t.Errorf("%s_ask: %q", s, got)
		}
		if got := a.take(); !slices.Equal(got, []string{"elicit [" + s + "] Your name?"}) {
			t.Errorf("%s_ask asked %q", s, got)
		}
	}
	waitUntil(t, func() bool { return g.relays.size() == 0 }, "the finished calls to be freed")
}

// What a prompt or a resource's upstream asks in the middle reaches the
// client too: a 2026-07-28 one as input_required, which our client
// answers and retries, a session-era one as a real request; either era of
// upstream.
func TestGatewayRelayPromptsAndReads(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, perRequestRelayUpstreams(t)...)
	waitState(t, g, StateReady, StateIdle)
	for _, era := range []string{mcp.Version20260728, "2025-11-25"} {
		a := &asker{}
		o := a.options(false)
		o.ProtocolVersion = era
		cs := connectTo(t, g.Server(), o)
		for _, s := range []string{"alpha", "gamma"} {
			p, err := cs.GetPrompt(context.Background(), s+"_personal", map[string]string{"topic": "tea"})
			if err != nil {
				t.Fatalf("%s, %s_personal: %v", era, s, err)
			}
			if got := p.Messages[0].Content.(*mcp.TextContent).Text; got != s+" asks ada about tea" {
				t.Errorf("%s, %s_personal: %q", era, s, got)
			}
			r, err := cs.ReadResource(context.Background(), s+"+mem://private")
			if err != nil {
				t.Fatalf("%s, %s+mem://private: %v", era, s, err)
			}
			if got := r.Contents[0]; got.Text != s+" private to ada" || got.URI != s+"+mem://private" {
				t.Errorf("%s, %s+mem://private: %+v", era, s, got)
			}
			if got := a.take(); !slices.Equal(got, []string{"elicit [" + s + "] Your name?", "elicit [" + s + "] Your name?"}) {
				t.Errorf("%s, %s asked %q", era, s, got)
			}
		}
	}
	waitUntil(t, func() bool { return g.relays.size() == 0 }, "the finished calls to be freed")
}

// One call asks three times (elicitation, then sampling, then roots):
// three rounds, each answer reaching the upstream, then the result.
func TestGatewayRelayPerRequestRounds(t *testing.T) {
	var logs logBuffer
	a := &asker{}
	_, cs := startGateway(t, &logs, a.options(true), perRequestRelayUpstreams(t)...)
	for _, s := range []string{"alpha", "gamma"} {
		if got := callText(t, cs, s+"_interview", map[string]string{"topic": "x"}); got != "ada; hi ada; roots [file:///r]" {
			t.Errorf("%s_interview: %q", s, got)
		}
		if got := a.take(); !slices.Equal(got, []string{"elicit [" + s + "] Your name? x", "sample greet ada", "roots"}) {
			t.Errorf("%s_interview asked %q", s, got)
		}
	}
	// Each asking round is logged as such, not as a failed call.
	if n := strings.Count(logs.String(), "outcome=input_required"); n != 6 {
		t.Errorf("%d rounds logged as input_required, want 6", n)
	}
}

// A decline or cancel reaches the upstream as it was given; what the
// client did not declare is not asked (no roots: none; no sampling: the
// upstream is refused).
func TestGatewayRelayPerRequestDeclineAndCapabilities(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, perRequestRelayUpstreams(t)...)
	waitState(t, g, StateReady, StateIdle)
	for _, action := range []string{"decline", "cancel"} {
		a := &asker{action: action}
		cs := connectTo(t, g.Server(), a.options(true))
		for _, s := range []string{"alpha", "gamma"} {
			if got := callText(t, cs, s+"_interview", nil); got != "the user chose to "+action {
				t.Errorf("%s_interview, %s: %q", s, action, got)
			}
		}
	}
	a := &asker{}
	noRoots := connectTo(t, g.Server(), a.options(false))
	for _, s := range []string{"alpha", "gamma"} {
		if got := callText(t, noRoots, s+"_interview", nil); got != "ada; hi ada; roots []" {
			t.Errorf("%s_interview without roots: %q", s, got)
		}
	}
	o := a.options(true)
	o.CreateMessageHandler = nil
	noSampling := connectTo(t, g.Server(), o)
	for _, s := range []string{"alpha", "gamma"} {
		// The upstream's handler fails with the refusal it got.
		if _, err := noSampling.CallTool(context.Background(), s+"_interview", nil); err == nil || !strings.Contains(err.Error(), "capability sampling") {
			t.Errorf("%s_interview without sampling: %v", s, err)
		}
	}
	waitUntil(t, func() bool { return g.relays.size() == 0 }, "no call left parked")
	if strings.Contains(logs.String(), "interview was cancelled") {
		t.Error("an answered call was cancelled upstream")
	}
}

// A requestState is good only for its call, its round and its caller:
// another principal, an altered state, other arguments, a stale round or
// another call's state are refused, and the parked call carries on.
func TestGatewayRelayPerRequestStateBound(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, perRequestRelayUpstreams(t)...)
	waitState(t, g, StateReady, StateIdle)
	h := newPerRequestHTTP(t, g)
	for _, s := range []string{"alpha", "gamma"} {
		tool := s + "_interview"
		first := h.call("alice", tool, `{"topic":"a"}`, "")
		st, answer := h.question(first, "elicitation/create")
		other := h.call("alice", tool, `{"topic":"b"}`, "")
		otherSt, otherAnswer := h.question(other, "elicitation/create")
		tampered := []byte(st)
		tampered[5] ^= 1
		for name, tt := range map[string]struct{ user, args, extra string }{
			"another principal": {"bob", `{"topic":"a"}`, answer + h.state(st)},
			"altered state":     {"alice", `{"topic":"a"}`, answer + h.state(string(tampered))},
			"other arguments":   {"alice", `{"topic":"b"}`, answer + h.state(st)},
			"another's state":   {"alice", `{"topic":"a"}`, otherAnswer + h.state(otherSt)},
		} {
			if r := h.call(tt.user, tool, tt.args, tt.extra); r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("%s, %s: %+v, want -32602", tool, name, r)
			}
		}
		second := h.call("alice", tool, `{"topic":"a"}`, answer+h.state(st))
		st2, answer2 := h.question(second, "sampling/createMessage")
		if r := h.call("alice", tool, `{"topic":"a"}`, answer+h.state(st)); r.Error == nil || !strings.Contains(r.Error.Message, "earlier round") {
			t.Errorf("%s, the first round's state again: %+v", tool, r)
		}
		third := h.call("alice", tool, `{"topic":"a"}`, answer2+h.state(st2))
		st3, answer3 := h.question(third, "roots/list")
		if r := h.call("alice", tool, `{"topic":"a"}`, answer3+h.state(st3)); r.text() != "ada; hi ada; roots [file:///r]" {
			t.Errorf("%s, the owner's answers: %+v", tool, r)
		}
		// The other call, untouched by the attempt with its state.
		if r := h.call("alice", tool, `{"topic":"b"}`, otherAnswer+h.state(otherSt)); r.Result.ResultType != "input_required" {
			t.Errorf("%s, the other call: %+v", tool, r)
		}
	}
	if strings.Contains(logs.String(), "interview was cancelled") {
		t.Error("a refused retry cancelled a call upstream")
	}
}

// A parked call that its client does not resume within the window is
// cancelled upstream and freed; a retry after that is told to call again.
func TestGatewayRelayPerRequestAbandoned(t *testing.T) {
	var logs logBuffer
	alpha := perRequestRelayUpstreams(t)[0]
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": alpha}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger(), InputWindow: 300 * time.Millisecond})
	waitState(t, g, StateReady)
	h := newPerRequestHTTP(t, g)
	st, answer := h.question(h.call("alice", "alpha_interview", `{}`, ""), "elicitation/create")
	if g.relays.size() != 1 {
		t.Errorf("%d calls parked, want 1", g.relays.size())
	}
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "interview was cancelled") }, "the upstream's handler to be cancelled")
	waitUntil(t, func() bool { return g.relays.size() == 0 }, "the call to be freed")
	if !strings.Contains(logs.String(), "not resumed in time") {
		t.Error("the expiry was not logged")
	}
	r := h.call("alice", "alpha_interview", `{}`, answer+h.state(st))
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(r.Error.Message, "send the request again") {
		t.Errorf("a retry after the window: %+v", r)
	}
	// The upstream's slot is free again: a new call goes through.
	st, answer = h.question(h.call("alice", "alpha_interview", `{}`, ""), "elicitation/create")
	if r := h.call("alice", "alpha_interview", `{}`, answer+h.state(st)); r.Result.ResultType != "input_required" {
		t.Errorf("a new call: %+v", r)
	}
}

// A caller may keep only so many calls parked, each holding a slot of
// its upstream; the others' calls are not counted against it.
func TestGatewayRelayPerRequestParkedLimit(t *testing.T) {
	var logs logBuffer
	alpha := perRequestRelayUpstreams(t)[0]
	alpha.MaxConcurrency = 2 * maxParkedPerCaller
	g := runGateway(t, &logs, alpha)
	waitState(t, g, StateReady)
	h := newPerRequestHTTP(t, g)
	for i := range maxParkedPerCaller {
		h.question(h.call("alice", "alpha_interview", fmt.Sprintf(`{"topic":"%d"}`, i), ""), "elicitation/create")
	}
	r := h.call("alice", "alpha_interview", `{"topic":"one more"}`, "")
	if r.Error == nil || r.Error.Code != CodeRateLimited {
		t.Errorf("alice's call over the limit: %+v, want %d", r, CodeRateLimited)
	}
	h.question(h.call("bob", "alpha_interview", `{}`, ""), "elicitation/create")
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "interview was cancelled") }, "the refused call to be cancelled upstream")
}

// size counts the calls kept, parked or running.
func (rs *relays) size() int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return len(rs.byID)
}

// perRequestHTTP posts raw 2026-07-28 tools/calls to a gateway over HTTP, as
// the principal X-User names, so that a test can hold a requestState.
type perRequestHTTP struct {
	t   *testing.T
	url string
	id  int
}

func newPerRequestHTTP(t *testing.T, g *Gateway) *perRequestHTTP {
	srv := httptest.NewServer(mcphttp.NewHandler(g.Server(), &mcphttp.Options{Principal: func(r *http.Request) string { return r.Header.Get("X-User") }}))
	t.Cleanup(srv.Close)
	return &perRequestHTTP{t: t, url: srv.URL + "/mcp"}
}

type perRequestReply struct {
	Result struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string `json:"method"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
		Content      []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *jsonrpc.Error `json:"error"`
}

func (r *perRequestReply) text() string {
	if len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}

// call posts tools/call of tool with args and extra members of params
// (each ending with a comma).
func (h *perRequestHTTP) call(user, tool, args, extra string) *perRequestReply {
	h.t.Helper()
	h.id++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s,%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{},"roots":{}}}}}`, h.id, tool, args, extra)
	req, _ := http.NewRequest("POST", h.url, strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": mcp.Version20260728, "Mcp-Method": "tools/call", "Mcp-Name": tool, "X-User": user} {
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	// A plain JSON answer, or an SSE stream whose last data is the answer.
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			last = strings.TrimSpace(d)
		} else if strings.HasPrefix(line, "{") {
			last = line
		}
	}
	var r perRequestReply
	if err := json.Unmarshal([]byte(last), &r); err != nil {
		h.t.Fatalf("status %d, answer %q: %v", resp.StatusCode, last, err)
	}
	return &r
}

// question checks that r asks one thing, of method, and returns its
// requestState and an inputResponses member answering it.
func (h *perRequestHTTP) question(r *perRequestReply, method string) (state, answer string) {
	h.t.Helper()
	if r.Result.ResultType != "input_required" || len(r.Result.InputRequests) != 1 || r.Result.RequestState == "" {
		h.t.Fatalf("want one input request: %+v", r)
	}
	answers := map[string]string{
		"elicitation/create":     `{"action":"accept","content":{"name":"ada"}}`,
		"roots/list":             `{"roots":[{"uri":"file:///r"}]}`,
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"hi ada"},"model":"m"}`,
	}
	for key, in := range r.Result.InputRequests {
		if in.Method != method {
			h.t.Fatalf("asked %s, want %s", in.Method, method)
		}
		answer = fmt.Sprintf(`"inputResponses":{%q:%s},`, key, answers[method])
	}
	return r.Result.RequestState, answer
}

func (h *perRequestHTTP) state(s string) string { return fmt.Sprintf(`"requestState":%q,`, s) }
