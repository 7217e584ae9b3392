package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Running a tool call as a task on the server, from the client: for
// tools whose Execution.TaskSupport is "required" (which refuse a plain
// call), and for long calls that should not hold one request open. Both
// designs: 2025-11-25 (params.task, then tasks/result, which waits and
// carries the server's questions) and the 2026-07-28 tasks extension
// (declared in each request; tasks/get polled, questions answered with
// tasks/update).

// TaskCallOptions configure CallToolAsTask. The zero value is a good
// default.
type TaskCallOptions struct {
	// TTL asks a 2025-11-25 server to keep the task this long; zero
	// leaves it to the server.
	TTL time.Duration
	// PollInterval is the polling interval of a 2026-07-28 task; zero
	// means the server's suggestion, within 50ms and 5s.
	PollInterval time.Duration
}

// CallToolAsTask runs the call as a task and waits for its end, which it
// returns as CallToolParams would; the server's questions meanwhile go to
// the client's handlers. If ctx ends first the task is cancelled on the
// server. A server that answers the call without a task (it may, for a
// tool with optional task support) is answered in kind. A server that
// declares no tasks gets ErrNotSupported, before anything is sent.
func (cs *ClientSession) CallToolAsTask(ctx context.Context, p *CallToolParams, o *TaskCallOptions) (*CallToolResult, error) {
	if o == nil {
		o = &TaskCallOptions{}
	}
	co := callerOptions(ctx)
	caps, _ := cs.serverCaps()
	if cs.isPerRequest() {
		if _, ok := caps.Extensions[ExtensionTasks]; !ok {
			return nil, fmt.Errorf("%w: the server does not declare the %s extension", ErrNotSupported, ExtensionTasks)
		}
		co.tasks = true
		return cs.callToolTaskPerRequest(ctx, p, o, co)
	}
	if caps.Tasks == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		return nil, fmt.Errorf("%w: the server does not declare tasks.requests.tools.call", ErrNotSupported)
	}
	return cs.callToolTaskSessionEra(ctx, p, o, co)
}

