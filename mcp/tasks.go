package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Tasks run a long tool call in the background: the client gets a task at
// once and polls it for the result. Both designs are served, each to its
// own era: the 2025-11-25 core tasks (the client asks with params.task;
// tasks/get, tasks/result, tasks/list, tasks/cancel) in sessions,
// and the io.modelcontextprotocol/tasks extension (the server decides;
// tasks/get, tasks/update, tasks/cancel) for 2026-07-28 requests. A tool opts
// in with Tool.Execution.TaskSupport "optional" or "required"; its handler
// is the same either way.
//
// Tasks live in the Server's memory, bound to the caller's principal (and,
// for an anonymous session-era caller, to its session), with unguessable ids.

// ExtensionTasks is the key of the tasks extension in capabilities.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// MetaRelatedTask ties a 2025-11-25 message to the task it belongs to.
const MetaRelatedTask = "io.modelcontextprotocol/related-task"

// Task support values of ToolExecution.TaskSupport.
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// TaskStatus is where a task is in its life.
type TaskStatus string

const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether the status is final.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskOptions configure tasks. The zero value is a good default.
type TaskOptions struct {
	// TTL is how long a task is kept from its creation, and again from
	// when it ends, when the client names none. Zero means one hour. A
	// task still running when its TTL passes is cancelled.
	TTL time.Duration
	// MaxTTL caps the TTL a 2025-11-25 client may ask for. Zero means 24
	// hours.
	MaxTTL time.Duration
	// PollInterval is the polling interval suggested to clients. Zero
	// means one second.
	PollInterval time.Duration
	// MaxRunning bounds the unfinished tasks of one caller; past it a
	// task-creating call is refused. Zero means 64.
	MaxRunning int
}

func (o *TaskOptions) ttl() time.Duration {
	if o.TTL > 0 {
		return o.TTL
	}
	return time.Hour
}

func (o *TaskOptions) maxTTL() time.Duration {
	if o.MaxTTL > 0 {
		return o.MaxTTL
	}
	return 24 * time.Hour
}

func (o *TaskOptions) pollInterval() time.Duration {
	if o.PollInterval > 0 {
		return o.PollInterval
	}
	return time.Second
}

func (o *TaskOptions) maxRunning() int {
	if o.MaxRunning > 0 {
		return o.MaxRunning
	}
	return 64
}

// TaskParams are the params.task of a 2025-11-25 task-augmented request.
type TaskParams struct {
	TTL *int64 `json:"ttl,omitzero"` // milliseconds
}

// Task is a task as the 2025-11-25 revision sends it.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	CreatedAt     string     `json:"createdAt"`
	LastUpdatedAt string     `json:"lastUpdatedAt"`
	TTL           *int64     `json:"ttl"` // milliseconds; null is unlimited
	PollInterval  int64      `json:"pollInterval,omitzero"`
}

// CreateTaskResult answers a 2025-11-25 task-augmented request.
type CreateTaskResult struct {
	Task *Task `json:"task"`
	Meta Meta  `json:"_meta,omitempty"`
}

// DetailedTask is a task as the tasks extension sends it: on tasks/get,
// and (without the status-specific members) as the result that created
// it.
type DetailedTask struct {
	TaskID         string                   `json:"taskId"`
	Status         TaskStatus               `json:"status"`
	StatusMessage  string                   `json:"statusMessage,omitempty"`
	CreatedAt      string                   `json:"createdAt"`
	LastUpdatedAt  string                   `json:"lastUpdatedAt"`
	TTLMs          *int64                   `json:"ttlMs"` // null is unlimited
	PollIntervalMs int64                    `json:"pollIntervalMs,omitzero"`
	InputRequests  map[string]*InputRequest `json:"inputRequests,omitempty"`
	Result         json.RawMessage          `json:"result,omitzero"`
	Error          *jsonrpc.Error           `json:"error,omitzero"`
}

