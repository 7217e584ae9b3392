package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ClientOptions configure a Client. The zero value is a client that
// offers the latest revision, declares no client features, and gives each
// call a 60-second deadline when its context has none.
type ClientOptions struct {
	// ProtocolVersion chooses the revision. Zero means both eras: the
	// client probes with server/discover and speaks 2026-07-28 to a server
	// that answers it, and initialize, offering LatestNegotiatedVersion, to one that
	// does not. Version20260728 speaks only 2026-07-28; a session-era revision
	// is offered in initialize without a probe (the server may answer
	// with an older one it prefers).
	ProtocolVersion string
	// ProbeTimeout bounds the server/discover probe of a server whose era
	// is unknown: a session-era server that never answers it is spoken to with
	// initialize after this long. Zero means 5 seconds.
	ProbeTimeout time.Duration
	// RequestTimeout bounds a call whose context has no deadline; when it
	// passes, the server is sent notifications/cancelled. Zero means 60
	// seconds; a negative value means no bound.
	RequestTimeout time.Duration

	// Handlers for the server's requests. Each one set declares the
	// matching capability in initialize.
	CreateMessageHandler func(ctx context.Context, s *ClientSession, p *CreateMessageParams) (*CreateMessageResult, error)
	ElicitationHandler   func(ctx context.Context, s *ClientSession, p *ElicitParams) (*ElicitResult, error)
	RootsHandler         func(ctx context.Context, s *ClientSession) (*ListRootsResult, error)
	// OneConnectionPerConnect makes a Connect whose server closes the
	// connection on the server/discover probe fail with ErrProbeClosed
	// instead of connecting again at once to ask initialize: for callers
	// that retry Connect on their own (a supervisor), so that each of
	// their attempts starts a command server once. The client remembers
	// the server, so the next Connect asks initialize directly. Servers
	// whose Transport cannot name them (ServerKeyer) are connected again
	// as usual.
	OneConnectionPerConnect bool
	// Bare says whether the server may be a bare tool server, one that
	// answers tools/list and tools/call but not initialize: by default
	// (BareDetect) a server that answers initialize with -32601 and then
	// answers tools/list is one. A bare session sends no notifications and
	// offers tools only; see ClientSession.Bare.
	Bare BareMode
	// MaxServerRequests bounds the server's requests (sampling,
	// elicitation, roots) that the handlers run at once; past it a
	// request is refused at once, so a server cannot make the client
	// hold work without end. Zero means 16.
	MaxServerRequests int
	// SamplingTools and ElicitationURL widen what the handlers above are
	// declared to support (tool use in sampling; URL-mode elicitation).
	SamplingTools  bool
	ElicitationURL bool
	// Capabilities adds to what the handlers declare (experimental,
	// extensions).
	Capabilities *ClientCapabilities
	// DeclareCapabilities, when set, decides what initialize declares
	// from what the handlers and Capabilities would: for a proxy whose
	// handlers refuse some servers, which should not be told that the
	// client offers what they will be refused.
	DeclareCapabilities func(ClientCapabilities) ClientCapabilities

	// Handlers for the server's notifications. They run one at a time in
	// the order received, on a goroutine of their own, so they may call
	// the session (a list_changed handler may list again). The answer to
	// a call with a progress callback is delivered after the handlers
	// queued before it, so a handler that waits on the server holds such
	// calls too: from a server that may not answer, wait elsewhere.
	ProgressHandler            func(ctx context.Context, s *ClientSession, p *ProgressNotificationParams)
	LoggingMessageHandler      func(ctx context.Context, s *ClientSession, p *LoggingMessageParams)
	ToolListChangedHandler     func(ctx context.Context, s *ClientSession)
	PromptListChangedHandler   func(ctx context.Context, s *ClientSession)
	ResourceListChangedHandler func(ctx context.Context, s *ClientSession)
	ResourceUpdatedHandler     func(ctx context.Context, s *ClientSession, uri string)
	ElicitationCompleteHandler func(ctx context.Context, s *ClientSession, elicitationID string)

	// Logger receives the client's diagnostics (and a subprocess server's
	// stderr, through CommandTransport). Nil means slog.Default().
	Logger *slog.Logger
}

