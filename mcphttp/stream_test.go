package mcphttp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

func TestProgressMakesSSE(t *testing.T) {
	for _, tt := range []struct {
		version string
		primed  bool
	}{{"2025-11-25", true}, {"2025-06-18", false}, {"2025-03-26", false}} {
		_, srv := startHTTP(t, testServer(), nil)
		c := newClient(t, srv)
		c.initialize(tt.version)
		resp := c.post(`{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"tok"}}}`)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("%s: content type %q", tt.version, ct)
		}
		events := readEvents(t, resp.Body, -1)
		resp.Body.Close()
		if primed := len(events) > 0 && events[0].data == "" && events[0].retry != ""; primed != tt.primed {
			t.Errorf("%s: priming event %v, want %v (%+v)", tt.version, primed, tt.primed, events)
		}
		if tt.primed {
			events = events[1:]
		}
		if len(events) != 4 {
			t.Fatalf("%s: %d events: %+v", tt.version, len(events), events)
		}
		ids := map[string]bool{}
		for i, e := range events[:3] {
			if !strings.Contains(e.data, `"method":"notifications/progress"`) || !strings.Contains(e.data, `"progressToken":"tok"`) {
				t.Errorf("event %d: %s", i, e.data)
			}
			ids[e.id] = true
		}
		if !strings.Contains(events[3].data, `"id":"p","result"`) {
			t.Errorf("last event is not the reply: %s", events[3].data)
		}
		if len(ids) != 3 || events[0].name != "message" {
			t.Errorf("event ids %v", ids)
		}
	}
}

func TestServerToClientRequestOverHTTP(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	resp := c.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sample"}}`)
	defer resp.Body.Close()
	events := readEvents(t, resp.Body, 2) // priming, then the sampling request
	var req struct {
		ID     json.RawMessage
		Method string
	}
	json.Unmarshal([]byte(events[1].data), &req)
	if req.Method != "sampling/createMessage" {
		t.Fatalf("want a sampling request on the call's stream, got %+v", events)
	}
	answer := c.post(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m-1"}}`)
	if readAll(t, answer); answer.StatusCode != 202 {
		t.Fatalf("answer: %d", answer.StatusCode)
	}
	rest := readEvents(t, resp.Body, -1)
	if len(rest) != 1 || !strings.Contains(rest[0].data, "model m-1") {
		t.Errorf("result: %+v", rest)
	}
}

// Each message goes on exactly one stream: a list_changed notification
// goes to the GET stream and not to a POST stream open at the time.
func TestUnsolicitedMessagesUseTheGETStream(t *testing.T) {
	s := testServer()
	_, srv := startHTTP(t, s, nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	req, _ := http.NewRequest(http.MethodGet, c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.sid)
	get, err := c.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	readEvents(t, get.Body, 1) // priming
	post := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}`)
	s.AddTool(&mcp.Tool{Name: "late", InputSchema: `{"type":"object"}`}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	ev := readEvents(t, get.Body, 1)
	if !strings.Contains(ev[0].data, "notifications/tools/list_changed") {
		t.Errorf("GET stream got %+v", ev)
	}
	for _, e := range readEvents(t, post.Body, -1) {
		if strings.Contains(e.data, "list_changed") {
			t.Errorf("list_changed also on the POST stream")
		}
	}
	post.Body.Close()
}

func TestResumeWithLastEventID(t *testing.T) {
	_, srv := startHTTP(t, testServer(), nil)
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	// Another stream's events must not leak into the resumption.
	c.call(1, "tools/call", `{"name":"progress","_meta":{"progressToken":"other"}}`)

	resp := c.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"detach","_meta":{"progressToken":"mine"}}}`)
	first := readEvents(t, resp.Body, -1) // ends when the server closes it
	resp.Body.Close()
	if len(first) == 0 || first[0].data != "" {
		t.Fatalf("detached stream: %+v", first)
	}
	last := first[len(first)-1].id
	get := func(sid, lastID string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Last-Event-ID", lastID)
		r, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// Another session cannot resume this stream.
	intruder := newClient(t, srv)
	intruder.initialize("2025-11-25")
	r := get(intruder.sid, last)
	if body := readAll(t, r); r.StatusCode != 400 {
		t.Errorf("another session's stream: %d %s", r.StatusCode, body)
	}

	r = get(c.sid, last)
	rest := readEvents(t, r.Body, -1)
	r.Body.Close()
	var all []string
	for _, e := range append(first, rest...) {
		if e.data != "" {
			all = append(all, e.data)
		}
	}
	joined := strings.Join(all, "\n")
	if strings.Contains(joined, `"other"`) {
		t.Errorf("events of another stream replayed: %s", joined)
	}
	if !strings.Contains(joined, `"message":"before"`) || !strings.Contains(joined, `"message":"after"`) || !strings.Contains(joined, "after detach") {
		t.Errorf("resumed stream incomplete: %s", joined)
	}
	if strings.Count(joined, `"message":"before"`) != 1 {
		t.Errorf("an event was sent twice: %s", joined)
	}
	// Replaying from the start gives everything after the priming event.
	r = get(c.sid, first[0].id)
	if evs := readEvents(t, r.Body, -1); len(evs) != 3 {
		t.Errorf("replay from the start: %+v", evs)
	}
	r.Body.Close()
}

func TestSlowRequestSwitchesToSSEWithKeepAlive(t *testing.T) {
	s := testServer()
	release := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "slow"}, func(ctx context.Context, req *mcp.CallToolRequest, in struct{}) (*mcp.CallToolResult, any, error) {
		<-release
		return mcp.TextResult("slow done"), nil, nil
	})
	_, srv := startHTTP(t, s, &Options{KeepAlive: 20 * time.Millisecond})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	resp := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("slow request answered as %q", ct)
	}
	buf := make([]byte, 4096)
	got := ""
	for !strings.Contains(got, ": keepalive") {
		n, err := resp.Body.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got += string(buf[:n])
	}
	close(release)
	evs := readEvents(t, resp.Body, -1)
	resp.Body.Close()
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].data, "slow done") {
		t.Errorf("events %+v", evs)
	}
}

