package mcp

import (
	"context"
	"encoding/json"

	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ServerOptions configure a Server. The zero value is a good default.
type ServerOptions struct {
	// Instructions are sent to clients in the initialize result; clients
	// may add them to the model's system prompt.
	Instructions string

	// Logger receives the server's own diagnostics (never stdout). Nil
	// means slog.Default(), which writes to stderr.
	Logger *slog.Logger

	// PageSize is the number of items per page of the list methods.
	// Zero means 1000.
	PageSize int

	// CacheTTLMs and CacheScope are the cache hints (ttlMs, cacheScope)
	// of per-request (2026-07-28) results of server/discover, the lists and
	// resources/read. The zero values, 0 ("immediately stale") and
	// "public", are always correct; a longer TTL suits a server whose
	// tools rarely change, and "private" one whose lists depend on who
	// asks.
	CacheTTLMs int
	CacheScope string

	// StateKey signs the requestState of multi-round-trip requests
	// (HMAC-SHA256), so that clients cannot forge or alter it. Servers
	// behind a load balancer share one key of 32 random bytes; nil means
	// a random key per Server, good for the process that made it.
	StateKey []byte
	// StateTTL is how long a requestState stays valid. Zero means 10
	// minutes.
	StateTTL time.Duration

	// HasTools, HasResources and HasPrompts declare a feature even while
	// nothing of that kind is registered, for servers whose tools appear
	// later. A feature with registered items is always declared.
	HasTools, HasResources, HasPrompts bool

	// Logging declares the logging capability, which lets handlers send
	// log messages to the client (Request.Log, ServerSession.Log).
	Logging bool

	// CompletionHandler answers completion/complete; the completions
	// capability is declared only when it is set.
	CompletionHandler func(context.Context, *CompleteRequest) (*CompleteResult, error)

	// InitializedHandler is called when a session receives
	// notifications/initialized.
	InitializedHandler func(context.Context, *ServerSession)

	// SessionClosedHandler is called once when a session ends, for
	// whatever reason, after it has left Sessions. It must not block.
	SessionClosedHandler func(*ServerSession)

	// RootsListChangedHandler is called when a client reports that its
	// roots changed.
	RootsListChangedHandler func(context.Context, *ServerSession)

	// MaxConcurrentRequests bounds the requests one session runs at once;
	// requests past the bound are answered with an error at once instead
	// of queueing without limit. Zero means 256.
	MaxConcurrentRequests int

	// ClientRequestTimeout bounds a server-to-client request (sampling,
	// elicitation, roots) whose context has no deadline. Zero means 60s.
	ClientRequestTimeout time.Duration

	// Middleware wraps every inbound method, outermost first.
	Middleware []Middleware

	// Filter, when set, hides registered items from some requests (a
	// gateway's tenants, say): an item it returns false for is left out of
	// lists and answered as unknown. name is a tool's or prompt's name, a
	// resource's URI (for reads, the URI asked for) or a template. Lists
	// that depend on the caller should also say CacheScope "private".
	Filter func(ctx context.Context, kind ItemKind, name string) bool

	// ResourceFallback reads URIs that match no registered resource or
	// template, such as those a proxy routes by prefix; nil answers them
	// "not found".
	ResourceFallback ResourceHandler

	// Experimental is declared as capabilities.experimental: extensions
	// the server offers (see HandleMethod), each an object.
	Experimental map[string]any

	// MaxSubscriptions bounds the resources one session may subscribe to
	// (resources/subscribe); past it a subscription is refused until the
	// client unsubscribes from another. Zero means 1000.
	MaxSubscriptions int

	// Tasks configure tool calls run as tasks (tools with
	// Execution.TaskSupport "optional" or "required").
	Tasks TaskOptions
}

// ItemKind names the kinds of items ServerOptions.Filter sees.
type ItemKind string

const (
	KindTool             ItemKind = "tool"
	KindPrompt           ItemKind = "prompt"
	KindResource         ItemKind = "resource"
	KindResourceTemplate ItemKind = "resourceTemplate"
)

func (s *Server) visible(ctx context.Context, kind ItemKind, name string) bool {
	return s.opts.Filter == nil || s.opts.Filter(ctx, kind, name)
}

// Server holds the registered tools, resources and prompts, and serves
// them to any number of sessions.
type Server struct {
	impl   *Implementation
	opts   ServerOptions
	logger *slog.Logger

	tools     *registry[*serverTool]
	resources *registry[*serverResource]
	templates *registry[*serverTemplate]
	prompts   *registry[*serverPrompt]

	handler atomic.Pointer[MethodHandler]

	extMu sync.RWMutex
	ext   map[string]MethodHandler // extension methods

	tasks     taskStore
	taskTools atomic.Int32 // registered tools that may run as tasks

	stateKeyOnce sync.Once
	// sharedStateKey is ShareStateKey's key, under mu.
	sharedStateKey []byte
	stateKeyVal    []byte

	perRequestInfoOnce sync.Once
	perRequestInfo     []byte // the serverInfo of 2026-07-28 results, encoded

	// metaCache maps the text of a 2026-07-28 request's params._meta to what
	// it was parsed into: a client sends the same _meta every time.
	metaCache metaCache

	mu       sync.Mutex
	sessions map[*ServerSession]struct{}
	changes  map[string]*time.Timer   // pending list_changed notifications by method
	watch    func(method, uri string) // WatchChanges's function, under mu
	holds    int                      // HoldListChanged calls not yet released
	held     map[string]bool          // list_changed methods held back
	// listeners are the open subscriptions/listen requests.
	listeners map[*listener]struct{}
}

// NewServer returns a server that identifies itself as impl.
func NewServer(impl *Implementation, opts *ServerOptions) *Server {
	if impl == nil {
		impl = &Implementation{Name: "mcpgate", Version: "dev"}
	}
	s := &Server{impl: impl, sessions: map[*ServerSession]struct{}{}, changes: map[string]*time.Timer{}, listeners: map[*listener]struct{}{}}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.PageSize <= 0 {
		s.opts.PageSize = 1000
	}
	if s.opts.MaxConcurrentRequests <= 0 {
		s.opts.MaxConcurrentRequests = 256
	}
	if s.opts.MaxSubscriptions <= 0 {
		s.opts.MaxSubscriptions = 1000
	}
	if s.opts.ClientRequestTimeout <= 0 {
		s.opts.ClientRequestTimeout = 60 * time.Second
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.tools = newRegistry(func(t *serverTool) string { return t.tool.Name })
	s.resources = newRegistry(func(r *serverResource) string { return r.resource.URI })
	s.templates = newRegistry(func(t *serverTemplate) string { return t.template.URITemplate })
	s.prompts = newRegistry(func(p *serverPrompt) string { return p.prompt.Name })
	s.AddMiddleware(s.opts.Middleware...)
	return s
}

// AddMiddleware wraps every inbound method with mw, the first outermost,
// outside any middleware added before (and ServerOptions.Middleware): the
// last added sees a request first.
func (s *Server) AddMiddleware(mw ...Middleware) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var h MethodHandler
	if p := s.handler.Load(); p != nil {
		h = *p
	} else {
		h = s.dispatch
	}
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	s.handler.Store(&h)
}

// capabilities returns what the server declares to a client of revision r.
func (s *Server) capabilities(r revision) ServerCapabilities {
	var c ServerCapabilities
	if s.opts.HasTools || s.tools.len() > 0 {
		c.Tools = &ToolCapabilities{ListChanged: true}
	}
	if s.opts.HasResources || s.resources.len() > 0 || s.templates.len() > 0 {
		c.Resources = &ResourceCapabilities{Subscribe: true, ListChanged: true}
	}
	if s.opts.HasPrompts || s.prompts.len() > 0 {
		c.Prompts = &PromptCapabilities{ListChanged: true}
	}
	if s.opts.Logging {
		c.Logging = &struct{}{}
	}
	if s.opts.CompletionHandler != nil && r.completionsCap() {
		c.Completions = &struct{}{}
	}
	c.Experimental = s.experimental()
	if s.hasTaskTools() {
		switch {
		case r == rev20260728:
			c.Extensions = map[string]json.RawMessage{ExtensionTasks: json.RawMessage("{}")}
		case r >= rev20251125:
			c.Tasks = &TasksCapability{List: &struct{}{}, Cancel: &struct{}{}, Requests: &TaskRequestsCapability{Tools: &TaskToolsCapability{Call: &struct{}{}}}}
		}
	}
	return c
}

// Sessions returns the sessions currently open.
func (s *Server) Sessions() []*ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*ServerSession, 0, len(s.sessions))
	for ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