// Client connects to MCP servers on behalf of one application.
type Client struct {
	impl  *Implementation
	opts  ClientOptions
	probe bool // the era is unknown until server/discover tells

	// sessionEra remembers the servers (by ServerKey) that did not speak
	// 2026-07-28, so that connecting to them again costs no probe.
	sessionEra sync.Map
}

// NewClient returns a client that introduces itself as impl.
func NewClient(impl *Implementation, opts *ClientOptions) *Client {
	c := &Client{impl: impl}
	if opts != nil {
		c.opts = *opts
	}
	if c.impl == nil {
		c.impl = &Implementation{Name: "mcpgate-client", Version: "0"}
	}
	if c.opts.ProtocolVersion == "" {
		c.probe = true
		c.opts.ProtocolVersion = LatestNegotiatedVersion
	}
	if c.opts.ProbeTimeout <= 0 {
		c.opts.ProbeTimeout = 5 * time.Second
	}
	if c.opts.RequestTimeout == 0 {
		c.opts.RequestTimeout = 60 * time.Second
	}
	if c.opts.MaxServerRequests <= 0 {
		c.opts.MaxServerRequests = 16
	}
	if c.opts.Logger == nil {
		c.opts.Logger = slog.Default()
	}
	return c
}

func (c *Client) capabilities() ClientCapabilities {
	var caps ClientCapabilities
	if c.opts.Capabilities != nil {
		caps = *c.opts.Capabilities
	}
	if c.opts.CreateMessageHandler != nil && caps.Sampling == nil {
		caps.Sampling = &SamplingCapability{}
		if c.opts.SamplingTools {
			caps.Sampling.Tools = &struct{}{}
		}
	}
	if c.opts.ElicitationHandler != nil && caps.Elicitation == nil {
		caps.Elicitation = &ElicitationCapability{Form: &struct{}{}}
		if c.opts.ElicitationURL {
			caps.Elicitation.URL = &struct{}{}
		}
	}
	if c.opts.RootsHandler != nil && caps.Roots == nil {
		caps.Roots = &RootsCapability{ListChanged: true}
	}
	if c.opts.DeclareCapabilities != nil {
		caps = c.opts.DeclareCapabilities(caps)
	}
	return caps
}

// Connect opens a connection with t and runs the initialize handshake
// (none with a bare tool server: see ClientOptions.Bare).
// The session lasts until Close, the server ending the connection, or a
// fatal transport error; ctx bounds only the handshake.
func (c *Client) Connect(ctx context.Context, t Transport) (*ClientSession, error) {
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cs := newClientSession(c, conn)
	if c.opts.Bare == BareAlways {
		cs.becomeBare(false)
		return cs, nil
	}
	key := ""
	if k, ok := t.(ServerKeyer); ok {
		key = k.ServerKey()
	}
	_, knownSessionEra := c.sessionEra.Load(key)
	if c.probe && key != "" && knownSessionEra {
		// Known to be session-era: straight to initialize; should it fail, the
		// next connection probes again.
		if err := cs.handshake(ctx); err != nil {
			if !errors.Is(err, ErrConnectionClosed) {
				// Not a session-era server after all: probe it next time. One
				// that died is still taken for session-era, so that retrying
				// a failing server starts it once, not twice.
				c.sessionEra.Delete(key)
			}
			cs.Close()
			return nil, err
		}
		return cs, nil
	}
	if c.probe || c.opts.ProtocolVersion == Version20260728 {
		perRequest, err := cs.discover(ctx, !c.probe)
		if errors.Is(err, ErrProbeClosed) {
			// Session-era, and gone: a fresh connection (a new process, for
			// a command) goes straight to initialize.
			cs.Close()
			if key != "" {
				c.sessionEra.Store(key, true)
			}
			if c.opts.OneConnectionPerConnect && key != "" {
				// The caller retries: its next Connect initializes at once.
				return nil, fmt.Errorf("%w (the next connection will ask it initialize first): %w", ErrProbeClosed, err)
			}
			if conn, err = t.Connect(ctx); err != nil {
				return nil, fmt.Errorf("mcp: reconnecting after the server closed the connection on the server/discover probe: %w", err)
			}
			cs = newClientSession(c, conn)
			if err := cs.handshake(ctx); err != nil {
				cs.Close()
				return nil, fmt.Errorf("%w; before that, %w, so it may speak only older revisions: pinning the revision (%s) asks it initialize first", err, ErrProbeClosed, LatestNegotiatedVersion)
			}
			return cs, nil
		}
		if err != nil {
			cs.Close()
			return nil, err
		}
		if perRequest {
			return cs, nil
		}
		if key != "" {
			c.sessionEra.Store(key, true)
		}
	}
	if err := cs.handshake(ctx); err != nil {
		cs.Close()
		return nil, err
	}
	return cs, nil
}

