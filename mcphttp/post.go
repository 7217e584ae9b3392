package mcphttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// body is a parsed POST body.
type body struct {
	raw     []byte
	msg     *jsonrpc.Message // nil for a batch
	batch   bool
	request bool // it needs a reply
	id      *jsonrpc.ID
}

func (h *Handler) servePOST(w http.ResponseWriter, r *http.Request) {
	if !acceptsBoth(r.Header.Get("Accept")) {
		h.httpError(w, http.StatusNotAcceptable, nil, codeInvalidRequest,
			"Not Acceptable: the Accept header must allow both application/json and text/event-stream")
		return
	}
	if mt, ok := plainMediaType(r.Header.Get("Content-Type")); !ok || mt != "application/json" {
		h.httpError(w, http.StatusUnsupportedMediaType, nil, codeInvalidRequest,
			"Unsupported Media Type: the Content-Type must be application/json")
		return
	}
	b, ok := h.readBody(w, r)
	if !ok {
		return
	}
	// The era is the body's: a request whose _meta claims a revision is
	// per-request, and its header is checked against the claim.
	if b.request && !b.batch && httpmeta.PerRequestClaim(b.msg.Params) {
		if h.authorize(w, r, b) {
			h.servePerRequest(w, r, b)
		}
		return
	}
	if b.request && !b.batch && b.msg.Method == "ping" && r.Header.Get(headerSessionID) == "" && slices.Contains(mcp.PerRequestVersions, r.Header.Get(headerProtocolVersion)) {
		// ping is gone from 2026-07-28, but clients of that revision
		// (the Go SDK's v1.8.0) still send it, without _meta: a liveness
		// check costs nothing to answer.
		if h.authorize(w, r, b) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(jsonrpc.AppendResult(nil, *b.id, []byte("{}")))
		}
		return
	}
	if !b.request && !b.batch && r.Header.Get(headerSessionID) == "" && (httpmeta.PerRequestClaim(b.msg.Params) || slices.Contains(mcp.PerRequestVersions, r.Header.Get(headerProtocolVersion))) {
		// A 2026-07-28 client's notification (a cancellation, say): with
		// no session there is nothing it could refer to, and closing the
		// response stream already cancelled the request it names.
		if h.authorize(w, r, b) {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	version, ok := h.checkProtocolHeader(w, r, b)
	if !ok {
		return
	}
	if !h.authorize(w, r, b) {
		return
	}
	if h.opts.Stateless {
		h.serveStateless(w, r, b, version)
		return
	}
	h.inflight.Add(1)
	defer h.inflight.Done()

	var s *session
	if !b.batch && b.request && b.msg.Method == "initialize" && len(r.Header.Values(headerSessionID)) == 0 {
		var err error
		s, err = h.newSession(r, false, func(s *session) mcp.MessageWriter { return s.standalone })
		if err != nil {
			h.refuseSession(w, b.id, err)
			return
		}
		w.Header().Set(headerSessionID, s.id)
	} else if s = h.lookup(w, r, b.id); s == nil {
		return
	}
	if !s.begin() {
		h.httpError(w, http.StatusNotFound, b.id, codeSessionNotFound, "Not Found: session ended; start a new one with initialize")
		return
	}
	defer s.end()
	if b.batch && s.ss.ProtocolVersion() != mcp.Version20250326 {
		h.httpError(w, http.StatusBadRequest, nil, codeInvalidRequest,
			"Bad Request: JSON-RPC batches are accepted only in sessions at protocol revision 2025-03-26; send one message per POST")
		return
	}
	h.dispatch(w, r, s, b)
}

// readRaw reads the body, answering 413 over the size limit and 400 when
// it is not received in time.
func (h *Handler) readRaw(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	// A declared length over the limit is refused before any of the body
	// is read: a slow sender of a huge body must not hold the request
	// until the read deadline.
	if r.ContentLength > h.opts.MaxBodySize {
		w.Header().Set("Connection", "close")
		h.httpError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest,
			"Request Entity Too Large: the body exceeds the %d-byte limit", h.opts.MaxBodySize)
		return nil, false
	}
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(h.opts.BodyReadTimeout))
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.opts.MaxBodySize))
	if err != nil {
		// The rest of the body is not read, so the connection cannot
		// carry another request; net/http would otherwise try to drain
		// it before answering.
		w.Header().Set("Connection", "close")
	} else {
		rc.SetReadDeadline(time.Time{})
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		h.httpError(w, http.StatusRequestEntityTooLarge, nil, codeInvalidRequest,
			"Request Entity Too Large: the body exceeds the %d-byte limit", h.opts.MaxBodySize)
		return nil, false
	case err != nil:
		h.httpError(w, http.StatusBadRequest, nil, codeParseError, "Bad Request: the body could not be read: %v", err)
		return nil, false
	}
	return raw, true
}