// task is one task in the Server's memory.
type task struct {
	id         string
	owner      string         // the principal
	session    *ServerSession // set for an anonymous session-era caller
	origin     *ServerSession // the session that created it
	perRequest bool
	rev        revision
	created    time.Time
	ttl        time.Duration
	poll       time.Duration

	cancel context.CancelCauseFunc

	mu      sync.Mutex
	status  TaskStatus
	message string
	updated time.Time
	result  jsontext.Value // the tool's result, encoded for rev
	err     *jsonrpc.Error
	// Per-request input: the requests not yet answered, and the answers in.
	pending map[string]*InputRequest
	answers map[string]jsontext.Value
	// asking counts a session-era task's server-to-client requests in flight.
	asking int
	// waiters are blocked session-era tasks/result requests: the handler's
	// requests to the client travel on the newest one's stream.
	waiters []*Request
	// changed is closed and replaced on every change.
	changed chan struct{}
	expiry  *time.Timer
	// announced is closed once the answer creating the task is written:
	// a session-era task's messages wait for it, so that a client never hears
	// of a task (a request tagged with it) before it has its id.
	announced    chan struct{}
	announceOnce sync.Once
}

func (t *task) announce() { t.announceOnce.Do(func() { close(t.announced) }) }

func newTaskID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// change records a new status under t.mu and wakes the waiters.
func (t *task) change(status TaskStatus, message string) {
	t.status, t.message, t.updated = status, message, time.Now()
	close(t.changed)
	t.changed = make(chan struct{})
}

const taskTimeFormat = "2006-01-02T15:04:05.000Z07:00"

func (t *task) ttlMs() *int64 {
	if t.ttl <= 0 {
		return nil
	}
	ms := t.ttl.Milliseconds()
	return &ms
}

// sessionEraWire is the 2025-11-25 Task; t.mu is held.
func (t *task) sessionEraWire() *Task {
	return &Task{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(taskTimeFormat), LastUpdatedAt: t.updated.UTC().Format(taskTimeFormat),
		TTL: t.ttlMs(), PollInterval: t.poll.Milliseconds(),
	}
}

// detailed is the extension's DetailedTask; t.mu is held. full adds the
// status-specific members (tasks/get and notifications, not creation).
func (t *task) detailed(full bool) *DetailedTask {
	d := &DetailedTask{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(taskTimeFormat), LastUpdatedAt: t.updated.UTC().Format(taskTimeFormat),
		TTLMs: t.ttlMs(), PollIntervalMs: t.poll.Milliseconds(),
	}
	if !full {
		return d
	}
	switch t.status {
	case TaskInputRequired:
		d.InputRequests = t.pending
	case TaskCompleted:
		d.Result = json.RawMessage(t.result)
	case TaskFailed:
		d.Error = t.err
	}
	return d
}

// taskStore holds a Server's tasks.
type taskStore struct {
	mu      sync.Mutex
	byID    map[string]*task
	running map[string]int // unfinished tasks by owner
}

// add stores t before anyone is told its id, so that a tasks/get right
// after the creating result finds it.
func (ts *taskStore) add(t *task, limit int) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID == nil {
		ts.byID, ts.running = map[string]*task{}, map[string]int{}
	}
	if ts.running[t.owner] >= limit {
		return false
	}
	ts.running[t.owner]++
	ts.byID[t.id] = t
	return true
}

// ended is called once when t reaches a terminal status.
func (ts *taskStore) ended(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.running[t.owner]--; ts.running[t.owner] <= 0 {
		delete(ts.running, t.owner)
	}
}

func (ts *taskStore) remove(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID[t.id] == t {
		delete(ts.byID, t.id)
	}
}

// lookup finds a task of the caller's era that the caller may see. Every
// other task is reported as unknown, so ids cannot be probed.
func (ts *taskStore) lookup(id string, req *Request, owner string) *task {
	ts.mu.Lock()
	t := ts.byID[id]
	ts.mu.Unlock()
	if t == nil || t.perRequest != (req.perRequest != nil) || t.owner != owner || (t.session != nil && t.session != req.Session) {
		return nil
	}
	return t
}

// list returns the caller's session-era tasks, oldest first.
func (ts *taskStore) list(req *Request, owner string) []*task {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []*task
	for _, t := range ts.byID {
		if !t.perRequest && t.owner == owner && (t.session == nil || t.session == req.Session) {
			out = append(out, t)
		}
	}
	return out
}
