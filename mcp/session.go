package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/internal/sched"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

type sessionState int32

const (
	stateCreated      sessionState = iota // waiting for initialize
	stateInitializing                     // initialize answered, waiting for notifications/initialized
	stateOperating
	stateClosed
)

// ErrSessionClosed is returned by calls on a session that has ended.
var ErrSessionClosed = errors.New("mcp: session closed")

// SessionOptions configure a ServerSession.
type SessionOptions struct {
	// ID names the session (the HTTP transport's Mcp-Session-Id); it is
	// also used in logs.
	ID string
	// Initialized, when set, starts the session as if the client had
	// already initialized with these params: for stateless HTTP, where
	// every request stands alone. An unsupported version is read as
	// 2025-03-26, the revision a client that names none is assumed to use.
	Initialized *InitializeParams
	// State restores what the client set in the session's life elsewhere
	// (on another replica of the server): its log level and resource
	// subscriptions.
	State *SessionState
	// StateChanged, when set, is called after the client changes the
	// session's [SessionState] (logging/setLevel, resources/subscribe,
	// resources/unsubscribe), before the request is answered: a
	// transport that shares sessions among replicas saves it there.
	StateChanged func(*ServerSession)
	// RequestIDPrefix, when set, makes the ids of the session's requests
	// to the client strings that start with it ("abc.1", "abc.2"), so
	// that whichever replica receives the client's answer can tell which
	// replica asked. Default: integer ids. The ids of the tasks its
	// requests create start with it too, so that a replica polling a task
	// can tell which replica runs it.
	RequestIDPrefix string
}

// SessionState is what a client sets in its session after initialize and
// expects to last: its log level and its resource subscriptions.
type SessionState struct {
	LogLevel      LoggingLevel `json:"logLevel,omitempty"`
	Subscriptions []string     `json:"subscriptions,omitempty"`
}

// ServerSession is one client's connection to a Server: its negotiated
// revision and capabilities, its requests in flight, and its subscriptions.
type ServerSession struct {
	server *Server
	out    MessageWriter
	id     string
	logger *slog.Logger

	draining  chan struct{} // closed by Drain
	drainOnce sync.Once

	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc

	state    atomic.Int32
	requests *sched.Group // the requests in flight, and their bound

	mu       sync.Mutex
	rev      revision
	params   *InitializeParams
	caps     ServerCapabilities
	logLevel LoggingLevel
	subs     map[string]struct{}
	inflight map[jsonrpc.ID]*Request
	pending  map[jsonrpc.ID]chan *jsonrpc.Message
	nextID   int64
	idPrefix string
	changed  func(*ServerSession)
}

// NewSession starts a session whose unsolicited messages (list_changed,
// resource updates, server-to-client requests made outside any request)
// are written to out.
func (s *Server) NewSession(out MessageWriter, opts *SessionOptions) *ServerSession {
	ss := &ServerSession{
		draining: make(chan struct{}),
		server:   s,
		out:      out,
		requests: sched.NewGroup(s.opts.MaxConcurrentRequests),
		subs:     map[string]struct{}{},
		inflight: map[jsonrpc.ID]*Request{},
		pending:  map[jsonrpc.ID]chan *jsonrpc.Message{},
	}
	if opts != nil {
		ss.id, ss.idPrefix, ss.changed = opts.ID, opts.RequestIDPrefix, opts.StateChanged
		if opts.State != nil {
			ss.setStateLocked(*opts.State)
		}
	}
	ss.logger = s.logger
	if ss.id != "" {
		ss.logger = s.logger.With("session", ss.id)
	}
	ss.ctx, ss.cancel = context.WithCancel(context.Background())
	if opts != nil && opts.Initialized != nil {
		rev, ok := parseRevision(opts.Initialized.ProtocolVersion)
		if !ok {
			rev = rev20250326
		}
		ss.rev, ss.params, ss.caps = rev, opts.Initialized, s.capabilities(rev)
		ss.state.Store(int32(stateOperating))
	}
	s.offerView(out)
	s.addSession(ss)
	return ss
}

// State returns what the client has set in the session.
func (ss *ServerSession) State() SessionState {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	st := SessionState{LogLevel: ss.logLevel}
	for uri := range ss.subs {
		st.Subscriptions = append(st.Subscriptions, uri)
	}
	slices.Sort(st.Subscriptions)
	return st
}

// SetState replaces what the client has set in the session with st, as
// another replica of the server reported it. It does not call
// SessionOptions.StateChanged.
func (ss *ServerSession) SetState(st SessionState) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.setStateLocked(st)
}

