package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// How a tools/call runs: at once, as a task, or refused.
type taskMode int

const (
	runSync taskMode = iota
	runTask
)

// taskModeFor decides how a call of st runs, from the tool's task support
// and what the caller can take.
func (s *Server) taskModeFor(req *Request, st *serverTool, p *CallToolParams) (taskMode, error) {
	support := st.taskSupport()
	if req.perRequest != nil {
		// The extension: the server decides, for callers that declared
		// it in this very request (params.task is ignored).
		if _, ok := req.perRequest.caps.Extensions[ExtensionTasks]; ok && support != TaskSupportForbidden {
			return runTask, nil
		}
		if support == TaskSupportRequired {
			return runSync, jsonrpc.Errorf(CodeMissingRequiredClientCapability, "Missing required client capability: tool %q runs only as a task; declare the %s extension in the request's client capabilities", p.Name, ExtensionTasks).
				WithData(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}})
		}
		return runSync, nil
	}
	if req.rev < rev20251125 || !s.hasTaskTools() {
		// Clients before 2025-11-25 know no tasks; a server that declares
		// none ignores params.task, as the revision asks.
		return runSync, nil
	}
	switch {
	case p.Task != nil && support == TaskSupportForbidden:
		return runSync, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: tool %q does not run as a task; call it without params.task", p.Name)
	case p.Task == nil && support == TaskSupportRequired:
		return runSync, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: tool %q runs only as a task; call it with params.task", p.Name)
	case p.Task != nil:
		return runTask, nil
	}
	return runSync, nil
}

func (st *serverTool) taskSupport() string {
	if st.tool.Execution == nil || st.tool.Execution.TaskSupport == "" {
		return TaskSupportForbidden
	}
	return st.tool.Execution.TaskSupport
}

// hasTaskTools reports whether some registered tool may run as a task,
// which is when the server declares tasks.
func (s *Server) hasTaskTools() bool { return s.taskTools.Load() > 0 }

// countTaskTools recounts after the tools changed.
func (s *Server) countTaskTools() {
	n := int32(0)
	for _, st := range s.tools.load().sorted {
		if st.taskSupport() != TaskSupportForbidden {
			n++
		}
	}
	s.taskTools.Store(n)
}

// taskCreated is a tools/call result that is a new task: the task as it
// was when created. Read when the answer is written, the running task
// could already say input_required or completed, without the
// inputRequests or result those statuses carry (TestPerRequestTasks saw it
// now and then; the client copes, see TestClientTaskEndedBeforeCreationAnswer).
type taskCreated struct{ wire any }

func newTaskCreated(t *task) taskCreated {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perRequest {
		return taskCreated{t.detailed(false)}
	}
	return taskCreated{&CreateTaskResult{Task: t.sessionEraWire()}}
}

func (c taskCreated) MarshalJSON() ([]byte, error) { return marshal(c.wire) }

// outcome is what one run of a tool handler produced.
type outcome struct {
	res *CallToolResult
	err error
}

// callToolTask answers a task-mode call: with the task, or (for a tool
// with Tool.TaskAfter, in a 2026-07-28 request) with the handler's own answer
// when it finishes or asks for input within that time.
func (s *Server) callToolTask(ctx context.Context, req *Request, st *serverTool, p *CallToolParams) (any, error) {
	tw := &taskWriter{direct: req.w}
	tr := req.taskCopy(tw)
	after := st.tool.TaskAfter
	if req.perRequest == nil {
		after = 0 // the 2025-11-25 client asked for a task: it gets one at once
	}
	// The handler's context outlives the request once it is a task; until
	// then the request's cancellation reaches it.
	hctx, hcancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var first chan outcome
	if after > 0 {
		stop := context.AfterFunc(ctx, func() { hcancel(context.Cause(ctx)) })
		first = make(chan outcome, 1)
		go func() {
			res, err := s.invokeSafe(context.WithValue(hctx, requestKey{}, tr), tr, st, p)
			first <- outcome{res, err}
		}()
		timer := time.NewTimer(after)
		select {
		case o := <-first:
			timer.Stop()
			stop()
			hcancel(nil)
			// Done in time, or asking for input: the call's own answer,
			// gathered with the client round by round.
			req.needInput, req.missingCap, req.autoN = tr.needInput, tr.missingCap, tr.autoN
			return s.finishToolCall(ctx, req, st, p, o.res, o.err)
		case <-timer.C:
			if !stop() {
				hcancel(nil)
				return nil, context.Cause(ctx)
			}
		}
	}
	t, err := s.newTask(ctx, req, p, hcancel)
	if err != nil {
		hcancel(nil)
		return nil, err
	}
	tw.t.Store(t)
	req.createdTask = t
	created := newTaskCreated(t)
	go s.runTask(context.WithValue(hctx, taskKey{}, t), t, tr, st, p, first)
	return created, nil
}

