package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/slogthrottle"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

const (
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerLastEventID     = "Last-Event-Id"

	codeInvalidRequest = jsonrpc.CodeInvalidRequest
	codeParseError     = jsonrpc.CodeParseError
	codeInternalError  = jsonrpc.CodeInternalError
	// codeSessionNotFound is the TypeScript SDK's code for an unknown
	// session, which clients recognise.
	codeSessionNotFound = -32001
)

// Handler serves an mcp.Server over Streamable HTTP (and, if enabled, the
// legacy HTTP+SSE transport). It is an http.Handler for the endpoint's
// path and the legacy paths; mount it on a mux or serve it alone.
type Handler struct {
	server  *mcp.Server
	opts    Options
	logger  *slog.Logger
	origins *origins

	sessions sessionTable
	inflight sync.WaitGroup // POST handlers running
	closing  chan struct{}
	once     sync.Once
	// closingCtx ends with closing, for callbacks (context.AfterFunc)
	// that would otherwise each need a goroutine waiting on it.
	closingCtx  context.Context
	closeCancel context.CancelFunc

	calls sync.Map // call name → chan *envelope: requests handed to another replica
	// copyMu serializes making local copies of shared sessions, so that
	// two requests of one session arriving together make one.
	copyMu sync.Mutex
	// clusterLog logs what fails while the cluster does not answer: a
	// few lines a minute per kind, not one per request.
	clusterLog *slog.Logger
}

// NewHandler returns a Handler serving s.
func NewHandler(s *mcp.Server, opts *Options) *Handler {
	h := &Handler{server: s, closing: make(chan struct{})}
	h.closingCtx, h.closeCancel = context.WithCancel(context.Background())
	if opts != nil {
		h.opts = *opts
	}
	h.opts.fill()
	h.logger = h.opts.Logger
	h.origins = newOrigins(&h.opts)
	h.sessions.byID = map[string]*session{}
	h.sessions.byOwner = map[owner]map[*session]struct{}{}
	h.clusterLog = slog.New(slogthrottle.New(h.logger.Handler(), nil))
	if h.opts.Cluster != nil {
		h.opts.Cluster.Receive(h.receive)
		h.opts.Cluster.OnRecover(h.recovered)
		s.ShareStateKey(h.opts.Cluster.StateKey())
		s.WatchChanges(h.changed)
	}
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.checkOrigin(w, r) {
		return
	}
	if h.cors(w, r) {
		return
	}
	select {
	case <-h.closing:
		w.Header().Set("Retry-After", "1")
		h.httpError(w, http.StatusServiceUnavailable, nil, codeInternalError, "Service Unavailable: the server is shutting down")
		return
	default:
	}
	switch r.URL.Path {
	case h.opts.Endpoint:
	case h.opts.SSEPath, h.opts.MessagePath:
		if h.opts.LegacySSE && !h.opts.Stateless {
			h.serveLegacy(w, r)
			return
		}
		http.NotFound(w, r)
		return
	default:
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePOST(w, r)
	case http.MethodGet:
		if h.opts.Stateless {
			h.methodNotAllowed(w, "POST", "GET streams need sessions, and this server is stateless")
			return
		}
		h.serveGET(w, r)
	case http.MethodDelete:
		if h.opts.Stateless {
			h.methodNotAllowed(w, "POST", "this server is stateless: there is no session to end")
			return
		}
		h.serveDELETE(w, r)
	default:
		allow := "GET, POST, DELETE"
		if h.opts.Stateless {
			allow = "POST"
		}
		h.methodNotAllowed(w, allow, "use POST to send messages")
	}
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, allow, why string) {
	w.Header().Set("Allow", allow)
	h.httpError(w, http.StatusMethodNotAllowed, nil, codeInvalidRequest, "Method Not Allowed: %s", why)
}

// httpError answers with an HTTP status and a JSON-RPC error body.
func (h *Handler) httpError(w http.ResponseWriter, status int, id *jsonrpc.ID, code int64, format string, args ...any) {
	var rid jsonrpc.ID
	if id != nil {
		rid = *id
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.AppendError(nil, rid, jsonrpc.Errorf(code, format, args...)))
}

// acceptsBoth reports whether an Accept header admits both JSON and an
// event stream, as a POST's must (wildcards count).
func acceptsBoth(accept string) bool {
	var json, sse bool
	for rest := accept; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		mt, ok := plainMediaType(part)
		if !ok {
			continue
		}
		switch mt {
		case "*/*":
			json, sse = true, true
		case "application/*", "application/json":
			json = true
		case "text/*", "text/event-stream":
			sse = true
		}
	}
	return json && sse
}