func (ss *ServerSession) setStateLocked(st SessionState) {
	ss.logLevel = st.LogLevel
	clear(ss.subs)
	for _, uri := range st.Subscriptions {
		ss.subs[uri] = struct{}{}
	}
}

// stateChanged tells SessionOptions.StateChanged.
func (ss *ServerSession) stateChanged() {
	if ss.changed != nil {
		ss.changed(ss)
	}
}

// ID returns the session's id, or "" for an unnamed session.
func (ss *ServerSession) ID() string { return ss.id }

// ProtocolVersion returns the negotiated revision, or "" before initialize.
func (ss *ServerSession) ProtocolVersion() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.rev.String()
}

// InitializeParams returns what the client sent in initialize, or nil
// before it.
func (ss *ServerSession) InitializeParams() *InitializeParams {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.params
}

func (ss *ServerSession) clientCaps() *ClientCapabilities {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.params == nil {
		return &ClientCapabilities{}
	}
	return &ss.params.Capabilities
}

func (ss *ServerSession) revision() revision {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.rev
}

// Done returns a channel closed when the session ends.
func (ss *ServerSession) Done() <-chan struct{} { return ss.ctx.Done() }

// AfterClose arranges for f to run in its own goroutine once the session
// has ended, as [context.AfterFunc] does, without a goroutine waiting
// until then; stop cancels it. Middleware uses it for what lasts as long
// as a session (its duration in metrics, say), where
// [ServerOptions.SessionClosedHandler] belongs to the server's owner.
func (ss *ServerSession) AfterClose(f func()) (stop func() bool) {
	return context.AfterFunc(ss.ctx, f)
}

// Close ends the session: requests in flight are cancelled and calls to
// the client fail with ErrSessionClosed.
func (ss *ServerSession) Close() error {
	if sessionState(ss.state.Swap(int32(stateClosed))) == stateClosed {
		return nil
	}
	ss.cancel()
	ss.mu.Lock()
	for _, r := range ss.inflight {
		r.cancel(ErrSessionClosed)
	}
	ss.mu.Unlock()
	ss.server.removeSession(ss)
	if h := ss.server.opts.SessionClosedHandler; h != nil {
		h(ss)
	}
	return nil
}

// Drain tells the session's open-ended requests (subscriptions/listen)
// that the connection is ending, so that they finish with their result
// instead of holding the shutdown until its deadline. Requests with an end
// of their own run on.
func (ss *ServerSession) Drain() { ss.drainOnce.Do(func() { close(ss.draining) }) }

// Wait blocks until every request the session admitted has finished.
func (ss *ServerSession) Wait() { ss.requests.Wait() }

// Handle processes one message body from the client: a message, or a
// batch where the session negotiated 2025-03-26. Replies, and the messages
// a request sends while it runs (progress, logs, server-to-client
// requests), are written to w. Handle returns when every request in the
// body has been answered or cancelled; responses and notifications return
// at once. It suits transports where each body has its own reply stream.
func (ss *ServerSession) Handle(ctx context.Context, data []byte, w MessageWriter) {
	if jsonrpc.IsBatch(data) {
		ss.processBatch(ctx, data, w, true)
		return
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		ss.rejected(w, err)
		return
	}
	ss.processMessage(ctx, msg, w)
}

// receive is Handle for a stream's reader: it handles what package sched
// runs on the reader (responses, notifications, initialize, ping), starts
// a batch, and returns any other request, admitted, for the caller to run
// once another goroutine reads on (see streamReader.loop).
func (ss *ServerSession) receive(ctx context.Context, data []byte, w MessageWriter) *Request {
	if jsonrpc.IsBatch(data) {
		ss.processBatch(ctx, data, w, false)
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		ss.rejected(w, err)
		return nil
	}
	if msg.Kind() != jsonrpc.KindRequest {
		ss.processMessage(ctx, msg, w)
		return nil
	}
	req := ss.admitRequest(ctx, msg, w)
	if req != nil && req.inline {
		ss.run(ctx, req)
		return nil
	}
	return req
}

// HandleMessage is Handle for a message the transport has already decoded
// (to route it, say), sparing a second decoding.
func (ss *ServerSession) HandleMessage(ctx context.Context, msg *jsonrpc.Message, w MessageWriter) {
	ss.processMessage(ctx, msg, w)
}

