package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
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

	// Middleware wraps every request the client sends, the first
	// outermost. Nil means none.
	Middleware []ClientMiddleware
}

// Client connects to MCP servers on behalf of one application.
type Client struct {
	impl  *Implementation
	opts  ClientOptions
	probe bool // the era is unknown until server/discover tells
	// handler is the Middleware around ClientSession.send; nil when
	// there is none.
	handler ClientHandler

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
	if len(c.opts.Middleware) > 0 {
		send := func(ctx context.Context, req *ClientRequest) (json.RawMessage, error) {
			return req.Session.send(ctx, req)
		}
		c.handler = chainClient(send, c.opts.Middleware)
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
	paramHeaders map[string][]paramHeader
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

// AfterClose arranges for f to run in its own goroutine once the session
// has ended (Err then says why), as [context.AfterFunc] does, without a
// goroutine waiting until then; stop cancels it.
func (cs *ClientSession) AfterClose(f func()) (stop func() bool) {
	return context.AfterFunc(cs.ctx, f)
}

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

// ErrConnectionClosed is the cause of a session whose connection ended
// without Close: the server exited or the network failed.
var ErrConnectionClosed = errors.New("mcp: the connection to the server was closed")

// ErrNotSupported is returned, wrapped, by a call the server cannot
// answer: it did not declare the capability, or its protocol revision
// predates the feature. Nothing is sent.
var ErrNotSupported = errors.New("mcp: the server does not support this")