// readBody reads and parses the body; what is not JSON-RPC gets 400.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) (*body, bool) {
	raw, ok := h.readRaw(w, r)
	if !ok {
		return nil, false
	}
	b := &body{raw: raw}
	if jsonrpc.IsBatch(raw) {
		elems, err := jsonrpc.SplitBatch(raw)
		if err != nil {
			berr := jsonrpc.AsError(err)
			h.httpError(w, http.StatusBadRequest, nil, berr.Code, "%s", berr.Message)
			return nil, false
		}
		b.batch = true
		for _, e := range elems {
			m, err := jsonrpc.DecodeMessage(e)
			var de *jsonrpc.DecodeError
			if errors.As(err, &de) && de.Reply || err == nil && m.Kind() == jsonrpc.KindRequest {
				b.request = true
			}
		}
		return b, true
	}
	m, err := jsonrpc.DecodeMessage(raw)
	var de *jsonrpc.DecodeError
	if errors.As(err, &de) {
		var id *jsonrpc.ID
		if !de.ID.IsZero() {
			id = &de.ID
		}
		h.httpError(w, http.StatusBadRequest, id, de.Err.Code, "%s", de.Err.Message)
		return nil, false
	}
	b.msg = m
	if m.Kind() == jsonrpc.KindRequest {
		b.request = true
		b.id = &m.ID
	}
	return b, true
}

// authorize runs Options.Authorize on every message of the body.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, b *body) bool {
	if h.opts.Authorize == nil {
		return true
	}
	msgs := []*jsonrpc.Message{b.msg}
	if b.batch {
		msgs = msgs[:0]
		elems, _ := jsonrpc.SplitBatch(b.raw)
		for _, e := range elems {
			if m, err := jsonrpc.DecodeMessage(e); err == nil {
				msgs = append(msgs, m)
			}
		}
	}
	for _, m := range msgs {
		if m.Kind() == jsonrpc.KindResponse {
			continue
		}
		err := h.opts.Authorize(r, m)
		if err == nil {
			continue
		}
		se, ok := err.(*StatusError)
		if !ok {
			se = &StatusError{Status: http.StatusForbidden, Code: codeInvalidRequest, Message: "Forbidden: " + err.Error()}
		}
		for k, v := range se.Header {
			w.Header()[k] = v
		}
		code := se.Code
		if code == 0 {
			code = codeInvalidRequest
		}
		h.httpError(w, se.Status, b.id, code, "%s", se.Message)
		return false
	}
	return true
}