// processMessage handles one message, and runs a request on the calling
// goroutine.
func (ss *ServerSession) processMessage(ctx context.Context, msg *jsonrpc.Message, w MessageWriter) {
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		ss.handleResponse(msg)
	case jsonrpc.KindNotification:
		ss.handleNotification(ctx, msg, w)
	case jsonrpc.KindRequest:
		if req := ss.admitRequest(ctx, msg, w); req != nil {
			ss.run(ctx, req)
		}
	}
}

// admitRequest admits a request, or answers it with the reason it was
// refused and returns nil.
func (ss *ServerSession) admitRequest(ctx context.Context, msg *jsonrpc.Message, w MessageWriter) *Request {
	var req *Request
	var rerr *jsonrpc.Error
	if perRequestClaim(msg.Params) {
		req, rerr = ss.admitPerRequest(ctx, msg, w, nil)
	} else {
		req, rerr = ss.admit(msg, w, nil)
	}
	if rerr != nil {
		writeReply(w, jsonrpc.AppendError(nil, msg.ID, rerr))
		return nil
	}
	return req
}

func (ss *ServerSession) rejected(w MessageWriter, err error) {
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || !de.Reply {
		ss.logger.Debug("mcp: dropped a malformed message that needs no answer", "error", err)
		return
	}
	ss.writeError(w, de.ID, de.Err)
}

// ReplyWriter is implemented by a MessageWriter that needs to tell the
// reply ending a message body (a response, or a batch's array of them)
// from the messages sent while the body's requests run: an HTTP stream
// answers with plain JSON when the reply comes first, and ends when it
// has been written.
type ReplyWriter interface {
	MessageWriter
	WriteReply(msg []byte) error
}

// writeReply writes a reply to w: with WriteReply where w tells replies
// from the messages sent while requests run.
func writeReply(w MessageWriter, reply []byte) error {
	if rw, ok := w.(ReplyWriter); ok {
		return rw.WriteReply(reply)
	}
	return w.WriteMessage(reply)
}

func (ss *ServerSession) writeError(w MessageWriter, id jsonrpc.ID, e *jsonrpc.Error) {
	if err := writeReply(w, jsonrpc.AppendError(nil, id, e)); err != nil {
		ss.logger.Debug("mcp: could not write an error reply", "error", err)
	}
}

// admit checks a request against the lifecycle, the ids in flight and the
// concurrency bound, and registers it. The returned error is the reply.
func (ss *ServerSession) admit(msg *jsonrpc.Message, w MessageWriter, respond func([]byte) error) (*Request, *jsonrpc.Error) {
	state := sessionState(ss.state.Load())
	switch {
	case state == stateClosed:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: the session has ended; start a new one with initialize")
	case msg.Method == "ping":
	case msg.Method == "initialize":
		if state != stateCreated {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: the session is already initialized; initialize may be sent only once")
		}
	case msg.Method == methodServerDiscover || msg.Method == methodSubscriptionsListen:
		// A claim-less discover or listen is a malformed 2026-07-28 request,
		// not session-era traffic.
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s needs params._meta with %q and %q", msg.Method, MetaProtocolVersion, MetaClientCapabilities)
	case state == stateCreated:
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: the session is not initialized; send initialize first (got %q)", truncateString(msg.Method, 64))
	}
	if state == stateInitializing && msg.Method != "ping" && msg.Method != "initialize" {
		// The client considers itself initialized: its
		// notifications/initialized was sent, maybe to another replica
		// of this server that has not told this one yet.
		ss.server.promote(ss)
	}
	req := &Request{Method: msg.Method, ID: msg.ID, RawParams: msg.Params, Session: ss, w: w, respond: respond}
	// initialize and ping are answered on the reading goroutine (see
	// package sched); neither can be cancelled.
	req.inline = sched.OnReader(true, msg.Method)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	req.rev = ss.rev
	if err := ss.register(req); err != nil {
		return nil, err
	}
	return req, nil
}

