package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

type inputRequired struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	Content       []json.RawMessage          `json:"content"`
}

// A handler written with Elicit, CreateMessage and ListRoots works for a
// 2026-07-28 client round by round: each call that needs something new
// answers input_required, and the retry with the answers and the state
// goes one step further, until the result.
func TestPerRequestMultiRoundTrip(t *testing.T) {
	p := startPeer(t, featureServer(nil), nil)
	caps := `"io.modelcontextprotocol/clientCapabilities":{"roots":{},"elicitation":{},"sampling":{}}`
	params := func(extra string) string {
		return `{"name":"ask","arguments":{},` + extra + `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `}}`
	}
	answers := map[string]string{
		"roots/list":             `{"roots":[{"uri":"file:///r"}]}`,
		"elicitation/create":     `{"action":"accept","content":{"name":"ada"}}`,
		"sampling/createMessage": `{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`,
	}
	extra := ""
	var methods []string
	for round := 1; ; round++ {
		if round > 5 {
			t.Fatal("too many rounds")
		}
		m := p.call("tools/call", params(extra))
		if m.Error != nil {
			t.Fatalf("round %d: %s", round, m.Raw)
		}
		var r inputRequired
		json.Unmarshal(m.Result, &r)
		if r.ResultType == "complete" {
			if !strings.Contains(m.Raw, `file:///r ada m`) {
				t.Errorf("result %s", m.Raw)
			}
			break
		}
		if r.ResultType != "input_required" || len(r.InputRequests) != 1 || r.RequestState == "" {
			t.Fatalf("round %d: %s", round, m.Raw)
		}
		var resp []string
		for key, raw := range r.InputRequests {
			var in struct{ Method string }
			json.Unmarshal(raw, &in)
			methods = append(methods, in.Method)
			resp = append(resp, `"`+key+`":`+answers[in.Method])
		}
		st, _ := json.Marshal(r.RequestState)
		extra = `"inputResponses":{` + strings.Join(resp, ",") + `},"requestState":` + string(st) + `,`
	}
	if strings.Join(methods, " ") != "roots/list elicitation/create sampling/createMessage" {
		t.Errorf("asked for %v", methods)
	}
}

// requestState is refused when altered, when it belongs to another call
// and when inputResponses is not an object of results; a client without
// the capability an input needs gets -32021.
func TestPerRequestRequestStateChecks(t *testing.T) {
	srv := featureServer(nil)
	p := startPeer(t, srv, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"elicitation":{},"sampling":{}}}`
	m := p.call("tools/call", `{"name":"ask",`+meta+`}`)
	var r inputRequired
	json.Unmarshal(m.Result, &r)
	if r.RequestState == "" {
		t.Fatalf("no state: %s", m.Raw)
	}
	tampered := []byte(r.RequestState)
	tampered[3] ^= 1
	// A well-formed state for this very call, signed with another key:
	// only the signature tells it apart.
	other := NewServer(&Implementation{Name: "o", Version: "1"}, nil)
	forged := other.sealState(&requestState{Method: "tools/call", Digest: paramsDigest([]byte(`{"name":"ask"}`)), Expires: time.Now().Add(time.Hour).Unix()})
	expired := srv.sealState(&requestState{Method: "tools/call", Digest: paramsDigest([]byte(`{"name":"ask"}`)), Expires: time.Now().Add(-time.Minute).Unix()})
	for name, params := range map[string]string{
		"tampered":          `{"name":"ask","requestState":"` + string(tampered) + `",` + meta + `}`,
		"forged":            `{"name":"ask","requestState":"` + forged + `",` + meta + `}`,
		"expired":           `{"name":"ask","requestState":"` + expired + `",` + meta + `}`,
		"another call":      `{"name":"ask","arguments":{"x":1},"requestState":"` + r.RequestState + `",` + meta + `}`,
		"inputs not object": `{"name":"ask","inputResponses":[1],` + meta + `}`,
		"input not result":  `{"name":"ask","inputResponses":{"mcpgate/1":"yes"},` + meta + `}`,
	} {
		if m := p.call("tools/call", params); m.Error == nil || m.Error.Code != -32602 {
			t.Errorf("%s: %s, want -32602", name, m.Raw)
		}
	}
	m = p.call("tools/call", `{"name":"ask","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}`)
	if m.Error == nil || m.Error.Code != -32021 || !strings.Contains(string(m.Error.Data), `"requiredCapabilities":{"roots":{}}`) {
		t.Errorf("without roots: %s, want -32021 naming roots", m.Raw)
	}
}