// callToolTaskSessionEra is CallToolAsTask at 2025-11-25; co are the
// options of the call that creates the task, whose progress callback
// the task's other requests share.
func (cs *ClientSession) callToolTaskSessionEra(ctx context.Context, p *CallToolParams, o *TaskCallOptions, co callOptions) (*CallToolResult, error) {
	tp := *p
	tp.Task = &TaskParams{}
	if o.TTL > 0 {
		ms := o.TTL.Milliseconds()
		tp.Task.TTL = &ms
	}
	var raw jsontext.Value
	if err := cs.request(ctx, methodToolsCall, &tp, &raw, co); err != nil {
		return nil, err
	}
	var created CreateTaskResult
	if err := unmarshalValue(raw, &created); err != nil || created.Task == nil || created.Task.TaskID == "" {
		var res CallToolResult // answered without a task
		if err := unmarshalValue(raw, &res); err != nil {
			return nil, fmt.Errorf("mcp: the server's tools/call result is malformed: %w", err)
		}
		return &res, nil
	}
	id := created.Task.TaskID
	co.reinit = false
	var res CallToolResult
	err := cs.call(ctx, methodTasksResult, &taskIDParams{TaskID: &id}, &res, co)
	if ctx.Err() != nil {
		cs.cancelTask(ctx, id, co)
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// perRequestTaskResult is a 2026-07-28 tools/call result that may be a task.
type perRequestTaskResult struct {
	task *DetailedTask
	raw  jsontext.Value
}

func (m *perRequestTaskResult) UnmarshalJSON(b []byte) error {
	m.raw = bytes.Clone(b)
	return nil
}

// callToolTaskPerRequest is CallToolAsTask at 2026-07-28; co are the
// options of the call that creates the task, whose progress callback and
// declaration of the tasks extension the task's other requests share.
func (cs *ClientSession) callToolTaskPerRequest(ctx context.Context, p *CallToolParams, o *TaskCallOptions, co callOptions) (*CallToolResult, error) {
	var first perRequestTaskResult
	create := co
	create.headers = cs.callHeaders(p)
	if err := cs.request(ctx, methodToolsCall, p, &first, create); err != nil {
		return nil, err
	}
	co.reinit = false
	if first.task == nil {
		var res CallToolResult // answered without a task
		if err := unmarshalValue(first.raw, &res); err != nil {
			return nil, fmt.Errorf("mcp: the server's tools/call result is malformed: %w", err)
		}
		return &res, nil
	}
	id := first.task.TaskID
	answered := map[string]bool{}
	d := first.task
	for {
		// The creation answer is a Task, not a DetailedTask: a task that
		// ended before it was written says so without its outcome, which
		// tasks/get then brings (at once, not after a poll interval).
		const endedEarly TaskStatus = "(ended before its creation answer)"
		status := d.Status
		if d == first.task && d.Result == nil && d.Error == nil && (status == TaskCompleted || status == TaskFailed) {
			status = endedEarly
		}
		switch status {
		case TaskCompleted:
			var res CallToolResult
			if err := unmarshalValue(d.Result, &res); err != nil {
				return nil, fmt.Errorf("mcp: the result of task %s is malformed: %w", id, err)
			}
			return &res, nil
		case TaskFailed:
			if d.Error != nil {
				return nil, &CallError{Method: methodToolsCall, Err: d.Error}
			}
			return nil, fmt.Errorf("mcp: task %s failed: %s", id, d.StatusMessage)
		case TaskCancelled:
			return nil, fmt.Errorf("mcp: task %s was cancelled on the server: %s", id, d.StatusMessage)
		case TaskInputRequired:
			responses := map[string]any{}
			for key, in := range d.InputRequests {
				if answered[key] {
					continue
				}
				r, err := cs.answerInput(ctx, in)
				if err != nil {
					cs.cancelTask(ctx, id, co)
					return nil, fmt.Errorf("mcp: answering input request %q of task %s: %w", key, id, err)
				}
				responses[key], answered[key] = r, true
			}
			if len(responses) > 0 {
				if err := cs.call(ctx, methodTasksUpdate, &struct {
					TaskID         string         `json:"taskId"`
					InputResponses map[string]any `json:"inputResponses"`
				}{id, responses}, nil, co); err != nil {
					cs.cancelTask(ctx, id, co)
					return nil, err
				}
				break // poll at once: the answers may have finished it
			}
			fallthrough
		case endedEarly:
			// fetched below at once
		default:
			wait := o.PollInterval
			if wait <= 0 {
				wait = min(max(time.Duration(d.PollIntervalMs)*time.Millisecond, 50*time.Millisecond), 5*time.Second)
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				cs.cancelTask(ctx, id, co)
				return nil, fmt.Errorf("mcp: tools/call as task %s: %w", id, context.Cause(ctx))
			}
		}
		var next DetailedTask
		if err := cs.call(ctx, methodTasksGet, &taskIDParams{TaskID: &id}, &next, co); err != nil {
			if ctx.Err() != nil {
				cs.cancelTask(ctx, id, co)
			}
			return nil, err
		}
		d = &next
	}
}

// cancelTask asks the server to cancel a task whose caller gave up; what
// it answers changes nothing for the caller. co are the options of the
// task's other requests.
func (cs *ClientSession) cancelTask(ctx context.Context, id string, co callOptions) {
	if cs.ctx.Err() != nil {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var rpcErr *jsonrpc.Error
	if err := cs.call(cctx, methodTasksCancel, &taskIDParams{TaskID: &id}, nil, co); err != nil && !errors.As(err, &rpcErr) {
		cs.logger.Debug("mcp: could not cancel a task on the server", "task", id, "error", err)
	}
}
