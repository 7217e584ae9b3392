package mcp

import (
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The server's notifications: progress for a call's callback, the rest
// for the ClientOptions handlers, which run in order on a goroutine of
// their own so that the reader never waits for them.

func (cs *ClientSession) handleNotification(msg *jsonrpc.Message) {
	opts := &cs.client.opts
	ctx := cs.ctx
	var run func()
	switch msg.Method {
	case notificationCancelled:
		var p CancelledNotificationParams
		if unmarshalParams(msg.Params, &p) == nil && len(p.RequestID) > 0 {
			var id jsonrpc.ID
			if id.UnmarshalJSON(p.RequestID) == nil {
				cs.mu.Lock()
				cancel := cs.inbound[id]
				cs.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
		return
	case notificationProgress:
		var p ProgressNotificationParams
		if err := unmarshalParams(msg.Params, &p); err != nil {
			cs.logger.Debug("mcp: dropped a malformed progress notification", "error", err)
			return
		}
		cs.mu.Lock()
		pc := cs.progress[string(p.ProgressToken)]
		cs.mu.Unlock()
		switch {
		case pc != nil:
			run = func() {
				if !pc.done.Load() {
					pc.progress(&p)
				}
			}
		case opts.ProgressHandler != nil:
			run = func() { opts.ProgressHandler(ctx, cs, &p) }
		}
	case notificationMessage:
		if opts.LoggingMessageHandler == nil {
			return
		}
		var p LoggingMessageParams
		if err := unmarshalParams(msg.Params, &p); err != nil {
			cs.logger.Debug("mcp: dropped a malformed log notification", "error", err)
			return
		}
		run = func() { opts.LoggingMessageHandler(ctx, cs, &p) }
	case notificationSubscriptionsAcked:
		if cs.listenAcked(msg.Params) {
			return
		}
		cs.mu.Lock()
		if cs.acked != nil {
			close(cs.acked)
			cs.acked = nil
		}
		cs.mu.Unlock()
	case notificationToolsListChanged:
		if h := opts.ToolListChangedHandler; h != nil {
			run = func() { h(ctx, cs) }
		}
	case notificationPromptsListChanged:
		if h := opts.PromptListChangedHandler; h != nil {
			run = func() { h(ctx, cs) }
		}
	case notificationResourcesListChanged:
		if h := opts.ResourceListChangedHandler; h != nil {
			run = func() { h(ctx, cs) }
		}
	case notificationResourceUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		if h := opts.ResourceUpdatedHandler; h != nil && unmarshalParams(msg.Params, &p) == nil {
			run = func() { h(ctx, cs, p.URI) }
		}
	case notificationElicitationComplete:
		var p struct {
			ElicitationID string `json:"elicitationId"`
		}
		if h := opts.ElicitationCompleteHandler; h != nil && unmarshalParams(msg.Params, &p) == nil {
			run = func() { h(ctx, cs, p.ElicitationID) }
		}
	}
	if run != nil && !cs.notes.push(run, false) {
		cs.logger.Warn("mcp: dropped a notification: its handlers are too far behind", "method", msg.Method)
	}
}

func (cs *ClientSession) runNotifications() {
	for {
		f, ok := cs.notes.pop()
		if !ok {
			return
		}
		func() {
			defer func() {
				if v := recover(); v != nil {
					cs.logger.Error("mcp: a notification handler panicked", "panic", v, "stack", stack())
				}
			}()
			f()
		}()
	}
}

// handlerQueue runs notification handlers in order on one goroutine
// without ever blocking the reader: a handler may wait on a call whose
// response the reader must still deliver.
type handlerQueue struct {
	mu     sync.Mutex
	items  []func()
	closed bool
	signal chan struct{}
}

// maxQueuedNotifications bounds what a flooding server can make us hold.
const maxQueuedNotifications = 10000

func newHandlerQueue() *handlerQueue { return &handlerQueue{signal: make(chan struct{}, 1)} }

// push queues f; past the bound only must-run work (a response) is kept.
func (q *handlerQueue) push(f func(), must bool) bool {
	q.mu.Lock()
	if !must && len(q.items) >= maxQueuedNotifications {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, f)
	q.mu.Unlock()
	q.wake()
	return true
}

func (q *handlerQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *handlerQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wake()
}

// pop returns the next handler, waiting for one; false once closed and
// drained.
func (q *handlerQueue) pop() (func(), bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			f := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return f, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.signal
	}
}
