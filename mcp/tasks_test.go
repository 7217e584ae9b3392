package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// taskServer has a tool of each task support, one that waits on a gate
// (or its cancellation), and one that asks the user.
func taskServer(opts *ServerOptions) (*Server, chan struct{}, chan error) {
	s := NewServer(&Implementation{Name: "tasks", Version: "1"}, opts)
	gate := make(chan struct{})
	ended := make(chan error, 8)
	obj := map[string]any{"type": "object"}
	s.AddTool(&Tool{Name: "now", InputSchema: obj}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return TextResult("now"), nil
	})
	s.AddTool(&Tool{Name: "wait", InputSchema: obj, Execution: &ToolExecution{TaskSupport: TaskSupportOptional}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		select {
		case <-gate:
			return TextResult("waited"), nil
		case <-ctx.Done():
			ended <- ctx.Err()
			return nil, ctx.Err()
		}
	})
	s.AddTool(&Tool{Name: "must", InputSchema: obj, Execution: &ToolExecution{TaskSupport: TaskSupportRequired}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
		return nil, fmt.Errorf("tool failure")
	})
	s.AddTool(&Tool{Name: "ask", InputSchema: obj, Execution: &ToolExecution{TaskSupport: TaskSupportOptional}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		a, err := req.Elicit(ctx, &ElicitParams{Message: "first?", RequestedSchema: obj})
		if err != nil {
			return nil, err
		}
		b, err := req.Elicit(ctx, &ElicitParams{Message: "second?", RequestedSchema: obj})
		if err != nil {
			return nil, err
		}
		return TextResult(fmt.Sprint(a.Content["v"], "+", b.Content["v"])), nil
	})
	return s, gate, ended
}

type wireTask struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	TTL            *int64          `json:"ttl"`
	TTLMs          *int64          `json:"ttlMs"`
	PollInterval   int64           `json:"pollInterval"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	ResultType     string          `json:"resultType"`
	InputRequests  json.RawMessage `json:"inputRequests"`
	Result         json.RawMessage `json:"result"`
	Error          json.RawMessage `json:"error"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
}