// admitPerRequest admits a request that claims the 2026-07-28 revision: no
// lifecycle, its client described by its own _meta.
func (ss *ServerSession) admitPerRequest(ctx context.Context, msg *jsonrpc.Message, w MessageWriter, respond func([]byte) error) (*Request, *jsonrpc.Error) {
	if sessionState(ss.state.Load()) == stateClosed {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: the connection is closing")
	}
	m, err := ss.server.parsePerRequest(msg.Method, msg.Params)
	if err != nil {
		return nil, err
	}
	req := &Request{Method: msg.Method, ID: msg.ID, RawParams: msg.Params, Session: ss, w: w, respond: respond, rev: rev20260728, perRequest: m}
	if inputMethods[msg.Method] {
		req.principal = PrincipalFrom(ctx)
		if err := ss.server.loadInputs(req); err != nil {
			return nil, err
		}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if err := ss.register(req); err != nil {
		return nil, err
	}
	return req, nil
}

// register checks the ids in flight and the concurrency bound and records
// an admitted request; ss.mu is held.
func (ss *ServerSession) register(req *Request) *jsonrpc.Error {
	if _, dup := ss.inflight[req.ID]; dup {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: id %s is already in use by a request in progress; use a new id for each request", truncateString(req.ID.String(), 64))
	}
	if !ss.requests.Admit(!req.inline) {
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: this session already runs %d requests, the most it allows; wait for some to finish and retry", ss.requests.Limit())
	}
	if !req.inline {
		ss.inflight[req.ID] = req
	}
	return nil
}

// run calls the handler chain for an admitted request and answers it.
func (ss *ServerSession) run(ctx context.Context, req *Request) {
	defer ss.requests.Done(!req.inline)
	if !req.inline {
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		req.startCancel(cancel)
		defer cancel(nil)
	}
	req.ctx = requestContext{ctx, req}
	ctx = &req.ctx
	res, err := ss.server.call(ctx, req)
	if t := req.createdTask; t != nil {
		defer t.announce() // after the answer below is written, or dropped
	}
	if req.perRequest == nil && req.needInput != nil {
		res, err = ss.fulfilSessionEra(ctx, req, res, err)
	}

	ss.mu.Lock()
	delete(ss.inflight, req.ID)
	ss.mu.Unlock()
	// Nothing more may be sent for this request once it is answered.
	req.progMu.Lock()
	req.done.Store(true)
	req.progMu.Unlock()
	if req.cancelled.Load() {
		return // the client cancelled it: no response at all
	}
	var reply []byte
	switch {
	case req.perRequest != nil && req.missingCap != nil:
		reply = jsonrpc.AppendError(nil, req.ID, req.missingCap)
	case req.perRequest != nil && req.needInput != nil:
		reply = ss.server.encodeInputRequired(req)
	case req.perRequest != nil:
		reply = ss.server.encodePerRequest(req, res, err)
	default:
		reply = encodeResponse(req.ID, res, err, ss.logger)
	}
	var werr error
	if req.respond != nil {
		werr = req.respond(reply)
	} else {
		werr = writeReply(req.w, reply)
	}
	if werr != nil {
		ss.logger.Debug("mcp: could not write a response", "method", req.Method, "error", werr)
	}
}

func encodeResponse(id jsonrpc.ID, res any, err error, logger *slog.Logger) []byte {
	if err != nil {
		return jsonrpc.AppendError(nil, id, toRPCError(err))
	}
	switch r := res.(type) {
	case nil:
		return jsonrpc.AppendResult(nil, id, []byte("{}"))
	case encoded:
		// Assembled by the engine from validated parts (tools/list).
		return jsonrpc.AppendResult(nil, id, r)
	}
	if r, ok := res.(*CallToolResult); ok && r != nil {
		// Text results, the common case, are encoded straight into the
		// reply.
		head := jsonrpc.AppendResultHead(make([]byte, 0, 64+len(id.String())+textLen(r)), id)
		if b, ok := appendToolResult(head, r); ok {
			return append(b, '}')
		}
	}
	b, merr := encodeResult(res)
	if merr != nil {
		logger.Error("mcp: could not encode a result", "error", merr)
		return jsonrpc.AppendError(nil, id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the server could not encode its result"))
	}
	return jsonrpc.AppendResult(nil, id, b)
}

func toRPCError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the request timed out")
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// processBatch handles a JSON array body: accepted only where the session
// negotiated 2025-03-26, and then answered with one array.
func (ss *ServerSession) processBatch(ctx context.Context, data []byte, w MessageWriter, wait bool) {
	elems, err := jsonrpc.SplitBatch(data)
	var berr *jsonrpc.Error
	errors.As(err, &berr)
	if berr != nil && berr.Code == jsonrpc.CodeParseError {
		ss.writeError(w, jsonrpc.ID{}, berr)
		return
	}
	if rev := ss.revision(); !rev.batches() {
		why := "before initialize"
		if rev != 0 {
			why = "at protocol revision " + rev.String()
		}
		ss.writeError(w, jsonrpc.ID{}, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not accepted %s (only at 2025-03-26); send one message at a time", why))
		return
	}
	if berr != nil {
		ss.writeError(w, jsonrpc.ID{}, berr)
		return
	}
	var (
		mu      sync.Mutex
		replies [][]byte
		wg      sync.WaitGroup
	)
	collect := func(b []byte) error {
		mu.Lock()
		replies = append(replies, b)
		mu.Unlock()
		return nil
	}
	for _, raw := range elems {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			var de *jsonrpc.DecodeError
			if errors.As(err, &de) && de.Reply {
				collect(jsonrpc.AppendError(nil, de.ID, de.Err))
			}
			continue
		}
		switch msg.Kind() {
		case jsonrpc.KindResponse:
			ss.handleResponse(msg)
		case jsonrpc.KindNotification:
			ss.handleNotification(ctx, msg, w)
		case jsonrpc.KindRequest:
			if msg.Method == "initialize" {
				collect(jsonrpc.AppendError(nil, msg.ID, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "Invalid Request: initialize must not be sent inside a batch")))
				continue
			}
			req, rerr := ss.admit(msg, w, collect)
			if rerr != nil {
				collect(jsonrpc.AppendError(nil, msg.ID, rerr))
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				ss.run(ctx, req)
			}()
		}
	}
	finish := func() {
		wg.Wait()
		if len(replies) == 0 {
			return // all notifications: nothing at all is written
		}
		out := []byte{'['}
		for i, r := range replies {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, r...)
		}
		out = append(out, ']')
		if err := writeReply(w, out); err != nil {
			ss.logger.Debug("mcp: could not write a batch response", "error", err)
		}
	}
	if wait {
		finish()
		return
	}
	ss.requests.Admit(false) // the array must be written before the session drains
	go func() {
		defer ss.requests.Done(false)
		finish()
	}()
}

