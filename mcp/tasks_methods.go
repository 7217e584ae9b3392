package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The tasks/* methods. Both eras have tasks/get and tasks/cancel, with
// different shapes; tasks/result and tasks/list are 2025-11-25 only,
// tasks/update is the extension's only.
const (
	methodTasksGet    = "tasks/get"
	methodTasksResult = "tasks/result"
	methodTasksList   = "tasks/list"
	methodTasksCancel = "tasks/cancel"
	methodTasksUpdate = "tasks/update"

	notificationTasksStatus = "notifications/tasks/status" // 2025-11-25
	notificationTasks       = "notifications/tasks"        // the extension
)

type taskIDParams struct {
	TaskID *string `json:"taskId"`
}

// findTask reads params.taskId and finds the caller's task: -32602 for a
// missing id and for a task that is unknown, expired or someone else's.
func (s *Server) findTask(ctx context.Context, req *Request) (*task, error) {
	if req.perRequest != nil {
		if _, ok := req.perRequest.caps.Extensions[ExtensionTasks]; !ok {
			return nil, missingTasksExtension(req.Method)
		}
	}
	var p taskIDParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	if p.TaskID == nil || *p.TaskID == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: taskId is required")
	}
	t := s.tasks.lookup(*p.TaskID, req, PrincipalFrom(ctx))
	if t == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s is unknown or has expired", describeTask(*p.TaskID))
	}
	return t, nil
}

func missingTasksExtension(method string) *jsonrpc.Error {
	return jsonrpc.Errorf(CodeMissingRequiredClientCapability, "Missing required client capability: %s needs the %s extension in the request's client capabilities", method, ExtensionTasks).
		WithData(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtensionTasks: map[string]any{}}}})
}

// tasksGet: the Task (session-era) or the DetailedTask (the extension).
func (s *Server) tasksGet(ctx context.Context, req *Request) (any, error) {
	t, err := s.findTask(ctx, req)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perRequest {
		return t.detailed(true), nil
	}
	return t.sessionEraWire(), nil
}

// tasksCancel: the extension acknowledges every cancel of a known task
// (cancellation is cooperative); 2025-11-25 refuses a finished task and
// returns the cancelled Task.
func (s *Server) tasksCancel(ctx context.Context, req *Request) (any, error) {
	t, err := s.findTask(ctx, req)
	if err != nil {
		return nil, err
	}
	// The status is cancelled before the answer, and stays so whatever
	// the handler does after.
	ok := s.setTaskStatus(t, TaskCancelled, "The client cancelled the task.")
	if ok {
		t.cancel(errTaskCancelled)
	}
	if t.perRequest {
		return emptyResult{}, nil
	}
	if !ok {
		t.mu.Lock()
		status := t.status
		t.mu.Unlock()
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s has already ended (%s) and cannot be cancelled", describeTask(t.id), status)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessionEraWire(), nil
}

var errTaskCancelled = jsonrpc.Errorf(jsonrpc.CodeInternalError, "the client cancelled the task")

// tasksResult (2025-11-25) waits for the task to end and returns what the
// call would have returned, tagged with the task. While it waits, the
// handler's requests to the client travel on its stream.
func (s *Server) tasksResult(ctx context.Context, req *Request) (any, error) {
	if req.perRequest != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s does not exist in protocol revision %s; the result is in tasks/get", req.Method, Version20260728)
	}
	t, err := s.findTask(ctx, req)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.waiters = append(t.waiters, req)
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.waiters = slices.DeleteFunc(t.waiters, func(r *Request) bool { return r == req })
		t.mu.Unlock()
	}()
	for {
		t.mu.Lock()
		status, wake := t.status, t.changed
		res, rpcErr := t.result, t.err
		t.mu.Unlock()
		switch {
		case status == TaskCancelled:
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: %s was cancelled before it finished", describeTask(t.id)).
				WithData(map[string]any{"_meta": map[string]any{MetaRelatedTask: map[string]string{"taskId": t.id}}})
		case status == TaskFailed && rpcErr != nil:
			return nil, rpcErr
		case status == TaskCompleted, status == TaskFailed:
			return encoded(withResultMeta(res, t.id)), nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// withResultMeta adds the related-task _meta to an encoded result.
func withResultMeta(res []byte, id string) []byte {
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(res, &m) != nil {
		return res
	}
	meta := map[string]jsontext.Value{}
	if mb := m["_meta"]; len(mb) > 0 && mb[0] == '{' {
		jsonv2.Unmarshal(mb, &meta)
	}
	meta[MetaRelatedTask], _ = marshal(map[string]string{"taskId": id})
	m["_meta"], _ = marshal(meta)
	out, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		return res
	}
	return out
}

// ListTasksResult is the result of tasks/list (2025-11-25).
type ListTasksResult struct {
	Tasks      []*Task `json:"tasks"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// tasksList (2025-11-25) pages through the caller's tasks, oldest first.
// A cursor names the creation time and id of the last task returned.
func (s *Server) tasksList(ctx context.Context, req *Request) (any, error) {
	if req.perRequest != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s does not exist in protocol revision %s", req.Method, Version20260728)
	}
	var p PaginatedParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	ts := s.tasks.list(req, PrincipalFrom(ctx))
	slices.SortFunc(ts, func(a, b *task) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	start := 0
	if p.Cursor != "" {
		at, id, ok := parseTaskCursor(p.Cursor)
		if !ok {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: the cursor is not one this server issued; list again without a cursor")
		}
		start = len(ts)
		for i, t := range ts {
			if n := t.created.UnixNano(); n > at || n == at && t.id > id {
				start = i
				break
			}
		}
	}
	end := min(start+s.opts.PageSize, len(ts))
	out := &ListTasksResult{Tasks: make([]*Task, 0, end-start)}
	for _, t := range ts[start:end] {
		t.mu.Lock()
		out.Tasks = append(out.Tasks, t.sessionEraWire())
		t.mu.Unlock()
	}
	if end < len(ts) {
		last := ts[end-1]
		out.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(last.created.UnixNano(), 10) + "/" + last.id))
	}
	return out, nil
}

func parseTaskCursor(c string) (int64, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	at, id, ok := strings.Cut(string(b), "/")
	n, err := strconv.ParseInt(at, 10, 64)
	return n, id, ok && err == nil
}

// tasksUpdate (the extension) delivers answers to a task's input
// requests. Keys that are unknown or already answered are ignored; the
// task resumes once every outstanding request is answered.
func (s *Server) tasksUpdate(ctx context.Context, req *Request) (any, error) {
	if req.perRequest == nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: %s exists only in protocol revision %s", req.Method, Version20260728)
	}
	t, err := s.findTask(ctx, req)
	if err != nil {
		return nil, err
	}
	var p struct {
		InputResponses jsontext.Value `json:"inputResponses"`
	}
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	var in map[string]jsontext.Value
	if len(p.InputResponses) == 0 || p.InputResponses[0] != '{' || jsonv2.Unmarshal(p.InputResponses, &in) != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: inputResponses must be an object mapping each input request's key to its result")
	}
	t.mu.Lock()
	changed := false
	for k, v := range in {
		if _, ok := t.pending[k]; !ok || len(v) == 0 || v[0] != '{' {
			continue
		}
		delete(t.pending, k)
		t.answers[k] = bytes.Clone(v)
		changed = true
	}
	if changed {
		status := t.status
		if len(t.pending) == 0 && !status.Terminal() {
			status = TaskWorking
		}
		t.change(status, t.message)
	}
	t.mu.Unlock()
	if changed {
		s.taskChanged(t)
	}
	return emptyResult{}, nil
}

// taskChanged tells the client about a task's new state: a 2025-11-25
// session gets notifications/tasks/status, listen streams that asked for
// the task get notifications/tasks.
func (s *Server) taskChanged(t *task) {
	t.mu.Lock()
	perRequest := t.perRequest
	var p []byte
	if perRequest {
		p, _ = marshal(t.detailed(true))
	} else {
		p, _ = marshal(t.sessionEraWire())
	}
	t.mu.Unlock()
	if !perRequest {
		if ss := t.origin; sessionState(ss.state.Load()) == stateOperating {
			ss.out.WriteMessage(jsonrpc.AppendNotification(nil, notificationTasksStatus, p))
		}
		return
	}
	s.mu.Lock()
	var ls []*listener
	for l := range s.listeners {
		if l.tasks[t.id] {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	for _, l := range ls {
		l.send(notificationTasks, string(bytes.TrimSuffix(bytes.TrimPrefix(p, []byte("{")), []byte("}"))))
	}
}