// pollTask calls tasks/get until the task's status is one of want.
func pollTask(t *testing.T, p *peer, params string, want ...string) *wireTask {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var got wireTask
		p.result("tasks/get", params, &got)
		for _, w := range want {
			if got.Status == w {
				return &got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task status %q, want one of %v", got.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The 2025-11-25 core tasks: declared, created on params.task, polled,
// waited on with tasks/result, listed, and refused where the tool says so.
func TestSessionEraTasks(t *testing.T) {
	s, gate, _ := taskServer(nil)
	p := startPeer(t, s, nil)
	init := p.initialize("2025-11-25", "")
	contains(t, string(init), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

	var list struct{ Tools []*Tool }
	p.result("tools/list", "", &list)
	for _, tool := range list.Tools {
		if tool.Name == "wait" && (tool.Execution == nil || tool.Execution.TaskSupport != "optional") {
			t.Errorf("wait listed with execution %+v", tool.Execution)
		}
	}

	var created struct{ Task wireTask }
	p.result("tools/call", `{"name":"wait","task":{"ttl":60000}}`, &created)
	task := created.Task
	if task.Status != "working" || len(task.TaskID) < 32 || task.TTL == nil || *task.TTL != 60000 || task.CreatedAt == "" || task.LastUpdatedAt == "" {
		t.Fatalf("created %+v", task)
	}
	id := fmt.Sprintf(`{"taskId":%q}`, task.TaskID)
	if got := pollTask(t, p, id, "working"); got.TaskID != task.TaskID {
		t.Errorf("tasks/get %+v", got)
	}
	var listed struct {
		Tasks []wireTask
	}
	p.result("tasks/list", "", &listed)
	if len(listed.Tasks) != 1 || listed.Tasks[0].TaskID != task.TaskID {
		t.Errorf("tasks/list %+v", listed)
	}

	// tasks/result blocks until the task ends, then returns the call's
	// own result, tagged with the task.
	p.send(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":%s}`, id)
	p.expectQuiet()
	close(gate)
	for {
		m := p.recv()
		if m.Method == "notifications/tasks/status" {
			continue
		}
		if string(m.ID) != `"r"` || !strings.Contains(m.Raw, `"text":"waited"`) || !strings.Contains(m.Raw, `"io.modelcontextprotocol/related-task":{"taskId":"`+task.TaskID+`"}`) {
			t.Fatalf("tasks/result %s", m.Raw)
		}
		break
	}
	pollTask(t, p, id, "completed")
	if code, msg := p.rpcError("tasks/cancel", id); code != -32602 || !strings.Contains(msg, "completed") {
		t.Errorf("cancelling a finished task: %d %s", code, msg)
	}

	for _, tt := range []struct{ params, want string }{
		{`{"name":"must"}`, "runs only as a task"},
		{`{"name":"now","task":{}}`, "does not run as a task"},
	} {
		if code, msg := p.rpcError("tools/call", tt.params); code != -32601 || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: %d %s", tt.params, code, msg)
		}
	}
	// A tool error fails a 2025-11-25 task; tasks/result has the
	// isError result.
	p.result("tools/call", `{"name":"must","task":{}}`, &created)
	mustID := fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)
	got := pollTask(t, p, mustID, "completed", "failed")
	if got.Status != "failed" {
		t.Errorf("tool error: %+v", got)
	}
	if m := p.call("tasks/result", mustID); m.Error != nil || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("tasks/result of a tool error: %s", m.Raw)
	}
	for _, tt := range []struct{ method, params string }{
		{"tasks/get", `{"taskId":"nope"}`},
		{"tasks/get", `{}`},
		{"tasks/result", `{"taskId":"nope"}`},
		{"tasks/list", `{"cursor":"!!"}`},
	} {
		if code, _ := p.rpcError(tt.method, tt.params); code != -32602 {
			t.Errorf("%s %s: code %d", tt.method, tt.params, code)
		}
	}
	if code, _ := p.rpcError("tasks/update", id); code != -32601 {
		t.Errorf("tasks/update in a legacy session: code %d", code)
	}
}

// Clients before 2025-11-25 know no tasks: params.task is ignored and
// every tool runs as an ordinary call.
func TestTasksIgnoredBefore20251125(t *testing.T) {
	s, gate, _ := taskServer(nil)
	close(gate)
	p := startPeer(t, s, nil)
	init := p.initialize("2025-06-18", "")
	if strings.Contains(string(init), `"tasks":{`) {
		t.Errorf("initialize declares tasks to a 2025-06-18 client: %s", init)
	}
	m := p.call("tools/call", `{"name":"wait","task":{}}`)
	contains(t, m.Raw, `"text":"waited"`)
	m = p.call("tools/call", `{"name":"must"}`)
	contains(t, m.Raw, `"isError":true`)
	if code, _ := p.rpcError("tasks/get", `{"taskId":"x"}`); code != -32601 {
		t.Errorf("tasks/get at 2025-06-18: %d", code)
	}
}

// A session-era task's handler asks the client with real requests, tagged
// with the task, and the task reads input_required meanwhile; cancelling
// a running task ends its handler and keeps it cancelled.
func TestSessionEraTaskInputAndCancel(t *testing.T) {
	s, _, ended := taskServer(nil)
	p := startPeer(t, s, nil)
	p.initialize("2025-11-25", `{"elicitation":{}}`)
	var created struct{ Task wireTask }
	p.result("tools/call", `{"name":"ask","task":{}}`, &created)
	id := fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)
	for i, v := range []string{"a", "b"} {
		var req *msg
		for req == nil {
			m := p.recv()
			switch m.Method {
			case "elicitation/create":
				req = m
			case "notifications/tasks/status":
			default:
				t.Fatalf("round %d: got %s", i, m.Raw)
			}
		}
		contains(t, req.Raw, `"io.modelcontextprotocol/related-task":{"taskId":"`+created.Task.TaskID+`"}`)
		p.send(`{"jsonrpc":"2.0","id":"g%d","method":"tasks/get","params":%s}`, i, id)
		for {
			m := p.recv()
			if string(m.ID) == fmt.Sprintf(`"g%d"`, i) {
				contains(t, m.Raw, `"status":"input_required"`)
				break
			}
		}
		p.send(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"v":%q}}}`, req.ID, v)
	}
	p.send(`{"jsonrpc":"2.0","id":"res","method":"tasks/result","params":%s}`, id)
	for {
		m := p.recv()
		if string(m.ID) == `"res"` {
			contains(t, m.Raw, `"text":"a+b"`)
			break
		}
	}

	p.result("tools/call", `{"name":"wait","task":{}}`, &created)
	id = fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)
	var cancelled wireTask
	p.result("tasks/cancel", id, &cancelled)
	if cancelled.Status != "cancelled" {
		t.Errorf("tasks/cancel answered %+v", cancelled)
	}
	select {
	case <-ended:
	case <-time.After(waitFor):
		t.Fatal("the cancelled task's handler did not end")
	}
	if got := pollTask(t, p, id, "cancelled", "completed", "failed"); got.Status != "cancelled" {
		t.Errorf("after its handler ended: %+v", got)
	}
	if code, _ := p.rpcError("tasks/result", id); code != -32603 {
		t.Errorf("tasks/result of a cancelled task: %d", code)
	}
}

// An anonymous session-era caller's tasks belong to its session: another
// session cannot see, list or cancel them.
func TestSessionEraTasksScopedToSession(t *testing.T) {
	s, _, _ := taskServer(nil)
	a, b := startPeer(t, s, nil), startPeer(t, s, nil)
	a.initialize("2025-11-25", "")
	b.initialize("2025-11-25", "")
	var created struct{ Task wireTask }
	a.result("tools/call", `{"name":"wait","task":{}}`, &created)
	id := fmt.Sprintf(`{"taskId":%q}`, created.Task.TaskID)
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		if code, _ := b.rpcError(method, id); code != -32602 {
			t.Errorf("%s from another session: %d", method, code)
		}
	}
	var listed struct{ Tasks []wireTask }
	b.result("tasks/list", "", &listed)
	if len(listed.Tasks) != 0 {
		t.Errorf("another session lists %+v", listed.Tasks)
	}
	pollTask(t, a, id, "working")
}

func tasksMeta(caps string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + caps + `}`
}

const withTasksExt = `{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// The tasks extension: declared in discover, a flat CreateTaskResult for
// a caller that declared it, -32021 for one that did not, input through
// tasks/update (partial answers keep the task waiting), status pushed on
// a listen stream that asked for the task.
func TestPerRequestTasks(t *testing.T) {
	s, gate, ended := taskServer(nil)
	p := startPeer(t, s, nil)
	m := p.call("server/discover", `{`+tasksMeta(`{}`)+`}`)
	contains(t, m.Raw, `"extensions":{"io.modelcontextprotocol/tasks":{}}`)
	if strings.Contains(m.Raw, `"tasks":{`) {
		t.Errorf("discover has the 2025-11-25 tasks capability: %s", m.Raw)
	}
	m = p.call("tools/list", `{`+tasksMeta(`{}`)+`}`)
	if strings.Contains(m.Raw, `"execution"`) {
		t.Errorf("per-request tools/list carries execution: %s", m.Raw)
	}

	// Without the extension: optional tools run at once, required ones
	// and the tasks methods are refused with -32021.
	m = p.call("tools/call", `{"name":"ask",`+tasksMeta(`{"elicitation":{}}`)+`}`)
	contains(t, m.Raw, `"resultType":"input_required"`)
	for _, tt := range []struct{ method, params string }{
		{"tools/call", `{"name":"must",` + tasksMeta(`{}`) + `}`},
		{"tasks/get", `{"taskId":"x",` + tasksMeta(`{}`) + `}`},
		{"tasks/cancel", `{"taskId":"x",` + tasksMeta(`{}`) + `}`},
		{"tasks/update", `{"taskId":"x","inputResponses":{},` + tasksMeta(`{}`) + `}`},
		{"subscriptions/listen", `{"notifications":{"taskIds":["x"]},` + tasksMeta(`{}`) + `}`},
	} {
		m := p.call(tt.method, tt.params)
		if m.Error == nil || m.Error.Code != -32021 || !strings.Contains(string(m.Error.Data), `"extensions":{"io.modelcontextprotocol/tasks":{}}`) {
			t.Errorf("%s without the extension: %s", tt.method, m.Raw)
		}
	}
	for _, method := range []string{"tasks/result", "tasks/list"} {
		if code, _ := p.rpcError(method, `{"taskId":"x",`+tasksMeta(withTasksExt)+`}`); code != -32601 {
			t.Errorf("%s in 2026-07-28: %d", method, code)
		}
	}

	// With it: a flat task, its input asked through tasks/get.
	var created wireTask
	p.result("tools/call", `{"name":"ask",`+tasksMeta(withTasksExt)+`}`, &created)
	if created.ResultType != "task" || created.Status != "working" || created.TTLMs == nil || created.PollIntervalMs != 1000 || created.Result != nil {
		t.Fatalf("created %+v", created)
	}
	id := func(extra string) string {
		return fmt.Sprintf(`{"taskId":%q,%s%s}`, created.TaskID, extra, tasksMeta(withTasksExt))
	}
	got := pollTask(t, p, id(""), "input_required")
	if got.ResultType != "complete" || !strings.Contains(string(got.InputRequests), `"mcpgate/1":{"method":"elicitation/create"`) {
		t.Fatalf("input_required %+v", got)
	}
	// Unknown keys are ignored; the task waits for the one it asked.
	p.result("tasks/update", id(`"inputResponses":{"other":{"action":"accept"}},`), nil)
	pollTask(t, p, id(""), "input_required")
	p.result("tasks/update", id(`"inputResponses":{"mcpgate/1":{"action":"accept","content":{"v":"x"}}},`), nil)
	got = pollTask(t, p, id(""), "input_required")
	for !strings.Contains(string(got.InputRequests), `"mcpgate/2"`) {
		got = pollTask(t, p, id(""), "input_required")
	}
	p.result("tasks/update", id(`"inputResponses":{"mcpgate/2":{"action":"accept","content":{"v":"y"}}},`), nil)
	got = pollTask(t, p, id(""), "completed")
	if !strings.Contains(string(got.Result), `"text":"x+y"`) || strings.Contains(string(got.Result), "related-task") {
		t.Errorf("completed %+v", got)
	}

	// A listen stream that asked for a task hears of its changes; another
	// caller's (or an unknown) task is left out of the acknowledgement.
	// Cancelling is acknowledged with an empty result, even twice.
	p.result("tools/call", `{"name":"wait",`+tasksMeta(withTasksExt)+`}`, &created)
	p.send(`{"jsonrpc":"2.0","id":"L","method":"subscriptions/listen","params":{"notifications":{"taskIds":[%q,"not-mine"]},%s}}`, created.TaskID, tasksMeta(withTasksExt))
	ack := p.recv()
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(ack.Raw, `"taskIds":["`+created.TaskID+`"]`) {
		t.Fatalf("ack %s", ack.Raw)
	}
	p.send(`{"jsonrpc":"2.0","id":"c","method":"tasks/cancel","params":%s}`, id(""))
	for answered, heard := false, false; !answered || !heard; {
		m := p.recv()
		switch {
		case string(m.ID) == `"c"`:
			answered = true
			if m.Error != nil || strings.Contains(string(m.Result), "taskId") || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
				t.Errorf("tasks/cancel %s", m.Raw)
			}
		case m.Method == "notifications/tasks":
			heard = true
			contains(t, m.Raw, `"status":"cancelled"`)
			contains(t, m.Raw, `"io.modelcontextprotocol/subscriptionId":"L"`)
		default:
			t.Fatalf("unexpected %s", m.Raw)
		}
	}
	if m := p.call("tasks/cancel", id("")); m.Error != nil || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Errorf("second tasks/cancel %s", m.Raw)
	}
	<-ended
	pollTask(t, p, id(""), "cancelled")
	close(gate)
	if code, _ := p.rpcError("tasks/get", `{"taskId":"nope",`+tasksMeta(withTasksExt)+`}`); code != -32602 {
		t.Errorf("unknown task: %d", code)
	}
}