// newTask creates and stores a task for req.
func (s *Server) newTask(ctx context.Context, req *Request, p *CallToolParams, cancel context.CancelCauseFunc) (*task, error) {
	o := &s.opts.Tasks
	now := time.Now()
	t := &task{
		id: req.Session.idPrefix + newTaskID(), owner: PrincipalFrom(ctx), origin: req.Session, perRequest: req.perRequest != nil, rev: req.rev,
		created: now, updated: now, ttl: o.ttl(), poll: o.pollInterval(),
		cancel: cancel, status: TaskWorking, changed: make(chan struct{}), announced: make(chan struct{}),
	}
	if p.Task != nil && p.Task.TTL != nil && req.perRequest == nil {
		t.ttl = min(max(time.Duration(*p.Task.TTL)*time.Millisecond, time.Second), o.maxTTL())
	}
	if !t.perRequest && t.owner == "" {
		// Nobody to bind it to but the session: no other session may see
		// it, and it ends with the session.
		t.session = req.Session
		context.AfterFunc(req.Session.ctx, func() { t.cancel(errors.New("the session ended")) })
	}
	if !s.tasks.add(t, o.maxRunning()) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: this caller already has %d unfinished tasks, the most the server allows; wait for some to finish or cancel them", o.maxRunning())
	}
	t.mu.Lock()
	t.expiry = time.AfterFunc(t.ttl, func() { s.expireTask(t) })
	t.mu.Unlock()
	return t, nil
}

// expireTask forgets a task whose TTL passed, cancelling it if it runs.
func (s *Server) expireTask(t *task) {
	t.cancel(errors.New("the task's TTL passed"))
	s.setTaskStatus(t, TaskCancelled, "The task's TTL passed before it finished.")
	s.tasks.remove(t)
}

// maxTaskRounds bounds the rounds of input one task may ask for.
const maxTaskRounds = 16

// runTask runs a task's handler to its end, round after round of input.
func (s *Server) runTask(ctx context.Context, t *task, tr *Request, st *serverTool, p *CallToolParams, first <-chan outcome) {
	ctx = context.WithValue(ctx, requestKey{}, tr)
	for round := 0; ; round++ {
		var o outcome
		if round == 0 && first != nil {
			o = <-first
		} else {
			o.res, o.err = s.invokeSafe(ctx, tr, st, p)
		}
		need := tr.needInput
		switch {
		case tr.missingCap != nil:
			s.endTask(t, nil, tr.missingCap)
			return
		case need == nil:
			res, err := s.finishToolCall(ctx, tr, st, p, o.res, o.err)
			if ctx.Err() != nil {
				return // cancelled or expired: the status says so already
			}
			r, _ := res.(*CallToolResult)
			s.endTask(t, r, err)
			return
		case round+1 == maxTaskRounds:
			s.endTask(t, nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the tool asked for input %d times; giving up", maxTaskRounds))
			return
		}
		tr.needInput, tr.autoN = nil, 0
		var answers map[string]jsontext.Value
		var err error
		if t.perRequest {
			answers, err = s.awaitTaskInput(ctx, t, need.Requests)
		} else {
			answers, err = tr.Session.fulfilInputs(ctx, need.Requests)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.endTask(t, nil, err)
			}
			return
		}
		if tr.inputs == nil {
			tr.inputs = map[string]jsontext.Value{}
		}
		for k, v := range answers {
			tr.inputs[k] = v
		}
		tr.state = need.State
	}
}