func acceptsSSE(accept string) bool {
	for rest := accept; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		if mt, ok := plainMediaType(part); ok && (mt == "text/event-stream" || mt == "text/*" || mt == "*/*") {
			return true
		}
	}
	return false
}

// plainMediaType is mime.ParseMediaType's media type of one element of an
// Accept or Content-Type header, without its allocations for the plain
// lower-case types clients send.
func plainMediaType(v string) (string, bool) {
	v = strings.TrimSpace(v)
	switch v {
	case "application/json", "text/event-stream", "*/*", "application/*", "text/*":
		return v, true
	}
	mt, _, err := mime.ParseMediaType(v)
	return mt, err == nil
}

// checkProtocolHeader validates MCP-Protocol-Version of legacy traffic.
// It runs before the session lookup, so an unsupported value is a 400
// with or without a session; an absent header means 2025-03-26. A per-request
// revision in the header of a request whose body claims none is a
// malformed 2026-07-28 request.
func (h *Handler) checkProtocolHeader(w http.ResponseWriter, r *http.Request, b *body) (string, bool) {
	vals := r.Header.Values(headerProtocolVersion)
	if len(vals) == 0 {
		return mcp.Version20250326, true
	}
	if len(vals) == 1 && slices.Contains(mcp.PerRequestVersions, vals[0]) && b != nil && b.request && !b.batch {
		h.httpError(w, http.StatusBadRequest, b.id, jsonrpc.CodeInvalidParams,
			"Invalid params: MCP-Protocol-Version is %s, but params._meta lacks %q (and %q): a %s request carries them in every request", vals[0], mcp.MetaProtocolVersion, mcp.MetaClientCapabilities, vals[0])
		return "", false
	}
	if len(vals) > 1 || !slices.Contains(mcp.NegotiatedVersions, vals[0]) {
		h.httpError(w, http.StatusBadRequest, nil, codeInvalidRequest,
			"Bad Request: unsupported MCP-Protocol-Version %q; supported: %s", strings.Join(vals, ", "), strings.Join(mcp.NegotiatedVersions, ", "))
		return "", false
	}
	return vals[0], true
}

// lookup finds the session named by the request, answering 400 when the
// header is missing and 404 when the session is unknown, ended or
// another principal's.
func (h *Handler) lookup(w http.ResponseWriter, r *http.Request, id *jsonrpc.ID) *session {
	vals := r.Header.Values(headerSessionID)
	switch {
	case len(vals) == 0 || vals[0] == "":
		h.httpError(w, http.StatusBadRequest, id, codeInvalidRequest, "Bad Request: the Mcp-Session-Id header is required; send initialize first to get one")
		return nil
	case len(vals) > 1:
		h.httpError(w, http.StatusBadRequest, id, codeInvalidRequest, "Bad Request: send one Mcp-Session-Id header, not %d", len(vals))
		return nil
	}
	s := h.sessions.get(vals[0])
	if s == nil && h.opts.Cluster != nil {
		var err error
		if s, err = h.localCopy(r, vals[0]); err != nil {
			if errors.Is(err, errCallerFull) || errors.Is(err, errTableFull) {
				h.refuseSession(w, id, err)
				return nil
			}
			h.clusterLog.Warn("mcphttp: could not load a session from the cluster", "session", vals[0], "error", err)
			w.Header().Set("Retry-After", "1")
			h.httpError(w, http.StatusServiceUnavailable, id, codeInternalError, "Service Unavailable: the store this server's replicas share sessions in does not answer, so this session cannot be served here now; retry shortly")
			return nil
		}
	}
	if s == nil || s.legacy || s.principal != h.opts.Principal(r) {
		// Another principal's session is reported as unknown, so ids
		// cannot be probed.
		h.httpError(w, http.StatusNotFound, id, codeSessionNotFound, "Not Found: session not found or ended; start a new one with initialize (without Mcp-Session-Id)")
		return nil
	}
	return s
}

// Why newSession refuses a session.
var (
	errCallerFull = errors.New("mcphttp: the caller holds the most sessions allowed, all busy")
	errTableFull  = errors.New("mcphttp: the server holds the most sessions allowed, none evictable")
)

// newSession creates and registers a session, making room if its caller
// or the table is full by ending an idle session (see makeRoom).
func (h *Handler) newSession(r *http.Request, legacy bool, out func(*session) mcp.MessageWriter) (*session, error) {
	principal := h.opts.Principal(r)
	s := &session{h: h, id: newSessionID(), principal: principal, owner: ownerOf(principal, r), legacy: legacy, streams: map[string]*stream{}, lastUsed: time.Now()}
	s.shared = h.opts.Cluster != nil && !legacy
	s.touched = s.lastUsed
	s.key = principal + ":" + s.id
	s.standalone = newStream(s, "g", true)
	// Whole before it is in the table, where others find it: a message
	// from another replica, a shutdown.
	s.out = out(s)
	s.ss = h.server.NewSession(s.out, h.sessionOptions(s, nil))
	if err := h.addSession(s); err != nil {
		s.ss.Close()
		return nil, err
	}
	return s, nil
}