func TestLegacySSE(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{LegacySSE: true})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	ev := readEvents(t, stream.Body, 1)
	if ev[0].name != "endpoint" || !strings.HasPrefix(ev[0].data, "/message?sessionId=") {
		t.Fatalf("endpoint event %+v", ev)
	}
	post := func(body string) int {
		resp, err := srv.Client().Post(srv.URL+ev[0].data, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		readAll(t, resp)
		return resp.StatusCode
	}
	if st := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`); st != 202 {
		t.Fatalf("POST: %d", st)
	}
	if r := readEvents(t, stream.Body, 1); r[0].name != "message" || !strings.Contains(r[0].data, `"protocolVersion":"2024-11-05"`) {
		t.Fatalf("initialize reply %+v", r)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"legacy"}}}`)
	if r := readEvents(t, stream.Body, 1); !strings.Contains(r[0].data, `"text":"legacy"`) {
		t.Errorf("call reply %+v", r)
	}
	post(`not json`)
	if r := readEvents(t, stream.Body, 1); !strings.Contains(r[0].data, "-32700") {
		t.Errorf("parse error %+v", r)
	}
	resp, _ := srv.Client().Post(srv.URL+"/message?sessionId=nope", "application/json", strings.NewReader(`{}`))
	if readAll(t, resp); resp.StatusCode != 404 {
		t.Errorf("unknown legacy session: %d", resp.StatusCode)
	}
}

func TestStreamResponses(t *testing.T) {
	_, srv := startHTTP(t, testServer(), &Options{StreamResponses: true})
	c := newClient(t, srv)
	c.initialize("2025-11-25")
	if c.sid == "" {
		t.Fatal("no session id on a streamed initialize")
	}
	resp := c.post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := readEvents(t, resp.Body, -1)
	if len(events) != 2 || events[0].data != "" || !strings.Contains(events[1].data, `"id":7,"result"`) || !strings.Contains(events[1].data, `"hi"`) {
		t.Fatalf("events %+v, want the priming event and the reply", events)
	}
	// Notifications are still answered 202 without a body.
	if resp := c.post(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notification: %d", resp.StatusCode)
	}
}
