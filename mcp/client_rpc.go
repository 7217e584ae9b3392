package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The client's requests: each has an id and a pending call that the
// reading goroutine (client_read.go) completes with the server's answer,
// its failure, or the end of the session.

// pendingCall is a request of ours waiting for its answer.
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

// callOptions are what a call carries besides its method and params.
// The zero value asks for nothing more.
type callOptions struct {
	// reinit lets the call, when the server has forgotten the session
	// (ErrSessionNotFound), start a new one and be sent again, once.
	reinit bool
	// progress, when set, asks for progress notifications and receives
	// them, in order, until the call returns (see WithProgress).
	progress func(*ProgressNotificationParams)
	// listenAck, for a 2026-07-28 subscriptions/listen request, receives
	// the params of the request's acknowledgement.
	listenAck chan jsontext.Value
	// headers go to the transport with the request (see
	// httpmeta.CallHeaders): a 2026-07-28 tools/call's Mcp-Param-* headers.
	headers map[string]string
	// tasks declares the tasks extension in a 2026-07-28 request's
	// client capabilities.
	tasks bool
}

type progressKey struct{}

// WithProgress returns a context whose calls ask the server for progress
// notifications (a progressToken in _meta) and deliver them to f, in
// order, until the call returns.
func WithProgress(ctx context.Context, f func(*ProgressNotificationParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// callerOptions are the options of a call the application makes with
// ctx: a forgotten session is started again, and the progress callback
// of WithProgress, if ctx has one, receives the call's progress. The
// public methods read ctx here, once; what they call is told explicitly,
// so that nothing of one call reaches the calls a handler makes with its
// context.
func callerOptions(ctx context.Context) callOptions {
	f, _ := ctx.Value(progressKey{}).(func(*ProgressNotificationParams))
	return callOptions{reinit: true, progress: f}
}

// call sends a request and waits for its response, the context's end or
// the session's. On a timeout or cancellation the server is sent
// notifications/cancelled (never for initialize, which the spec forbids).
// The request is sent again, with a new id, when the server has
// forgotten the session (with o.reinit, once, after a new handshake) and
// when a 2026-07-28 server asks for input first (with the answers, up to
// maxInputRounds times).
func (cs *ClientSession) call(ctx context.Context, method string, params, result any, o callOptions) error {
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
	for rounds := 0; ; {
		raw, err := cs.exchange(ctx, method, p, &o)
		var gone *sessionNotFound
		if o.reinit && errors.As(err, &gone) {
			o.reinit = false
			if rerr := cs.reinitialize(ctx, gone.gen); rerr != nil {
				return fmt.Errorf("mcp: %s: the server ended the session and a new one could not be started: %w", method, rerr)
			}
			continue
		}
		if err != nil {
			return err
		}
		if !cs.isPerRequest() {
			return decodeResult(method, raw, result)
		}
		next, err := cs.perRequestResult(ctx, method, p, raw, result, rounds)
		if next == nil || err != nil {
			return err
		}
		p, rounds, o.reinit = next, rounds+1, false
	}
}

// exchange sends one request, with a new id, and waits for its answer:
// the raw result, a *CallError with the server's error, or why there is
// none. A request the server refused for not knowing the session fails
// with a *sessionNotFound.
func (cs *ClientSession) exchange(ctx context.Context, method string, p []byte, o *callOptions) (jsontext.Value, error) {
	pc := &pendingCall{method: method, ch: make(chan *jsonrpc.Message, 1), fail: make(chan error, 1)}
	cs.mu.Lock()
	cs.nextID++
	id := jsonrpc.IntID(cs.nextID)
	gen := cs.gen
	cs.pending[id] = pc
	if o.listenAck != nil {
		if cs.listenAcks == nil {
			cs.listenAcks = map[string]chan jsontext.Value{}
		}
		cs.listenAcks[string(id.Raw())] = o.listenAck
	}
	var token string
	if o.progress != nil && method != methodInitialize {
		token = id.String()
		pc.progress = o.progress
		cs.progress[token] = pc
	}
	cs.mu.Unlock()
	defer cs.forget(id, token, o.listenAck != nil)
	defer pc.done.Store(true)
	req := &ClientRequest{Method: method, ID: id, Params: p, Session: cs, pc: pc, token: token, o: o, gen: gen}
	h := cs.client.handler
	if h == nil {
		h = cs.send
	}
	raw, err := h(ctx, req)
	return jsontext.Value(raw), err
}

// send is the innermost ClientHandler: it adds the session's own _meta
// members to the request's params, writes it and waits for its answer.
func (cs *ClientSession) send(ctx context.Context, req *ClientRequest) (json.RawMessage, error) {
	method, id, o := req.Method, req.ID, req.o
	p := []byte(req.Params)
	var err error
	if cs.isPerRequest() {
		p, err = cs.metaParams(p, req.token, o.tasks)
	} else if req.token != "" {
		p, err = setProgressToken(p, req.token)
	}
	if err != nil {
		return nil, err
	}
	wctx := ctx
	if o.headers != nil {
		// The one value a call puts in a context: the transport's
		// interface (ContextWriter) has no other way in.
		wctx = httpmeta.WithCallHeaders(ctx, o.headers)
	}
	if werr := cs.write(wctx, jsonrpc.AppendRequest(nil, id, method, p)); werr != nil {
		err := fmt.Errorf("mcp: sending %s: %w", method, werr)
		if ctx.Err() != nil {
			err = fmt.Errorf("mcp: %s: %w", method, context.Cause(ctx))
		}
		if errors.Is(werr, ErrSessionNotFound) {
			return nil, &sessionNotFound{gen: req.gen, err: err}
		}
		return nil, err
	}
	select {
	case msg := <-req.pc.ch:
		if msg.Error != nil {
			return nil, &CallError{Method: method, Err: msg.Error}
		}
		return json.RawMessage(msg.Result), nil
	case err := <-req.pc.fail:
		return nil, fmt.Errorf("mcp: %s: %w", method, err)
	case <-ctx.Done():
		cs.abandon(id)
		reason := "the request was cancelled"
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = "the request timed out"
		}
		if method != methodInitialize && cs.ctx.Err() == nil {
			cs.forget(id, req.token, o.listenAck != nil)
			cs.notify(context.WithoutCancel(ctx), notificationCancelled, &CancelledNotificationParams{RequestID: id.Raw(), Reason: reason})
		}
		return nil, fmt.Errorf("mcp: %s: %s: %w", method, reason, ctx.Err())
	case <-cs.ctx.Done():
		return nil, fmt.Errorf("mcp: %s: %w", method, context.Cause(cs.ctx))
	}
}

// forget removes a request's pending call, its listen acknowledgement
// and its progress token: its answer, if one comes, goes nowhere.
func (cs *ClientSession) forget(id jsonrpc.ID, token string, listenAck bool) {
	cs.mu.Lock()
	delete(cs.pending, id)
	if listenAck {
		delete(cs.listenAcks, string(id.Raw()))
	}
	if token != "" {
		delete(cs.progress, token)
	}
	cs.mu.Unlock()
}

// sessionNotFound fails a request that the server refused for not
// knowing the session (ErrSessionNotFound); gen is the generation of
// the session the request was sent in (see reinitialize).
type sessionNotFound struct {
	gen uint64
	err error
}

func (e *sessionNotFound) Error() string { return e.err.Error() }
func (e *sessionNotFound) Unwrap() error { return e.err }

// decodeResult decodes a call's result into result, which may be nil.
func decodeResult(method string, raw jsontext.Value, result any) error {
	if result == nil {
		return nil
	}
	if err := unmarshalValue(raw, result); err != nil {
		return fmt.Errorf("mcp: the server's %s result is malformed: %w", method, err)
	}
	return nil
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
	return setMetaMember(p, "progressToken", []byte(token))
}