// addSession puts s in the table, making room if its caller or the
// table is full by ending an idle session (see makeRoom).
func (h *Handler) addSession(s *session) error {
	t := &h.sessions
	t.mu.Lock()
	defer t.mu.Unlock()
	victim, err := h.makeRoom(s.owner)
	if err != nil {
		return err
	}
	if victim != nil {
		t.remove(victim)
		go victim.close(!victim.shared)
	}
	t.add(s)
	return nil
}

// makeRoom picks the idle session to end so that o may open one (nil
// when there is room already); the caller holds the table's lock.
//
// A caller at its own cap gives up its least recently used idle session
// or is refused, so that its sessions never push out anyone else's. A
// full table likewise ends o's own idle session first; failing that, the
// idle session of the caller holding the most, and only if that caller
// holds more than o. The plain LRU over the whole table let one caller
// opening sessions in a loop end every other caller's idle ones; ending
// only a bigger holder's still lets a newcomer in when the table is full
// of others' idle sessions, yet no caller is pushed out by one holding as
// many sessions as it or more.
func (h *Handler) makeRoom(o owner) (*session, error) {
	t := &h.sessions
	mine := t.byOwner[o]
	if len(mine) >= h.opts.MaxSessionsPerPrincipal {
		if v, _ := lruIdle(mine); v != nil {
			return v, nil
		}
		return nil, errCallerFull
	}
	if len(t.byID) < h.opts.MaxSessions {
		return nil, nil
	}
	if v, _ := lruIdle(mine); v != nil {
		return v, nil
	}
	var victim *session
	var most int
	var oldest time.Time
	for other, set := range t.byOwner {
		if other == o || len(set) <= len(mine) || len(set) < most {
			continue
		}
		v, used := lruIdle(set)
		if v != nil && (victim == nil || len(set) > most || used.Before(oldest)) {
			victim, most, oldest = v, len(set), used
		}
	}
	if victim == nil {
		return nil, errTableFull
	}
	return victim, nil
}

// refuseSession answers a request whose session newSession refused.
func (h *Handler) refuseSession(w http.ResponseWriter, id *jsonrpc.ID, err error) {
	w.Header().Set("Retry-After", "5")
	if errors.Is(err, errCallerFull) {
		// Invalid Request rather than Internal Error: the caller can
		// fix it, and nothing is wrong with the server.
		h.httpError(w, http.StatusTooManyRequests, id, codeInvalidRequest,
			"Too many sessions: this caller holds %d sessions, the most allowed, and every one is busy; end one (DELETE it, or close its SSE stream) or reuse it",
			h.opts.MaxSessionsPerPrincipal)
		return
	}
	h.httpError(w, http.StatusServiceUnavailable, id, codeInternalError,
		"Service Unavailable: the server holds the most sessions it allows, all busy; retry later")
}

// closeSession ends a session (DELETE, a failed initialize, an expiry).
func (h *Handler) closeSession(s *session) {
	h.sessions.mu.Lock()
	h.sessions.remove(s)
	h.sessions.mu.Unlock()
	s.close(true)
}

// dropSession ends this replica's copy of a shared session, which the
// other replicas serve on.
func (h *Handler) dropSession(s *session) {
	h.sessions.mu.Lock()
	h.sessions.remove(s)
	h.sessions.mu.Unlock()
	s.close(!s.shared)
}

// SessionCount returns the number of open sessions.
func (h *Handler) SessionCount() int {
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	return len(h.sessions.byID)
}

// Shutdown stops taking requests, ends the GET streams, lets POST
// requests in flight finish until ctx ends, then ends every session.
// Call it before (or with) http.Server.Shutdown, which would otherwise
// wait for streams that never end by themselves.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.once.Do(func() {
		close(h.closing)
		h.closeCancel()
	})
	done := make(chan struct{})
	go func() {
		h.inflight.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("mcphttp: requests still running at shutdown: %w", ctx.Err())
	}
	h.sessions.mu.Lock()
	all := make([]*session, 0, len(h.sessions.byID))
	for _, s := range h.sessions.byID {
		all = append(all, s)
	}
	h.sessions.byID = map[string]*session{}
	h.sessions.byOwner = map[owner]map[*session]struct{}{}
	h.sessions.mu.Unlock()
	for _, s := range all {
		// A shared session lives on in the cluster: its clients carry on
		// with another replica.
		s.close(!s.shared)
	}
	return err
}
