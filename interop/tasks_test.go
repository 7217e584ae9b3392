package interop

// Tasks (2025-11-25): the TypeScript SDK 1.x client's experimental tasks
// API (client.experimental.tasks) against the task tools of our fixtures
// server (conformance.NewServer's slow_compute and failing_job, and
// interop_task_slow), over stdio and Streamable HTTP.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTypeScriptClientTasks(t *testing.T) {
	t.Parallel()
	d := startTSDriver(t)
	const rev = "2025-11-25"
	for _, tr := range []string{"stdio", "http"} {
		t.Run(tr, func(t *testing.T) {
			r := record(t, "TS SDK 1.32.2 client (experimental tasks API)", "mcpgate fixtures (task tools)", transportLabel[tr], rev)
			ctx := testCtx(t, 60*time.Second)
			_, fx := ourTargets(t, tr)
			s, err := d.connect(ctx, tsTarget{transport: fx.transport, command: fx.command, args: fx.args, url: fx.url}, rev)
			if err != nil {
				fatalf(t, r, "connecting: %v", err)
			}
			defer func() {
				if err := s.Close(); err != nil {
					t.Errorf("closing the session: %v", err)
				}
				if len(s.clientErrors) > 0 {
					t.Errorf("the TypeScript client reported errors: %q", s.clientErrors)
				}
			}()
			checkNegotiated(t, r, s)
			tsTasksScenario(ctx, t, r, s)
		})
	}
}

// tsTaskEvent is one message callToolStream yielded.
type tsTaskEvent struct {
	Type          string // taskCreated, taskStatus, result, error
	TaskID        string
	Status        string
	StatusMessage string
	PollInterval  int
	Result        json.RawMessage
	Error         string
}

type tsTaskStream struct {
	Events       []tsTaskEvent
	ReadyResult  json.RawMessage
	CancelResult struct{ TaskID, Status string }
}

func (st *tsTaskStream) statuses() []string {
	var out []string
	for _, e := range st.Events {
		if e.Status != "" {
			out = append(out, e.Type+":"+e.Status)
		} else {
			out = append(out, e.Type)
		}
	}
	return out
}

// streamTimeout bounds one callToolStream: the task's run plus polls at
// the server's one-second interval.
const streamTimeout = 15 * time.Second

