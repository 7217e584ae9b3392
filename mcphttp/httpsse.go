package mcphttp

import (
	"context"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// The 2024-11-05 HTTP+SSE transport: GET SSEPath opens a stream whose
// first event, "endpoint", names the URL to POST messages to; every
// message from the server, replies included, flows on that stream.

// legacyStream writes a legacy session's messages as SSE events.
type legacyStream struct {
	mu   sync.Mutex
	c    *conn
	gone bool
}

func (l *legacyStream) WriteMessage(msg []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.gone {
		return mcp.ErrSessionClosed
	}
	return l.send("message", msg)
}

func (l *legacyStream) send(event string, data []byte) error {
	b := make([]byte, 0, len(data)+32)
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	l.c.rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := l.c.w.Write(b); err != nil {
		l.gone = true
		return err
	}
	if err := l.c.rc.Flush(); err != nil {
		l.gone = true
		return err
	}
	return nil
}

func (h *Handler) serveLegacy(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == h.opts.SSEPath && r.Method == http.MethodGet:
		h.serveLegacyStream(w, r)
	case r.URL.Path == h.opts.MessagePath && r.Method == http.MethodPost:
		h.serveLegacyMessage(w, r)
	case r.URL.Path == h.opts.SSEPath:
		h.methodNotAllowed(w, "GET", "open the stream with GET")
	default:
		h.methodNotAllowed(w, "POST", "send messages with POST")
	}
}

func (h *Handler) serveLegacyStream(w http.ResponseWriter, r *http.Request) {
	if !acceptsSSE(r.Header.Get("Accept")) && r.Header.Get("Accept") != "" {
		h.httpError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "Not Acceptable: the stream needs Accept: text/event-stream")
		return
	}
	ls := &legacyStream{c: newConn(w)}
	s, err := h.newSession(r, true, func(*session) mcp.MessageWriter { return ls })
	if err != nil {
		h.refuseSession(w, nil, err)
		return
	}
	defer h.closeSession(s)
	s.begin()
	defer s.end()
	// Handlers still running may try to write after the stream ends; the
	// ResponseWriter must not be touched once this handler returns.
	defer func() {
		ls.mu.Lock()
		ls.gone = true
		ls.mu.Unlock()
	}()
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	endpoint := h.opts.MessagePath + "?sessionId=" + url.QueryEscape(s.id)
	ls.mu.Lock()
	err = ls.send("endpoint", []byte(endpoint))
	ls.mu.Unlock()
	if err != nil {
		return
	}
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.closing:
			return
		case <-s.ss.Done():
			return
		case <-tick.C:
			ls.mu.Lock()
			if !ls.gone {
				ls.c.w.Write([]byte(": keepalive\n\n"))
				ls.c.rc.Flush()
			}
			ls.mu.Unlock()
		}
	}
}

func (h *Handler) serveLegacyMessage(w http.ResponseWriter, r *http.Request) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		h.httpError(w, http.StatusUnsupportedMediaType, nil, codeInvalidRequest, "Unsupported Media Type: the Content-Type must be application/json")
		return
	}
	s := h.sessions.get(r.URL.Query().Get("sessionId"))
	if s == nil || !s.legacy || s.principal != h.opts.Principal(r) {
		h.httpError(w, http.StatusNotFound, nil, codeSessionNotFound, "Not Found: no open SSE stream for this sessionId; open one with GET %s", h.opts.SSEPath)
		return
	}
	raw, ok := h.readRaw(w, r)
	if !ok {
		return
	}
	if !s.begin() {
		h.httpError(w, http.StatusNotFound, nil, codeSessionNotFound, "Not Found: the session has ended")
		return
	}
	ctx := context.WithoutCancel(r.Context())
	// A notification or response is handled before the 202, so that the
	// client's next POST (a request after notifications/initialized, say)
	// finds its effect; requests run on their own and reply on the stream.
	if m, err := jsonrpc.DecodeMessage(raw); err == nil && m.Kind() != jsonrpc.KindRequest && !jsonrpc.IsBatch(raw) {
		s.ss.Handle(ctx, raw, s.out)
		s.end()
		w.WriteHeader(http.StatusAccepted)
		w.Write([]byte("Accepted"))
		return
	}
	h.inflight.Add(1)
	// Replies, parse errors included, travel on the stream.
	go func() {
		defer h.inflight.Done()
		defer s.end()
		s.ss.Handle(ctx, raw, s.out)
	}()
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte("Accepted"))
}