// initialize runs the handshake: initialize, a check of the revision the
// server chose, then notifications/initialized.
func (cs *ClientSession) initialize(ctx context.Context) error {
	c := cs.client
	p := &InitializeParams{ProtocolVersion: c.opts.ProtocolVersion, Capabilities: c.capabilities(), ClientInfo: *c.impl}
	var res InitializeResult
	if err := cs.call(ctx, methodInitialize, p, &res, false); err != nil {
		return err // it names initialize already
	}
	rev, ok := parseRevision(res.ProtocolVersion)
	if !ok {
		return fmt.Errorf("mcp: the server chose protocol revision %q, which this client does not speak (it speaks %v)", res.ProtocolVersion, NegotiatedVersions)
	}
	if res.ServerInfo == nil {
		cs.logger.Warn("mcp: the server's initialize result lacks serverInfo")
		res.ServerInfo = &Implementation{}
	}
	cs.mu.Lock()
	cs.init, cs.rev = &res, rev
	cs.mu.Unlock()
	if vs, ok := cs.conn.(ProtocolVersionSetter); ok {
		vs.SetProtocolVersion(res.ProtocolVersion)
	}
	return cs.notify(ctx, notificationInitialized, nil)
}

// reinitialize starts a fresh session after the server forgot ours (an
// HTTP 404), once for every call that noticed in the same generation.
func (cs *ClientSession) reinitialize(ctx context.Context, gen uint64) error {
	cs.reinitMu.Lock()
	defer cs.reinitMu.Unlock()
	cs.mu.Lock()
	cur := cs.gen
	cs.mu.Unlock()
	if cur != gen {
		return nil // another call already did it
	}
	cs.logger.Info("mcp: the server ended the session; starting a new one")
	if err := cs.initialize(ctx); err != nil {
		return err
	}
	cs.mu.Lock()
	cs.gen++
	cs.mu.Unlock()
	return nil
}

// ClientSession is a connection to one server, after initialize.
type ClientSession struct {
	client *Client
	conn   Conn
	logger *slog.Logger

	ctx    context.Context // ends when the session closes
	cancel context.CancelCauseFunc

	refusing  atomic.Int32 // refusals being written (refuse)
	abandoned idRing       // requests given up on, whose answers are late, not stray
	serving   atomic.Int32 // the server's requests handled, until answered

	mu         sync.Mutex
	init       *InitializeResult
	rev        revision
	perRequest bool          // 2026-07-28: every request carries _meta
	bare       bool          // a bare tool server: no lifecycle, no notifications
	acked      chan struct{} // closed when the listen request is acknowledged
	// subs are the 2026-07-28 resource subscriptions, by URI, and
	// listenAcks their requests waiting for acknowledgement, by raw id.
	subs map[string]*perRequestSub
	// The fixed members of a 2026-07-28 request's _meta, encoded; and with
	// the tasks extension declared.
	metaFixed, metaFixedTasks []byte
	listenAcks                map[string]chan jsontext.Value
	// paramHeaders are the x-mcp-header annotations of the tools listed.
	paramHeaders map[string][]ParamHeader
	logLevel     LoggingLevel // per-request: sent as _meta logLevel
	nextID       int64
	gen          uint64 // bumped by each re-initialize
	pending      map[jsonrpc.ID]*pendingCall
	inbound      map[jsonrpc.ID]context.CancelFunc // server requests running
	progress     map[string]*pendingCall           // by progress token
	reinitMu     sync.Mutex

	notes    *handlerQueue
	readDone chan struct{}
	closing  sync.Once
}

type pendingCall struct {
	method   string
	ch       chan *jsonrpc.Message // buffered 1
	fail     chan error            // buffered 1
	progress func(*ProgressNotificationParams)
	done     atomic.Bool // returned: no more progress
}