// TaskAfter: a call that ends or asks for input within it is answered
// directly; one still running after it becomes a task.
func TestPerRequestTaskAfter(t *testing.T) {
	s := NewServer(nil, nil)
	release := make(chan struct{})
	s.AddTool(&Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}, Execution: &ToolExecution{TaskSupport: TaskSupportRequired}, TaskAfter: 20 * time.Millisecond},
		func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
			r, ok := InputAs[ElicitResult](req.Request, "name")
			if !ok {
				return nil, req.RequireInput(map[string]*InputRequest{"name": ElicitInput(&ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})}, nil)
			}
			<-release
			return TextResult("hi " + fmt.Sprint(r.Content["n"])), nil
		})
	p := startPeer(t, s, nil)
	var round1 struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	p.result("tools/call", `{"name":"slow",`+tasksMeta(withTasksExt)+`}`, &round1)
	if round1.ResultType != "input_required" {
		t.Fatalf("round 1 %+v", round1)
	}
	var created wireTask
	p.result("tools/call", fmt.Sprintf(`{"name":"slow","inputResponses":{"name":{"action":"accept","content":{"n":"ada"}}},"requestState":%q,%s}`, round1.RequestState, tasksMeta(withTasksExt)), &created)
	if created.ResultType != "task" || created.TaskID == "" {
		t.Fatalf("round 2 %+v", created)
	}
	close(release)
	got := pollTask(t, p, fmt.Sprintf(`{"taskId":%q,%s}`, created.TaskID, tasksMeta(withTasksExt)), "completed", "failed")
	contains(t, string(got.Result), `"text":"hi ada"`)
}