// invokeSafe runs the handler outside the middleware chain, which already
// answered the call, turning a panic into an internal error.
func (s *Server) invokeSafe(ctx context.Context, req *Request, st *serverTool, p *CallToolParams) (res *CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.logger.Error("mcp: tool handler panicked in a task", "tool", p.Name, "panic", v, "stack", stack())
			res, err = nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server failed while running tool %q; the details are in the server's log", p.Name)
		}
	}()
	return st.handler(ctx, &CallToolRequest{Request: req, Params: p})
}

// awaitTaskInput parks a 2026-07-28 task in input_required until the client
// has answered every request through tasks/update.
func (s *Server) awaitTaskInput(ctx context.Context, t *task, reqs map[string]*InputRequest) (map[string]jsontext.Value, error) {
	t.mu.Lock()
	if t.status.Terminal() {
		t.mu.Unlock()
		return nil, context.Canceled
	}
	t.pending = make(map[string]*InputRequest, len(reqs))
	for k, in := range reqs {
		t.pending[k] = in
	}
	t.answers = map[string]jsontext.Value{}
	t.change(TaskInputRequired, "")
	t.mu.Unlock()
	s.taskChanged(t)
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			answers := t.answers
			t.pending, t.answers = nil, nil
			if !t.status.Terminal() {
				t.change(TaskWorking, "")
			}
			t.mu.Unlock()
			s.taskChanged(t)
			return answers, nil
		}
		wake := t.changed
		t.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// endTask records a task's result or error.
func (s *Server) endTask(t *task, res *CallToolResult, err error) {
	var b jsontext.Value
	var rpcErr *jsonrpc.Error
	if err != nil {
		rpcErr = toRPCError(err)
		if t.perRequest {
			rpcErr = perRequestError(rpcErr)
		}
	} else {
		if res == nil {
			res = &CallToolResult{}
		}
		var merr error
		if b, merr = encodeResult(resultForRevision(res, t.rev)); merr != nil {
			rpcErr = jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server could not encode the task's result")
		}
	}
	t.mu.Lock()
	if t.status.Terminal() {
		t.mu.Unlock()
		return
	}
	t.result, t.err = b, rpcErr
	switch {
	case rpcErr != nil:
		t.change(TaskFailed, rpcErr.Message)
	case res.IsError && !t.perRequest:
		// 2025-11-25 counts a tool error as a failed task (its result
		// still comes from tasks/result); the extension keeps "failed"
		// for protocol errors.
		t.change(TaskFailed, "The tool reported an error.")
	default:
		t.change(TaskCompleted, "")
	}
	t.mu.Unlock()
	s.taskEnded(t)
}

// setTaskStatus moves an unfinished task to status.
func (s *Server) setTaskStatus(t *task, status TaskStatus, message string) bool {
	t.mu.Lock()
	if t.status.Terminal() {
		t.mu.Unlock()
		return false
	}
	t.change(status, message)
	t.mu.Unlock()
	if status.Terminal() {
		s.taskEnded(t)
	} else {
		s.taskChanged(t)
	}
	return true
}

// taskEnded keeps a finished task for its TTL from now, and tells.
func (s *Server) taskEnded(t *task) {
	s.tasks.ended(t)
	t.mu.Lock()
	if t.expiry != nil {
		t.expiry.Stop()
	}
	t.expiry = time.AfterFunc(t.ttl, func() { s.tasks.remove(t) })
	cause := errTaskEnded
	if t.status == TaskCancelled {
		cause = errTaskCancelled
	}
	t.mu.Unlock()
	t.cancel(cause)
	s.taskChanged(t)
}