func (s *tsSession) taskStream(ctx context.Context, cmd map[string]any) (*tsTaskStream, error) {
	ctx, cancel := context.WithTimeout(ctx, streamTimeout)
	defer cancel()
	cmd["op"] = "taskStream"
	r, err := s.d.do(ctx, cmd)
	if err != nil {
		return nil, err
	}
	var st tsTaskStream
	if err := json.Unmarshal(r.Result, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// taskOp runs taskGet, taskResult, taskList or taskCancel.
func (s *tsSession) taskOp(ctx context.Context, op, taskID string, v any) error {
	ctx, cancel := callCtx(ctx)
	defer cancel()
	r, err := s.d.do(ctx, map[string]any{"op": op, "taskId": taskID})
	if err != nil {
		return err
	}
	return json.Unmarshal(r.Result, v)
}

type tsCallResult struct {
	Content []tsContent
	IsError bool
	Meta    map[string]json.RawMessage `json:"_meta"`
}

func tsTasksScenario(ctx context.Context, t *testing.T, r *row, s *tsSession) {
	t.Helper()
	// tools/list: the task tools say how they run; the SDK reads this to
	// decide on params.task by itself.
	lr, err := s.d.do(ctx, map[string]any{"op": "listTools"})
	if err != nil {
		fatalf(t, r, "tools/list: %v", err)
	}
	var tools struct {
		Tools []struct {
			Name      string
			Execution struct{ TaskSupport string }
		}
	}
	if err := json.Unmarshal(lr.Result, &tools); err != nil {
		t.Fatal(err)
	}
	support := map[string]string{}
	for _, tool := range tools.Tools {
		support[tool.Name] = tool.Execution.TaskSupport
	}
	for name, want := range map[string]string{"slow_compute": "optional", "failing_job": "required", "interop_task_slow": "optional"} {
		if support[name] != want {
			fatalf(t, r, "tools/list: %s has taskSupport %q, want %q", name, support[name], want)
		}
	}
	r.check("tools/list")

	// A task that completes: created, polled while working, then its
	// result through tasks/result.
	st, err := s.taskStream(ctx, map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1, "label": "interop"}, "ttl": 60000})
	if err != nil {
		fatalf(t, r, "callToolStream slow_compute: %v", err)
	}
	t.Logf("slow_compute: %v", st.statuses())
	ev := st.Events
	if len(ev) < 3 || ev[0].Type != "taskCreated" || ev[0].TaskID == "" || ev[0].Status != "working" {
		fatalf(t, r, "slow_compute: want a task created working, then polls and a result; got %v", st.statuses())
	}
	id := ev[0].TaskID
	last, polls := ev[len(ev)-1], ev[1:len(ev)-1]
	if !slices.ContainsFunc(polls, func(e tsTaskEvent) bool { return e.Status == "working" }) ||
		polls[len(polls)-1].Status != "completed" || last.Type != "result" {
		fatalf(t, r, "slow_compute: want polls seeing working, then completed, then the result; got %v", st.statuses())
	}
	var res tsCallResult
	if err := json.Unmarshal(last.Result, &res); err != nil {
		t.Fatal(err)
	}
	if got := tsTexts(res.Content); res.IsError || len(got) != 1 || got[0] != `Computed "interop" in 1s` {
		fatalf(t, r, "slow_compute's result: %s", last.Result)
	}
	r.check("tools/call+task")
	r.check("tasks/get")
	r.check("tasks/result")

	var list struct {
		Tasks []struct{ TaskID, Status string }
	}
	if err := s.taskOp(ctx, "taskList", "", &list); err != nil {
		fatalf(t, r, "tasks/list: %v", err)
	}
	if !slices.Contains(list.Tasks, struct{ TaskID, Status string }{id, "completed"}) {
		fatalf(t, r, "tasks/list lacks %s completed: %+v", id, list.Tasks)
	}
	r.check("tasks/list")

	// A tool error: per 2025-11-25 the task ends failed ("this includes
	// cases where the tool call result has isError set to true"), and
	// tasks/result returns what the call would have: the isError result.
	st, err = s.taskStream(ctx, map[string]any{"name": "failing_job"})
	if err != nil {
		fatalf(t, r, "callToolStream failing_job: %v", err)
	}
	t.Logf("failing_job: %v", st.statuses())
	ev = st.Events
	if len(ev) < 2 || ev[0].Type != "taskCreated" {
		fatalf(t, r, "failing_job: %v", st.statuses())
	}
	id = ev[0].TaskID
	terminal := ""
	for _, e := range ev {
		if e.Type == "taskStatus" {
			terminal = e.Status
		}
	}
	if terminal != "failed" { // 2025-11-25: a tool error fails the task
		fatalf(t, r, "failing_job: ended %q, want failed: %v", terminal, st.statuses())
	}
	if err := s.taskOp(ctx, "taskResult", id, &res); err != nil {
		fatalf(t, r, "tasks/result of failing_job: %v", err)
	}
	if !res.IsError || !strings.Contains(strings.Join(tsTexts(res.Content), " "), "the job failed") {
		fatalf(t, r, "tasks/result of failing_job: want its isError result, got %+v", res)
	}
	var related struct{ TaskID string }
	if json.Unmarshal(res.Meta["io.modelcontextprotocol/related-task"], &related); related.TaskID != id {
		t.Errorf("tasks/result lacks the related-task _meta for %s: %+v", id, res.Meta)
	}
	r.check("tool error")

	// tasks/cancel: once the handler runs, cancel the task; the stream
	// ends cancelled, and the handler saw it.
	key := uniqueKey(t)
	st, err = s.taskStream(ctx, map[string]any{
		"name": "interop_task_slow", "arguments": map[string]any{"key": key}, "cancel": true,
		"ready": map[string]any{"name": "interop_cancel_state", "arguments": map[string]any{"key": key, "until": "running", "waitMs": 3000}},
	})
	if err != nil {
		fatalf(t, r, "callToolStream interop_task_slow with a cancel: %v", err)
	}
	t.Logf("interop_task_slow, cancelled: %v", st.statuses())
	ev = st.Events
	if len(ev) < 2 || ev[0].Type != "taskCreated" {
		fatalf(t, r, "interop_task_slow: %v", st.statuses())
	}
	id = ev[0].TaskID
	var ready tsCallResult
	json.Unmarshal(st.ReadyResult, &ready)
	if got := strings.Join(tsTexts(ready.Content), ""); !strings.Contains(got, `"state":"running"`) {
		fatalf(t, r, "interop_task_slow's handler did not start: %s", st.ReadyResult)
	}
	if st.CancelResult.TaskID != id || st.CancelResult.Status != "cancelled" {
		fatalf(t, r, "tasks/cancel answered %+v, want %s cancelled", st.CancelResult, id)
	}
	if last := ev[len(ev)-1]; last.Type != "error" || !strings.Contains(last.Error, "cancelled") {
		fatalf(t, r, "the stream of a cancelled task: %v (last %+v)", st.statuses(), last)
	}
	state, err := s.CallTool(ctx, "interop_cancel_state", map[string]any{"key": key, "waitMs": 3000})
	if err != nil || state.IsError {
		fatalf(t, r, "interop_cancel_state: %v %+v", err, state)
	}
	var cs struct{ State, Cause string }
	if err := state.decode(&cs); err != nil {
		t.Fatal(err)
	}
	if cs.State != "cancelled" {
		fatalf(t, r, "tasks/cancel did not reach the handler: state %q", cs.State)
	}
	var got struct{ Status string }
	if err := s.taskOp(ctx, "taskGet", id, &got); err != nil || got.Status != "cancelled" {
		fatalf(t, r, "tasks/get after tasks/cancel: %v %+v", err, got)
	}
	// Cancelling a task that has ended is refused with -32602.
	if err := s.taskOp(ctx, "taskCancel", id, &got); err == nil || !strings.Contains(err.Error(), "-32602") {
		fatalf(t, r, "tasks/cancel of a cancelled task: want error -32602, got %v", err)
	}
	r.check("tasks/cancel")
	t.Logf("task handler cancelled: %s", cs.Cause)
}