func newClientSession(c *Client, conn Conn) *ClientSession {
	cs := &ClientSession{
		client:   c,
		conn:     conn,
		logger:   c.opts.Logger,
		pending:  map[jsonrpc.ID]*pendingCall{},
		inbound:  map[jsonrpc.ID]context.CancelFunc{},
		progress: map[string]*pendingCall{},
		notes:    newHandlerQueue(),
		readDone: make(chan struct{}),
	}
	cs.ctx, cs.cancel = context.WithCancelCause(context.Background())
	go cs.readLoop()
	go cs.runNotifications()
	return cs
}

// InitializeResult returns what the server answered to initialize: its
// revision, capabilities, identity and instructions.
func (cs *ClientSession) InitializeResult() *InitializeResult {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.init
}

// ProtocolVersion returns the negotiated revision, or "" for a bare
// session.
func (cs *ClientSession) ProtocolVersion() string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.rev.String()
}

// Done returns a channel closed when the session has ended.
func (cs *ClientSession) Done() <-chan struct{} { return cs.ctx.Done() }

// Err returns why the session ended, or nil while it runs or after Close.
func (cs *ClientSession) Err() error {
	if err := context.Cause(cs.ctx); err != nil && !errors.Is(err, ErrSessionClosed) {
		return err
	}
	return nil
}

// Close ends the session and its connection (for a subprocess: closing
// its stdin, then signals; for HTTP: DELETE). Calls in flight fail with
// ErrSessionClosed.
func (cs *ClientSession) Close() error {
	var err error
	cs.closing.Do(func() {
		cs.cancel(ErrSessionClosed)
		err = cs.conn.Close()
		<-cs.readDone
	})
	return err
}

// Wait blocks until the session ends and returns why, as Err does.
func (cs *ClientSession) Wait() error {
	<-cs.ctx.Done()
	<-cs.readDone
	return cs.Err()
}

// readLoop reads the server's messages until the connection ends; only
// the end of the connection ends the session, never a bad message.
func (cs *ClientSession) readLoop() {
	defer close(cs.readDone)
	defer cs.notes.close()
	for {
		data, err := cs.conn.ReadMessage()
		var tooLarge *jsonrpc.TooLargeError
		var known *MessageTooLargeError
		switch {
		case errors.As(err, &known):
			if known.ID.IsZero() || !cs.failCall(known.ID, known) {
				cs.logger.Warn("mcp: dropped an oversized message from the server", "error", known.Error())
			}
			continue
		case errors.As(err, &tooLarge):
			cs.tooLarge(tooLarge)
			continue
		}
		if err != nil {
			if cs.ctx.Err() == nil {
				cs.logger.Debug("mcp: the connection to the server ended", "error", err)
				cs.cancel(fmt.Errorf("%w: %w", ErrConnectionClosed, err))
			}
			return
		}
		if jsonrpc.IsBatch(data) {
			elems, berr := jsonrpc.SplitBatch(data)
			if berr != nil {
				cs.logger.Warn("mcp: dropped a malformed batch from the server", "error", berr.Message)
				continue
			}
			for _, e := range elems {
				cs.handle(e)
			}
			continue
		}
		cs.handle(data)
	}
}

// ErrConnectionClosed is the cause of a session whose connection ended
// without Close: the server exited or the network failed.
var ErrConnectionClosed = errors.New("mcp: the connection to the server was closed")

// ErrMessageTooLarge is matched, with errors.Is, by the error of a call
// whose answer was larger than the client accepts (a
// *MessageTooLargeError). The session goes on: only that call failed.
var ErrMessageTooLarge = errors.New("mcp: the server's answer exceeds the client's message size limit")

// MessageTooLargeError fails a call whose answer from the server was over
// the client's limit on message size; the session goes on. A Conn
// returns one from ReadMessage, with ID set, when it knows which request
// an oversized message answered (as an HTTP response does).
type MessageTooLargeError struct {
	// Limit is the size limit in bytes.
	Limit int
	// Size is the answer's size in bytes, or 0 when reading stopped at
	// the limit before the size was known.
	Size int
	// Setting names the option that raises the limit, such as
	// "CommandTransport.MaxMessageSize". Empty means the transport's
	// MaxMessageSize.
	Setting string
	// ID is the id of the request the answer was to.
	ID jsonrpc.ID
}

