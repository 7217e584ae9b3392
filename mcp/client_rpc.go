package mcp

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The client's requests: each has an id and a pending call that the
// reading goroutine (client_read.go) completes with the server's answer,
// its failure, or the end of the session.

type pendingCall struct {
	method   string
	ch       chan *jsonrpc.Message // buffered 1
	fail     chan error            // buffered 1
	progress func(*ProgressNotificationParams)
	done     atomic.Bool // returned: no more progress
}

func (cs *ClientSession) write(ctx context.Context, msg []byte) error {
	if cw, ok := cs.conn.(ContextWriter); ok {
		return cw.WriteMessageContext(ctx, msg)
	}
	return cs.conn.WriteMessage(msg)
}

func (cs *ClientSession) notify(ctx context.Context, method string, params any) error {
	if cs.Bare() {
		// A bare server reads every line as a request, and would answer
		// a notification with an error the client cannot place.
		return nil
	}
	var p []byte
	if params != nil {
		var err error
		if p, err = marshal(params); err != nil {
			return err
		}
	}
	return cs.write(ctx, jsonrpc.AppendNotification(nil, method, p))
}

type progressKey struct{}

// WithProgress returns a context whose calls ask the server for progress
// notifications (a progressToken in _meta) and deliver them to f, in
// order, until the call returns.
func WithProgress(ctx context.Context, f func(*ProgressNotificationParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// call sends a request and waits for its response, the context's end or
// the session's. On a timeout or cancellation the server is sent
// notifications/cancelled (never for initialize, which the spec forbids).
func (cs *ClientSession) call(ctx context.Context, method string, params, result any, retry bool) error {
	if err := context.Cause(cs.ctx); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok && cs.client.opts.RequestTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cs.client.opts.RequestTimeout)
		defer cancel()
	}
	p, err := encodeParams(params)
	if err != nil {
		return err
	}
	pc := &pendingCall{method: method, ch: make(chan *jsonrpc.Message, 1), fail: make(chan error, 1)}
	cs.mu.Lock()
	cs.nextID++
	id := jsonrpc.IntID(cs.nextID)
	gen := cs.gen
	cs.pending[id] = pc
	ackCh, _ := ctx.Value(listenAckKey{}).(chan jsontext.Value)
	if ackCh != nil {
		if cs.listenAcks == nil {
			cs.listenAcks = map[string]chan jsontext.Value{}
		}
		cs.listenAcks[string(id.Raw())] = ackCh
	}
	var token string
	if f, _ := ctx.Value(progressKey{}).(func(*ProgressNotificationParams)); f != nil && method != methodInitialize {
		token = id.String()
		pc.progress = f
		cs.progress[token] = pc
	}
	cs.mu.Unlock()
	forget := func() {
		cs.mu.Lock()
		delete(cs.pending, id)
		if ackCh != nil {
			delete(cs.listenAcks, string(id.Raw()))
		}
		if token != "" {
			delete(cs.progress, token)
		}
		cs.mu.Unlock()
	}
	defer forget()
	defer pc.done.Store(true)
	if cs.isPerRequest() {
		if p, err = cs.metaParams(ctx, p, token); err != nil {
			return err
		}
	} else if token != "" {
		if p, err = setProgressToken(p, token); err != nil {
			return err
		}
	}
	if err := cs.write(ctx, jsonrpc.AppendRequest(nil, id, method, p)); err != nil {
		if retry && errors.Is(err, ErrSessionNotFound) {
			forget()
			if rerr := cs.reinitialize(ctx, gen); rerr != nil {
				return fmt.Errorf("mcp: %s: the server ended the session and a new one could not be started: %w", method, rerr)
			}
			return cs.call(ctx, method, params, result, false)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("mcp: %s: %w", method, context.Cause(ctx))
		}
		return fmt.Errorf("mcp: sending %s: %w", method, err)
	}
	select {
	case msg := <-pc.ch:
		if msg.Error != nil {
			return &CallError{Method: method, Err: msg.Error}
		}
		if cs.isPerRequest() {
			return cs.perRequestResult(ctx, method, params, msg.Result, result)
		}
		if result == nil {
			return nil
		}
		if err := unmarshalValue(msg.Result, result); err != nil {
			return fmt.Errorf("mcp: the server's %s result is malformed: %w", method, err)
		}
		return nil
	case err := <-pc.fail:
		return fmt.Errorf("mcp: %s: %w", method, err)
	case <-ctx.Done():
		cs.abandon(id)
		reason := "the request was cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "the request timed out"
		}
		if method != methodInitialize && cs.ctx.Err() == nil {
			forget()
			cs.notify(context.WithoutCancel(ctx), notificationCancelled, &CancelledNotificationParams{RequestID: id.Raw(), Reason: reason})
		}
		return fmt.Errorf("mcp: %s: %s: %w", method, reason, ctx.Err())
	case <-cs.ctx.Done():
		return fmt.Errorf("mcp: %s: %w", method, context.Cause(cs.ctx))
	}
}

// CallError is a JSON-RPC error the server answered a call with.
type CallError struct {
	Method string
	Err    *jsonrpc.Error
}

func (e *CallError) Error() string {
	return fmt.Sprintf("mcp: %s: the server answered with error %d: %s", e.Method, e.Err.Code, e.Err.Message)
}

func (e *CallError) Unwrap() error { return e.Err }

func encodeParams(params any) ([]byte, error) {
	// A typed nil pointer in an interface is not == nil, and would go on
	// the wire as "params":null, which strict servers (the TypeScript SDK
	// among them) reject. Absent is what a nil pointer means.
	if params == nil {
		return nil, nil
	}
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	p, err := marshal(params)
	if err != nil {
		return nil, err
	}
	if string(p) == "null" {
		return nil, nil
	}
	return p, nil
}

// setProgressToken adds _meta.progressToken to encoded params.
func setProgressToken(p []byte, token string) ([]byte, error) {
	if out, ok := withMeta(p, []byte(`"progressToken":`+token)); ok {
		return out, nil
	}
	var obj map[string]any
	if len(p) > 0 {
		if err := unmarshalValue(p, &obj); err != nil {
			return nil, err
		}
	}
	if obj == nil {
		obj = map[string]any{}
	}
	meta, _ := obj["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["progressToken"] = jsontext.Value(token)
	obj["_meta"] = meta
	return marshal(obj)
}