// RequireInput in a session becomes server-to-client requests, and
// the client sees one call.
func TestSessionEraRequireInput(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "greet", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		r, ok := InputAs[ElicitResult](req.Request, "who")
		if !ok {
			return nil, req.RequireInput(map[string]*InputRequest{"who": ElicitInput(&ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})}, []byte("st"))
		}
		if string(req.State()) != "st" {
			return errorResult("lost the state"), nil
		}
		return TextResult("hello " + r.Content["name"].(string)), nil
	})
	cs := connect(t, s, &ClientOptions{ElicitationHandler: func(context.Context, *ClientSession, *ElicitParams) (*ElicitResult, error) {
		return &ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
	}})
	res, err := cs.CallTool(context.Background(), "greet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(*TextContent).Text; got != "hello ada" {
		t.Errorf("got %q", got)
	}
}

// CheckInput says, before anything is asked, which inputs the client of
// a request can answer: by its _meta in a 2026-07-28 request, by initialize
// in a session.
func TestCheckInput(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&Tool{Name: "probe", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		var out []string
		for _, in := range []*InputRequest{
			ElicitInput(&ElicitParams{Message: "m"}),
			ElicitInput(&ElicitParams{Mode: "url", URL: "https://example.com"}),
			SamplingInput(&CreateMessageParams{}),
			RootsInput(),
			{Method: "tools/list"},
		} {
			switch err := req.Request.CheckInput(in); {
			case err == nil:
				out = append(out, "ok")
			case errors.Is(err, ErrCapabilityNotSupported):
				out = append(out, "unsupported")
			default:
				out = append(out, "error")
			}
		}
		return TextResult(strings.Join(out, " ")), nil
	})
	p := startPeer(t, s, nil)
	var res CallToolResult
	p.result("tools/call", `{"name":"probe","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{}}}}`, &res)
	if got := res.Content[0].(*TextContent).Text; got != "ok unsupported unsupported ok error" {
		t.Errorf("per-request: %q", got)
	}
	sessionEra := startPeer(t, s, nil)
	sessionEra.initialize("2025-11-25", `{"sampling":{},"elicitation":{"url":{}}}`)
	sessionEra.result("tools/call", `{"name":"probe"}`, &res)
	if got := res.Content[0].(*TextContent).Text; got != "unsupported ok ok unsupported error" {
		t.Errorf("legacy: %q", got)
	}
}

// Middleware tells a round that asks for input from a failure.
func TestNeedsInput(t *testing.T) {
	seen := make(chan bool, 4)
	s := NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{Middleware: []Middleware{func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *Request) (any, error) {
			res, err := next(ctx, req)
			if req.Method == "tools/call" {
				seen <- req.NeedsInput()
			}
			return res, err
		}
	}}})
	s.AddTool(&Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		r, err := req.Request.Elicit(ctx, &ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
		if err != nil {
			return nil, err
		}
		return TextResult(r.Action), nil
	})
	p := startPeer(t, s, nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`
	var r inputRequired
	p.result("tools/call", `{"name":"ask",`+meta+`}`, &r)
	if r.ResultType != "input_required" || !<-seen {
		t.Fatalf("the asking round: %+v", r)
	}
	st, _ := json.Marshal(r.RequestState)
	p.result("tools/call", `{"name":"ask","inputResponses":{"mcpgate/1":{"action":"decline"}},"requestState":`+string(st)+`,`+meta+`}`, &r)
	if r.ResultType != "complete" || <-seen {
		t.Errorf("the answered round: %+v", r)
	}
}
