package mcphttp

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/mcp"
)

// session is one client's Streamable HTTP (or legacy SSE) session.
type session struct {
	h          *Handler
	id         string
	principal  string
	owner      owner  // whom the session counts against, for the caps
	key        string // event-store key: principal and session together
	legacy     bool
	perRequest bool // one 2026-07-28 request: no event ids, no resumption
	// shared: the session lives in Options.Cluster, and this is this
	// replica's copy of it; ending the copy does not end the session.
	shared  bool
	touched time.Time // when the copy last postponed the record's expiry
	ss      *mcp.ServerSession
	view    httpmeta.Server // the server's answers before a request runs

	standalone *stream
	out        mcp.MessageWriter // where unsolicited messages go

	mu       sync.Mutex
	streams  map[string]*stream // POST streams still running
	next     int
	active   int // requests being served and streams open
	lastUsed time.Time
	idle     *time.Timer
	closed   bool
}

// newSessionID returns 192 random bits as 32 URL-safe characters, all
// visible ASCII as the spec requires.
func newSessionID() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// primes reports whether the client's revision knows priming events and
// retry fields: older SDK clients fail on an event with empty data.
func (s *session) primes() bool {
	v := s.ss.ProtocolVersion()
	return v != "" && v != mcp.Version20241105 && v != mcp.Version20250326 && v != mcp.Version20250618
}

// begin and end bracket activity; a session with none for the idle
// timeout is ended by a timer, which costs no goroutine while it waits.
func (s *session) begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active++
	s.lastUsed = time.Now()
	if s.idle != nil {
		s.idle.Stop()
	}
	return true
}

func (s *session) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	s.lastUsed = time.Now()
	if s.active == 0 && !s.closed {
		if s.idle == nil {
			s.idle = time.AfterFunc(s.h.opts.SessionIdleTimeout, s.expire)
		} else {
			s.idle.Reset(s.h.opts.SessionIdleTimeout)
		}
	}
}

func (s *session) expire() {
	s.mu.Lock()
	idle := s.active == 0 && time.Since(s.lastUsed) >= s.h.opts.SessionIdleTimeout
	s.mu.Unlock()
	if !idle {
		return
	}
	if s.shared {
		// Another replica may be serving it: only the copy goes, and the
		// cluster expires the record itself.
		s.h.logger.Debug("mcphttp: idle copy of a shared session dropped", "session", s.id)
		s.h.dropSession(s)
		return
	}
	s.h.logger.Debug("mcphttp: idle session expired", "session", s.id)
	s.h.closeSession(s)
}

// newStream registers the stream of a POST.
func (s *session) newStream() *stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	name := "p" + itoa(s.next)
	if s.shared {
		// Unique in the cluster, and naming the replica that runs it.
		name = "p" + s.h.opts.Cluster.Tag() + "." + itoa(s.next)
	}
	st := newStream(s, name, false)
	st.sse = s.h.opts.StreamResponses
	s.streams[st.name] = st
	return st
}