// dispatch hands a parsed body to the session and writes what comes back:
// 202 for notifications and responses, else the reply as JSON or SSE.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, s *session, b *body) {
	// Handlers outlive the HTTP request (a dropped connection is not a
	// cancellation in these revisions) but keep its values, such as the
	// authenticated principal.
	ctx := context.WithoutCancel(r.Context())
	if s.perRequest {
		// In 2026-07-28 closing the response stream is the cancellation
		// (of a subscriptions/listen, say).
		ctx = r.Context()
	}
	ctx = mcp.WithPrincipal(ctx, s.principal)
	s.touch()
	if !b.request {
		if b.batch || !h.routeClientMessage(s, b.msg, b.raw) {
			s.ss.Handle(ctx, b.raw, s.standalone)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if tag := h.taskOwner(b.msg); tag != "" && !b.batch {
		var of *session
		if !s.perRequest {
			of = s
		}
		h.forwardTask(w, r, of, b, tag)
		return
	}
	if h.opts.Route != nil && s.shared && !b.batch {
		if tag := h.opts.Route(ctx, s.id, b.msg); tag != "" && tag != h.opts.Cluster.Tag() {
			h.forwardRun(w, r, ctx, s, b, tag)
			return
		}
	}
	st := s.newStream()
	st.reqID = b.id
	initialize := !b.batch && b.msg.Method == "initialize" && w.Header().Get(headerSessionID) == s.id
	st.initialize = initialize
	c := newConn(w)
	st.attach(c)
	defer st.release(c)
	ctx = context.WithValue(ctx, streamKey{}, st)
	// The request may outlive this HTTP response (a detached stream), so
	// it counts as activity and as work to finish at shutdown on its own.
	s.begin()
	h.inflight.Add(1)
	run := func() {
		defer h.inflight.Done()
		defer s.end()
		if b.batch {
			s.ss.Handle(ctx, b.raw, st)
		} else {
			s.ss.HandleMessage(ctx, b.msg, st)
		}
		// A request cancelled by the client gets no reply; the HTTP
		// response still has to end.
		st.finish()
		st.mu.Lock()
		if !st.replied {
			st.replied = true
			close(st.done)
		}
		st.mu.Unlock()
		// Kept until now so that a client whose connection was closed
		// can resume the stream while the request runs.
		s.dropStream(st)
		if initialize && s.ss.ProtocolVersion() == "" {
			// The initialize failed, so the session never began: it must
			// not hold a slot until it expires.
			h.closeSession(s)
		}
	}
	h.runInline(st, c, run)
}

// runInline runs a request on the goroutine serving its POST. Handing it
// to another goroutine and waiting for the reply, as this did, cost about
// half of a quick call's time in the handler (ServeHTTPToolsCall/json
// 14.2 -> 7.6 µs) in the hand-off and the wake-up back. A timer keeps a
// long request's connection alive meanwhile. A client that leaves needs
// nothing here: nothing cancels a legacy request then, a write to its
// connection fails quietly, and an SSE stream's events are stored for it
// to resume from elsewhere; a 2026-07-28 request's context is the HTTP
// request's, which ends.
func (h *Handler) runInline(st *stream, c *conn, run func()) {
	var ended atomic.Bool
	var t *time.Timer
	t = time.AfterFunc(h.opts.KeepAlive, func() {
		if ended.Load() {
			return
		}
		st.tick(c)
		if !ended.Load() {
			t.Reset(h.opts.KeepAlive) // a Stop in between is undone once at most: ended stops it next time
		}
	})
	run()
	ended.Store(true)
	t.Stop()
	// A request cancelled by the client got no reply, and its response
	// still needs a status.
	st.mu.Lock()
	if !c.sse && st.c == c && !headerWritten(c) {
		c.w.WriteHeader(http.StatusAccepted)
	}
	st.mu.Unlock()
}

// headerWritten reports whether a JSON reply was already written to c.
func headerWritten(c *conn) bool {
	return c.w.Header().Get("Content-Type") != ""
}

// serveStateless answers one POST with a session of its own, discarded
// afterwards: initialize is answered as usual (without a session id), and
// other requests are served as from a client initialized at the revision
// in MCP-Protocol-Version, with no client capabilities.
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, b *body, version string) {
	h.inflight.Add(1)
	defer h.inflight.Done()
	opts := &mcp.SessionOptions{}
	if b.batch || b.msg.Method != "initialize" {
		opts.Initialized = &mcp.InitializeParams{ProtocolVersion: version}
	}
	s := h.oneRequestSession(r, "stateless", opts)
	defer s.close(true)
	h.dispatch(w, r, s, b)
}

// oneRequestSession is a session for one POST only, kept in no table: no
// id is minted or echoed, and nothing outlives the request.
func (h *Handler) oneRequestSession(r *http.Request, kind string, opts *mcp.SessionOptions) *session {
	s := &session{h: h, principal: h.opts.Principal(r), streams: map[string]*stream{}, perRequest: kind == "per-request"}
	s.key = s.principal + ":" + kind + ":" + newSessionID()
	s.standalone = newStream(s, "g", true)
	if h.opts.Cluster != nil {
		// Tasks that its request creates name this replica.
		opts.RequestIDPrefix = h.opts.Cluster.Tag() + "."
	}
	s.ss = h.server.NewSession(s.standalone, opts)
	return s
}