func (s *Server) addSession(ss *ServerSession) {
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) removeSession(ss *ServerSession) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// listChangedDelay coalesces bursts of registry changes (a gateway adding
// fifty tools at once) into one notification per session.
const listChangedDelay = 10 * time.Millisecond

// changed schedules a list_changed notification for method to every
// session that was told the feature exists.
func (s *Server) changed(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sessions) == 0 && len(s.listeners) == 0 {
		return
	}
	if s.holds > 0 {
		if s.held == nil {
			s.held = map[string]bool{}
		}
		s.held[method] = true
		return
	}
	s.changedLocked(method)
}

// HoldListChanged holds back the list_changed notifications of the
// registry changes to come, until the function it returns is called:
// then each kind that changed is notified once. For changes that come in
// a group over a while (a gateway's reload, whose servers are listed
// again one by one), so that clients list again once, not once a
// server. Holds nest; the last release sends.
func (s *Server) HoldListChanged() (release func()) {
	s.mu.Lock()
	s.holds++
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.holds--; s.holds > 0 {
				return
			}
			for m := range s.held {
				s.changedLocked(m)
			}
			s.held = nil
		})
	}
}

// changedLocked schedules the notification of method (s.mu held).
func (s *Server) changedLocked(method string) {
	if len(s.sessions) == 0 && len(s.listeners) == 0 {
		return
	}
	if t := s.changes[method]; t != nil {
		return // already pending
	}
	s.changes[method] = time.AfterFunc(listChangedDelay, func() {
		s.mu.Lock()
		delete(s.changes, method)
		sessions := make([]*ServerSession, 0, len(s.sessions))
		for ss := range s.sessions {
			sessions = append(sessions, ss)
		}
		watch := s.watch
		s.mu.Unlock()
		for _, ss := range sessions {
			ss.notifyListChanged(method)
		}
		s.notifyListeners(method, "")
		if watch != nil {
			watch(method, "")
		}
	})
}

// WatchChanges calls fn after the server has told its sessions that a
// list changed or that a resource was updated (uri is then the
// resource's): for a transport that serves the sessions of several
// replicas of this server, which passes the news to the other replicas'
// sessions with [ServerSession.NotifyChange].
func (s *Server) WatchChanges(fn func(method, uri string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watch = fn
}