// issued reports whether name is a POST stream this session has had.
func (s *session) issued(name string) bool {
	if !strings.HasPrefix(name, "p") {
		return false
	}
	name = name[1:]
	if s.shared {
		var ok bool
		if name, ok = strings.CutPrefix(name, s.h.opts.Cluster.Tag()+"."); !ok {
			return false
		}
	}
	n, err := strconv.Atoi(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	return err == nil && n >= 1 && n <= s.next
}

func (s *session) dropStream(st *stream) {
	s.mu.Lock()
	delete(s.streams, st.name)
	s.mu.Unlock()
}

func (s *session) findStream(name string) *stream {
	if name == s.standalone.name {
		return s.standalone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.streams[name]
}

// close ends the session's streams and its engine session; end ends a
// shared session in the cluster too, where false drops this copy only.
func (s *session) close(end bool) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.idle != nil {
		s.idle.Stop()
	}
	streams := make([]*stream, 0, len(s.streams)+1)
	for _, st := range s.streams {
		streams = append(streams, st)
	}
	s.mu.Unlock()
	streams = append(streams, s.standalone)
	for _, st := range streams {
		st.mu.Lock()
		if st.c != nil {
			close(st.c.end)
			st.c = nil
		}
		st.mu.Unlock()
	}
	s.ss.Close()
	if !s.shared {
		s.h.opts.EventStore.Forget(s.key)
		return
	}
	if end {
		c := s.h.opts.Cluster
		ctx, cancel := clusterCtx()
		defer cancel()
		if err := errors.Join(c.DeleteSession(ctx, s.id), c.ForgetEvents(ctx, s.key)); err != nil {
			s.h.clusterLog.Warn("mcphttp: could not end a session in the cluster", "session", s.id, "error", err)
		}
		s.h.tellAll(&envelope{Kind: "end", Session: s.id, Principal: s.principal})
	}
}

// storeEvent stores an event of one of the session's streams: in the
// cluster when the session is shared (seq 0 of the GET stream asks the
// cluster to number it), else in the EventStore.
func (s *session) storeEvent(stream string, seq int, data []byte, final bool) error {
	if !s.shared {
		return s.h.opts.EventStore.Append(s.key, stream, seq, data)
	}
	ctx, cancel := clusterCtx()
	defer cancel()
	_, err := s.h.opts.Cluster.AppendEvent(ctx, s.key, stream, seq, data, final)
	return err
}

// replayEvents calls fn for the stored events of a stream after seq; a
// shared stream's empty final event (the end of a request that was not
// answered) is not passed on.
func (s *session) replayEvents(stream string, after int, fn func(seq int, data []byte) error) error {
	if !s.shared {
		return s.h.opts.EventStore.Replay(s.key, stream, after, fn)
	}
	ctx, cancel := clusterCtx()
	defer cancel()
	return s.h.opts.Cluster.Replay(ctx, s.key, stream, after, func(seq int, data []byte, final bool) error {
		if len(data) == 0 {
			return nil
		}
		return fn(seq, data)
	})
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// sessionTable holds the sessions by id, and by owner so that a caller's
// sessions are counted, and its idle ones found, without a scan of all.
type sessionTable struct {
	mu      sync.Mutex
	byID    map[string]*session
	byOwner map[owner]map[*session]struct{}
}

// owner is whom a session counts against: its principal, or for an
// anonymous caller the IP address it came from. The two fields keep a
// principal named like an address apart from that address.
type owner struct{ principal, addr string }

func ownerOf(principal string, r *http.Request) owner {
	if principal != "" {
		return owner{principal: principal}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return owner{addr: host}
}

func (t *sessionTable) get(id string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byID[id]
}

// add and remove keep both indexes; the caller holds t.mu. An owner's
// set goes with its last session, so the table holds nothing for callers
// that have left.
func (t *sessionTable) add(s *session) {
	t.byID[s.id] = s
	set := t.byOwner[s.owner]
	if set == nil {
		set = map[*session]struct{}{}
		t.byOwner[s.owner] = set
	}
	set[s] = struct{}{}
}

func (t *sessionTable) remove(s *session) {
	if t.byID[s.id] != s {
		return
	}
	delete(t.byID, s.id)
	set := t.byOwner[s.owner]
	delete(set, s)
	if len(set) == 0 {
		delete(t.byOwner, s.owner)
	}
}

// lruIdle returns the least recently used of the sessions with no request
// in flight and no open stream, or nil if every one is busy.
func lruIdle(set map[*session]struct{}) (*session, time.Time) {
	var victim *session
	var oldest time.Time
	for c := range set {
		c.mu.Lock()
		idle, used := c.active == 0 && !c.closed, c.lastUsed
		c.mu.Unlock()
		if idle && (victim == nil || used.Before(oldest)) {
			victim, oldest = c, used
		}
	}
	return victim, oldest
}
