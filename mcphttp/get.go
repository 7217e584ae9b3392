package mcphttp

import (
	"errors"
	"net/http"
	"time"
)

// serveGET opens the session's standalone stream, or resumes a stream
// from the event after Last-Event-ID.
func (h *Handler) serveGET(w http.ResponseWriter, r *http.Request) {
	if !acceptsSSE(r.Header.Get("Accept")) {
		h.httpError(w, http.StatusNotAcceptable, nil, codeInvalidRequest, "Not Acceptable: a GET stream needs Accept: text/event-stream")
		return
	}
	if _, ok := h.checkProtocolHeader(w, r, nil); !ok {
		return
	}
	s := h.lookup(w, r, nil)
	if s == nil {
		return
	}
	if !s.begin() {
		h.httpError(w, http.StatusNotFound, nil, codeSessionNotFound, "Not Found: session ended; start a new one with initialize")
		return
	}
	defer s.end()
	c := newConn(w)
	var st *stream
	last := r.Header.Get(headerLastEventID)
	if s.shared {
		name, seq := "g", -1
		var err error
		if last != "" {
			name, seq, err = parseEventID(last)
		}
		if err == nil && (name == "g" || s.findStream(name) == nil && !s.issued(name)) {
			h.serveSharedStream(w, r, s, name, seq)
			return
		}
	}
	if last != "" {
		name, seq, err := parseEventID(last)
		if err == nil {
			st = s.findStream(name)
			if st == nil && s.issued(name) {
				// A finished POST stream still replays from the store.
				st = &stream{sess: s, name: name, replied: true, done: make(chan struct{})}
			}
		}
		if err != nil || st == nil {
			h.httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: Last-Event-ID %q is not an event id of this server", last)
			return
		}
		if err := st.replay(c, seq); err != nil {
			if errors.Is(err, ErrEventsGone) {
				h.logger.Debug("mcphttp: resumption asked for events no longer stored", "session", s.id, "last", last)
			}
			return
		}
		st.mu.Lock()
		attached := st.c == c
		st.mu.Unlock()
		if !attached {
			return // the stream had finished: the replay was all of it
		}
	} else {
		st = s.standalone
		st.mu.Lock()
		busy := st.c != nil
		if !busy {
			st.attachLocked(c)
		}
		st.mu.Unlock()
		if busy {
			h.httpError(w, http.StatusConflict, nil, codeInvalidRequest, "Conflict: this session already has a GET stream open; only one is allowed")
			return
		}
	}
	defer st.release(c)
	tick := time.NewTicker(h.opts.KeepAlive)
	defer tick.Stop()
	for {
		select {
		case <-st.done:
			return
		case <-c.end:
			return
		case <-r.Context().Done():
			return
		case <-h.closing:
			return
		case <-tick.C:
			st.tick(c)
		}
	}
}

// serveDELETE ends a session.
func (h *Handler) serveDELETE(w http.ResponseWriter, r *http.Request) {
	if _, ok := h.checkProtocolHeader(w, r, nil); !ok {
		return
	}
	s := h.lookup(w, r, nil)
	if s == nil {
		return
	}
	h.closeSession(s)
	w.WriteHeader(http.StatusOK)
}