// Tasks belong to the principal that made them; another principal gets
// -32602, as if the task did not exist.
func TestTasksBoundToPrincipal(t *testing.T) {
	s, gate, _ := taskServer(nil)
	defer close(gate)
	ss := s.NewSession(MessageWriterFunc(func([]byte) error { return nil }), nil)
	call := func(who, body string) string {
		var mu sync.Mutex
		var out []string
		ss.Handle(WithPrincipal(context.Background(), who), []byte(body), MessageWriterFunc(func(b []byte) error {
			mu.Lock()
			out = append(out, string(b))
			mu.Unlock()
			return nil
		}))
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(out, "\n")
	}
	created := call("alice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait",`+tasksMeta(withTasksExt)+`}}`)
	var res struct{ Result wireTask }
	if err := json.Unmarshal([]byte(created), &res); err != nil || res.Result.TaskID == "" {
		t.Fatalf("created %s", created)
	}
	get := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":%q,%s}}`, res.Result.TaskID, tasksMeta(withTasksExt))
	if got := call("alice", get); !strings.Contains(got, `"status":"working"`) {
		t.Errorf("alice: %s", got)
	}
	for _, who := range []string{"bob", ""} {
		if got := call(who, get); !strings.Contains(got, `"code":-32602`) {
			t.Errorf("%q sees alice's task: %s", who, got)
		}
	}
}