var errTaskEnded = errors.New("mcp: the task has ended")

type taskKey struct{}

// taskFrom returns the task a handler's context runs, if any.
// TaskIDFrom reports the task a tool handler runs in, if it runs in
// one: code that calls on (a proxy) can then make its own call a task.
func TaskIDFrom(ctx context.Context) (string, bool) {
	if t := taskFrom(ctx); t != nil {
		return t.id, true
	}
	return "", false
}

func taskFrom(ctx context.Context) *task {
	t, _ := ctx.Value(taskKey{}).(*task)
	return t
}

// clientAsk marks a session-era task input_required while its handler waits on
// a request to the client, and working again after.
func (s *Server) clientAsk(t *task, delta int) {
	t.mu.Lock()
	t.asking += delta
	status := TaskWorking
	if t.asking > 0 {
		status = TaskInputRequired
	}
	if t.status.Terminal() || t.status == status {
		t.mu.Unlock()
		return
	}
	t.change(status, "")
	t.mu.Unlock()
	s.taskChanged(t)
}

// taskCopy is the Request a task's handler runs with: the call's params,
// inputs and client, writing to w, and never "answered" while it runs.
func (r *Request) taskCopy(w MessageWriter) *Request {
	c := &Request{
		Method: r.Method, ID: r.ID, RawParams: r.RawParams, Session: r.Session,
		rev: r.rev, perRequest: r.perRequest, principal: r.principal, state: r.state, w: w,
	}
	if r.inputs != nil {
		c.inputs = make(map[string]jsontext.Value, len(r.inputs))
		for k, v := range r.inputs {
			c.inputs[k] = v
		}
	}
	return c
}

// taskWriter is where a task's handler writes. Before the task exists (a
// 2026-07-28 call still within TaskAfter) it is the call's own stream. Then a
// 2026-07-28 task sends nothing (the extension forbids progress and logs for
// tasks); a session-era one sends on the stream of a waiting tasks/result, or
// the session's own, each message tagged with the related-task _meta.
type taskWriter struct {
	direct MessageWriter
	t      atomic.Pointer[task]
}

func (w *taskWriter) WriteMessage(b []byte) error {
	t := w.t.Load()
	switch {
	case t == nil:
		return w.direct.WriteMessage(b)
	case t.perRequest:
		return nil
	}
	<-t.announced
	return t.sessionEraOut().WriteMessage(withRelatedTask(b, t.id))
}

// sessionEraOut is the stream for a session-era task's messages.
func (t *task) sessionEraOut() MessageWriter {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.waiters) - 1; i >= 0; i-- {
		if r := t.waiters[i]; !r.done.Load() {
			return r.w
		}
	}
	return t.origin.out
}

// withRelatedTask adds the related-task _meta to a request or
// notification's params.
func withRelatedTask(msg []byte, id string) []byte {
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(msg, &m) != nil || m["method"] == nil {
		return msg
	}
	var params map[string]jsontext.Value
	if p := m["params"]; len(p) > 0 && p[0] == '{' {
		if jsonv2.Unmarshal(p, &params) != nil {
			return msg
		}
	}
	if params == nil {
		params = map[string]jsontext.Value{}
	}
	meta := map[string]jsontext.Value{}
	if mb := params["_meta"]; len(mb) > 0 && mb[0] == '{' {
		jsonv2.Unmarshal(mb, &meta)
	}
	meta[MetaRelatedTask], _ = marshal(map[string]string{"taskId": id})
	params["_meta"], _ = marshal(meta)
	m["params"], _ = marshal(params)
	out, err := marshal(m)
	if err != nil {
		return msg
	}
	return out
}

// describeTask is for errors that name a task.
func describeTask(id string) string { return fmt.Sprintf("task %q", truncateString(id, 64)) }