// handleResponse delivers the client's answer to a server-to-client
// request.
func (ss *ServerSession) handleResponse(msg *jsonrpc.Message) {
	ss.mu.Lock()
	ch, ok := ss.pending[msg.ID]
	delete(ss.pending, msg.ID)
	ss.mu.Unlock()
	if !ok {
		ss.logger.Warn("mcp: dropped a response whose id matches no request of ours", "id", truncateString(msg.ID.String(), 64))
		return
	}
	ch <- msg
}

func (ss *ServerSession) handleNotification(ctx context.Context, msg *jsonrpc.Message, w MessageWriter) {
	req := &Request{Method: msg.Method, RawParams: msg.Params, Session: ss, w: w, rev: ss.revision(), inline: true}
	req.done.Store(true) // a notification can send nothing back
	ctx = context.WithValue(ctx, requestKey{}, req)
	if _, err := ss.server.call(ctx, req); err != nil {
		ss.logger.Debug("mcp: notification handler failed", "method", msg.Method, "error", err)
	}
}

// cancelRequest handles notifications/cancelled.
func (ss *ServerSession) cancelRequest(raw []byte, reason string) {
	if len(raw) == 0 {
		return
	}
	var id jsonrpc.ID
	if err := id.UnmarshalJSON(raw); err != nil {
		ss.logger.Debug("mcp: ignored a cancellation with a malformed requestId")
		return
	}
	ss.mu.Lock()
	req := ss.inflight[id]
	ss.mu.Unlock()
	if req == nil {
		return // unknown or already finished: nothing to do
	}
	ss.logger.Debug("mcp: request cancelled by the client", "id", id.String(), "method", req.Method, "reason", reason)
	req.cancelled.Store(true)
	req.cancel(fmt.Errorf("cancelled by the client: %s", reason))
}

// notifyListChanged sends notifications/<kind>/list_changed if the session
// was told the feature can change.
func (ss *ServerSession) notifyListChanged(method string) {
	if sessionState(ss.state.Load()) != stateOperating {
		return
	}
	ss.mu.Lock()
	caps := ss.caps
	ss.mu.Unlock()
	ok := false
	switch method {
	case notificationToolsListChanged:
		ok = caps.Tools != nil && caps.Tools.ListChanged
	case notificationPromptsListChanged:
		ok = caps.Prompts != nil && caps.Prompts.ListChanged
	case notificationResourcesListChanged:
		ok = caps.Resources != nil && caps.Resources.ListChanged
	}
	if ok {
		ss.notify(ss.out, method, nil)
	}
}

// notify writes a notification to w.
func (ss *ServerSession) notify(w MessageWriter, method string, params any) error {
	var p []byte
	if params != nil {
		var err error
		if p, err = marshal(params); err != nil {
			return err
		}
	}
	return w.WriteMessage(jsonrpc.AppendNotification(nil, method, p))
}