// A finished task is kept for its TTL, then forgotten.
func TestTaskExpires(t *testing.T) {
	s, gate, _ := taskServer(&ServerOptions{Tasks: TaskOptions{TTL: 50 * time.Millisecond}})
	close(gate)
	p := startPeer(t, s, nil)
	var created wireTask
	p.result("tools/call", `{"name":"wait",`+tasksMeta(withTasksExt)+`}`, &created)
	if created.TTLMs == nil || *created.TTLMs != 50 {
		t.Errorf("ttlMs %v", created.TTLMs)
	}
	params := fmt.Sprintf(`{"taskId":%q,%s}`, created.TaskID, tasksMeta(withTasksExt))
	deadline := time.Now().Add(waitFor)
	for {
		m := p.call("tasks/get", params)
		if m.Error != nil {
			if m.Error.Code != -32602 {
				t.Errorf("expired: %s", m.Raw)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the task was never forgotten")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// MaxRunning bounds a caller's unfinished tasks.
func TestTaskLimit(t *testing.T) {
	s, gate, _ := taskServer(&ServerOptions{Tasks: TaskOptions{MaxRunning: 2}})
	defer close(gate)
	p := startPeer(t, s, nil)
	call := `{"name":"wait",` + tasksMeta(withTasksExt) + `}`
	p.result("tools/call", call, nil)
	p.result("tools/call", call, nil)
	if code, msg := p.rpcError("tools/call", call); code != -32603 || !strings.Contains(msg, "unfinished tasks") {
		t.Errorf("third task: %d %s", code, msg)
	}
}