func (e *MessageTooLargeError) Error() string {
	what := "the server's answer"
	if e.Size > 0 {
		what = fmt.Sprintf("the server's answer of %d bytes", e.Size)
	}
	setting := e.Setting
	if setting == "" {
		setting = "the transport's MaxMessageSize"
	}
	return fmt.Sprintf("%s exceeds the %d-byte limit on messages; raise %s or ask for less", what, e.Limit, setting)
}

// Is reports ErrMessageTooLarge as matching.
func (e *MessageTooLargeError) Is(target error) bool { return target == ErrMessageTooLarge }

// tooLarge fails the call an oversized message answered, when its id can
// be found; the session goes on.
func (cs *ClientSession) tooLarge(e *jsonrpc.TooLargeError) {
	var setting string
	if s, ok := cs.conn.(sizeSetter); ok {
		setting = s.sizeSetting()
	}
	for _, id := range []jsonrpc.ID{jsonrpc.PeekID(e.Prefix), jsonrpc.PeekTrailingID(e.Suffix)} {
		if !id.IsZero() && cs.failCall(id, &MessageTooLargeError{Limit: e.Limit, Size: e.Size, Setting: setting, ID: id}) {
			return
		}
	}
	cs.logger.Warn("mcp: dropped an oversized message from the server", "error", e.Error())
}

func (cs *ClientSession) failCall(id jsonrpc.ID, err error) bool {
	cs.mu.Lock()
	pc := cs.pending[id]
	delete(cs.pending, id)
	cs.mu.Unlock()
	if pc == nil {
		return false
	}
	pc.fail <- err
	return true
}

func (cs *ClientSession) handle(data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) && !de.ID.IsZero() && cs.failCall(de.ID, fmt.Errorf("the server sent a malformed response: %s", err)) {
			return
		}
		cs.logger.Warn("mcp: dropped a malformed message from the server", "error", err)
		return
	}
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		cs.handleResponse(msg)
	case jsonrpc.KindNotification:
		cs.handleNotification(msg)
	case jsonrpc.KindRequest:
		cs.handleRequest(msg)
	}
}

func (cs *ClientSession) handleResponse(msg *jsonrpc.Message) {
	cs.mu.Lock()
	pc := cs.pending[msg.ID]
	delete(cs.pending, msg.ID)
	cs.mu.Unlock()
	if pc != nil {
		if pc.progress != nil {
			// Behind the progress notifications already queued, so that
			// all of them reach the callback before the call returns.
			cs.notes.push(func() { pc.ch <- msg }, true)
		} else {
			pc.ch <- msg
		}
		return
	}
	// A string id holding the digits of a call we made is that call
	// answered with the wrong id type: fail it now rather than let it
	// wait for its deadline.
	if msg.ID.IsString() {
		var digits string
		if unmarshalValue(msg.ID.Raw(), &digits) == nil {
			if n, err := strconv.ParseInt(digits, 10, 64); err == nil && cs.failCall(jsonrpc.IntID(n),
				fmt.Errorf("the server answered with the id %s, a string, for request %d: JSON-RPC requires the id exactly as sent", truncateString(msg.ID.String(), 64), n)) {
				return
			}
		}
	}
	if cs.ctx.Err() != nil {
		// Closing: calls abandoned by Close (an open listen stream, say)
		// may still be answered on the way out.
		cs.logger.Debug("mcp: dropped a response that arrived while closing", "id", truncateString(msg.ID.String(), 64))
		return
	}
	if cs.abandoned.has(msg.ID) {
		// The answer to a request given up on (a probe that took too
		// long on a cold start, a call cancelled): late, not wrong.
		cs.logger.Debug("mcp: dropped an answer that came after its request was given up", "id", truncateString(msg.ID.String(), 64))
		return
	}
	cs.logger.Warn("mcp: dropped a response whose id matches no request of ours", "id", truncateString(msg.ID.String(), 64))
}

// abandon remembers the id of a request given up on.
func (cs *ClientSession) abandon(id jsonrpc.ID) { cs.abandoned.add(id) }

// idRing is a small set of the latest ids added, for recognising late
// answers without growing.
type idRing struct {
	mu  sync.Mutex
	ids [64]string
	n   int
}

func (r *idRing) add(id jsonrpc.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[r.n%len(r.ids)] = string(id.Raw())
	r.n++
}

func (r *idRing) has(id jsonrpc.ID) bool {
	k := string(id.Raw())
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.ids[:min(r.n, len(r.ids))] {
		if x == k {
			return true
		}
	}
	return false
}

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

