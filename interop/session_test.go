package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// session is one client's connection to one server, whatever the client
// library: the scenarios are written once against it, and each client
// (ours, the Go SDK's, mcp-go's, the TypeScript SDK's through a Node
// driver) has an adapter.
type session interface {
	// Negotiated is the revision the client says the session runs at
	// ("" if it does not say).
	Negotiated() string
	ServerName() string
	ListTools(ctx context.Context) ([]string, error)
	CallTool(ctx context.Context, name string, args map[string]any) (*toolResult, error)
	// CallToolProgress asks for progress notifications and returns them
	// with the result, in the order received.
	CallToolProgress(ctx context.Context, name string, args map[string]any) (*toolResult, []progressEvent, error)
	// CancelAtFirstProgress calls a tool with a progress token and cancels
	// the call (the client library's own way: a context, an AbortSignal)
	// as soon as the first progress notification arrives, so the server has
	// started. It returns nil once the call has failed as cancelled.
	CancelAtFirstProgress(ctx context.Context, name string, args map[string]any) error
	ReadResource(ctx context.Context, uri string) ([]string, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) ([]string, error)
	Ping(ctx context.Context) error
	Close() error
}

// toolResult is what the scenarios look at in a tools/call result.
type toolResult struct {
	Texts   []string
	IsError bool
}

func (r *toolResult) text() string {
	if r == nil || len(r.Texts) == 0 {
		return ""
	}
	return r.Texts[0]
}

// decode parses the first text block as JSON.
func (r *toolResult) decode(v any) error {
	if r == nil || len(r.Texts) == 0 {
		return errors.New("the result has no text content")
	}
	if err := json.Unmarshal([]byte(r.Texts[0]), v); err != nil {
		return fmt.Errorf("the result's text is not the expected JSON (%v): %.300s", err, r.Texts[0])
	}
	return nil
}

type progressEvent struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// progressRouter hands progress notifications to the call that asked for
// them, for client libraries that deliver all of them to one handler.
type progressRouter struct {
	mu    sync.Mutex
	next  int
	calls map[string]func(progressEvent)
}

func (r *progressRouter) add(f func(progressEvent)) (token string, remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[string]func(progressEvent){}
	}
	r.next++
	token = fmt.Sprintf("interop-%d", r.next)
	r.calls[token] = f
	return token, func() {
		r.mu.Lock()
		delete(r.calls, token)
		r.mu.Unlock()
	}
}

func (r *progressRouter) deliver(token any, ev progressEvent) {
	r.mu.Lock()
	f := r.calls[fmt.Sprint(token)]
	r.mu.Unlock()
	if f != nil {
		f(ev)
	}
}

// collect gathers progress events for one call.
type collect struct {
	mu     sync.Mutex
	events []progressEvent
}

func (c *collect) add(ev progressEvent) {
	c.mu.Lock()
	c.events = append(c.events, ev)
	c.mu.Unlock()
}

// settle waits until no event has arrived for 50 ms (at most 500 ms),
// for client libraries that run notification handlers apart from the
// reader: there the response can overtake the last progress notification
// although the server sent it first (the Go SDK queues notifications for a
// handler goroutine and hands responses to the caller at once).
func (c *collect) settle() {
	n := -1
	for i := 0; i < 10; i++ {
		c.mu.Lock()
		cur := len(c.events)
		c.mu.Unlock()
		if cur == n {
			return
		}
		n = cur
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *collect) get() []progressEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]progressEvent(nil), c.events...)
}

// cancelAtFirst runs call with a context that is cancelled by the first
// progress event, and checks that the call then fails as cancelled.
// register must arrange for the events of this call to reach onProgress.
func cancelAtFirst(ctx context.Context, call func(ctx context.Context, onProgress func(progressEvent)) error) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var once sync.Once
	got := make(chan struct{})
	err := call(cctx, func(progressEvent) {
		once.Do(func() {
			close(got)
			cancel()
		})
	})
	select {
	case <-got:
	default:
		return fmt.Errorf("no progress notification arrived, so nothing was cancelled (call returned %v)", err)
	}
	if err == nil {
		return errors.New("the call returned a result after it was cancelled")
	}
	if ctx.Err() != nil {
		return fmt.Errorf("the test's own deadline passed: %w", err)
	}
	return nil
}

// callTimeout bounds each call of a scenario: all are quick, and a call
// a peer leaves unanswered should fail its pair soon rather than hold the
// run (the client libraries' own defaults are a minute or more).
const callTimeout = 5 * time.Second

func callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, callTimeout)
}

// waitTimeout is how long a cancelled call may take to return.
const waitTimeout = 10 * time.Second