// maxRefusing bounds the refusals being written to a server at once.
const maxRefusing = 64

// refuse answers a server's request with an error, off the reading
// goroutine: a server that floods requests without reading its input
// would otherwise block the client's reading on the write of a refusal,
// and with it the answers the client waits for (each side waiting for the
// other to read). Past maxRefusing writes in progress, refusals are
// dropped: such a server is not reading them.
func (cs *ClientSession) refuse(id jsonrpc.ID, e *jsonrpc.Error) {
	if cs.refusing.Add(1) > maxRefusing {
		cs.refusing.Add(-1)
		cs.logger.Warn("mcp: dropped the refusal of a server's request: the server is not reading what the client writes", "id", truncateString(id.String(), 64))
		return
	}
	go func() {
		defer cs.refusing.Add(-1)
		cs.write(context.Background(), jsonrpc.AppendError(nil, id, e))
	}()
}

// handleRequest answers a server-to-client request with the handler the
// application supplied, or -32601 when it supplied none.
func (cs *ClientSession) handleRequest(msg *jsonrpc.Message) {
	opts := &cs.client.opts
	var h func(ctx context.Context) (any, error)
	switch msg.Method {
	case methodPing:
		h = func(context.Context) (any, error) { return emptyResult{}, nil }
	case methodSamplingCreateMessage:
		if opts.CreateMessageHandler != nil {
			h = func(ctx context.Context) (any, error) {
				var p CreateMessageParams
				if err := unmarshalParams(msg.Params, &p); err != nil {
					return nil, err
				}
				return opts.CreateMessageHandler(ctx, cs, &p)
			}
		}
	case methodElicitationCreate:
		if opts.ElicitationHandler != nil {
			h = func(ctx context.Context) (any, error) {
				var p ElicitParams
				if err := unmarshalParams(msg.Params, &p); err != nil {
					return nil, err
				}
				if p.Mode == "url" && !opts.ElicitationURL {
					return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: this client did not declare URL-mode elicitation")
				}
				return opts.ElicitationHandler(ctx, cs, &p)
			}
		}
	case methodRootsList:
		if opts.RootsHandler != nil {
			h = func(ctx context.Context) (any, error) { return opts.RootsHandler(ctx, cs) }
		}
	}
	if h == nil {
		cs.refuse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "Method not found: this client does not handle %q", truncateString(msg.Method, 64)))
		return
	}
	ctx, cancel := context.WithCancel(cs.ctx)
	// Counted until the answer is written, not only while the handler
	// runs: answers to a server that does not read would otherwise pile
	// up, a goroutine each.
	if cs.serving.Add(1) > int32(opts.MaxServerRequests) {
		cs.serving.Add(-1)
		cancel()
		cs.refuse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError,
			"Internal error: this client already handles %d of your requests, the most it allows at once; send %s again when one has been answered", opts.MaxServerRequests, truncateString(msg.Method, 64)))
		return
	}
	cs.mu.Lock()
	cs.inbound[msg.ID] = cancel
	cs.mu.Unlock()
	go func() {
		defer cs.serving.Add(-1)
		defer cancel()
		res, err := func() (res any, err error) {
			defer func() {
				if v := recover(); v != nil {
					cs.logger.Error("mcp: a client handler panicked", "method", msg.Method, "panic", v, "stack", stack())
					err = jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: the client's %s handler failed", msg.Method)
				}
			}()
			return h(ctx)
		}()
		cs.mu.Lock()
		delete(cs.inbound, msg.ID)
		cs.mu.Unlock()
		if ctx.Err() != nil && cs.ctx.Err() == nil {
			return // cancelled by the server: no response
		}
		cs.write(context.Background(), encodeResponse(msg.ID, res, err, cs.logger))
	}()
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

func requireRevision(cs *ClientSession, what string, ok func(revision) bool) error {
	cs.mu.Lock()
	rev := cs.rev
	cs.mu.Unlock()
	if !ok(rev) {
		return fmt.Errorf("%w: %s (the server speaks protocol %s)", ErrNotSupported, what, rev)
	}
	return nil
}

// ErrNotSupported is returned, wrapped, by a call the server cannot
// answer: it did not declare the capability, or its protocol revision
// predates the feature. Nothing is sent.
var ErrNotSupported = errors.New("mcp: the server does not support this")

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
