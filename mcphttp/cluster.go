package mcphttp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// Cluster shares a Handler's sessions with the other replicas of the same
// server behind a load balancer, so that any replica serves any request of
// any session without sticky routing ([Options.Cluster]). Package
// [github.com/mcpgate/mcpgate/cluster] implements it on Redis.
//
// What the handler keeps where:
//   - The session record ([SessionRecord]) is written once at initialize
//     and whenever the client changes its state; a replica that gets a
//     request for a session it does not hold loads it and serves the
//     request from a local copy.
//   - Events of SSE streams are appended to the cluster, and a stream is
//     followed from any replica: a client resumes with Last-Event-ID
//     wherever its GET lands, and the GET stream's messages, which any
//     replica may send, reach the one replica holding it.
//   - Messages between replicas carry a client's answers to a request of
//     another replica, and its notifications (a cancellation of a request
//     running elsewhere, say).
//
// A plain request and its JSON reply cost no round trip to the cluster:
// records change at initialize and at setLevel and subscriptions, events
// are stored only once a response turns into an SSE stream, and a local
// copy is refreshed in the cluster at most once a minute.
type Cluster interface {
	// Tag is this replica's short unique name, letters and digits only;
	// the ids it mints carry it, so that other replicas route to it.
	Tag() string
	// Alive reports whether the replica tagged tag is running.
	Alive(ctx context.Context, tag string) bool

	// SaveSession writes a session record, to expire after ttl unused.
	SaveSession(ctx context.Context, rec *SessionRecord, ttl time.Duration) error
	// LoadSession reads a session record; nil and no error when there
	// is none (unknown, ended or expired).
	LoadSession(ctx context.Context, id string) (*SessionRecord, error)
	// TouchSession postpones a record's expiry.
	TouchSession(ctx context.Context, id string, ttl time.Duration) error
	// DeleteSession removes a record.
	DeleteSession(ctx context.Context, id string) error

	// AppendEvent stores an event of a stream (key scopes the session's
	// streams to its principal) and tells the stream's followers. seq 0
	// asks the cluster to number it, for a stream that several replicas
	// write (the GET stream); AppendEvent returns the event's number.
	// final marks the last event of the stream. An event numbered 0
	// heads the stream: it is never replayed, but [Cluster.Head] returns
	// it.
	AppendEvent(ctx context.Context, key, stream string, seq int, data []byte, final bool) (int, error)
	// Head returns the data of the event numbered 0 of a stream, and
	// whether the stream exists.
	Head(ctx context.Context, key, stream string) ([]byte, bool, error)
	// Replay calls fn for the stored events of a stream after seq, in
	// order, and returns; [ErrEventsGone] if some were dropped.
	Replay(ctx context.Context, key, stream string, after int, fn func(seq int, data []byte, final bool) error) error
	// Follow is Replay, then fn for each event appended after, in order
	// and once each, until fn returns an error, a final event has been
	// delivered, or ctx ends.
	Follow(ctx context.Context, key, stream string, after int, fn func(seq int, data []byte, final bool) error) error
	// LastSeq returns the number of a stream's latest event (0 if none).
	LastSeq(ctx context.Context, key, stream string) (int, error)
	// ForgetEvents drops every stream of key.
	ForgetEvents(ctx context.Context, key string) error

	// ClaimStream makes holder the one connection that carries a stream
	// (the GET stream of a session) for ttl, unless another holder on a
	// running replica has it; it reports whether holder has it. Claiming
	// again extends it. ReleaseStream gives it up if holder has it.
	ClaimStream(ctx context.Context, key, stream, holder string, ttl time.Duration) (bool, error)
	ReleaseStream(ctx context.Context, key, stream, holder string) error

	// Send delivers msg to the replica tagged tag, and Broadcast to every
	// replica but this one; delivery is at most once. Receive sets the
	// function called for each message delivered here, once, before any
	// is sent.
	Send(ctx context.Context, tag string, msg []byte) error
	Broadcast(ctx context.Context, msg []byte) error
	Receive(fn func(msg []byte))
}

// SessionRecord is what a Cluster keeps of a session: enough for any
// replica to serve its requests.
type SessionRecord struct {
	ID        string `json:"id"`
	Principal string `json:"principal,omitempty"`
	// Key scopes the session's events (its principal and its id).
	Key string `json:"key"`
	// Initialize is what the client sent in initialize, with the revision
	// the server chose in its protocolVersion.
	Initialize *mcp.InitializeParams `json:"initialize"`
	State      mcp.SessionState      `json:"state,omitzero"`
	Created    time.Time             `json:"created"`
}

// CodeReplicaStopped is the error of a request whose replica stopped
// before it answered (killed, say): the same code as the gateway's for a
// call whose upstream connection broke, for the same reason seen from the
// client. The request may or may not have taken effect.
const CodeReplicaStopped = -32012

// touchEvery bounds how often a local copy of a session postpones the
// record's expiry: often enough that a session used only here does not
// expire in the cluster, rarely enough to cost nothing per request.
func (h *Handler) touchEvery() time.Duration {
	return min(time.Minute, h.opts.SessionIdleTimeout/4)
}

// clusterTimeout bounds one operation on the cluster, so that a store
// that stopped answering fails requests instead of holding them.
const clusterTimeout = 5 * time.Second

func clusterCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), clusterTimeout)
}

// envelope is a message between replicas about one session.
type envelope struct {
	Kind      string            `json:"k"` // "msg": a client's message; "end": the session ended; "state": the client changed its state
	From      string            `json:"f"`
	Session   string            `json:"s"`
	Principal string            `json:"p,omitempty"`
	Message   json.RawMessage   `json:"m,omitempty"`
	State     *mcp.SessionState `json:"st,omitempty"`
}

func (h *Handler) sendEnvelope(tag string, e *envelope) {
	e.From = h.opts.Cluster.Tag()
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	ctx, cancel := clusterCtx()
	defer cancel()
	if tag == "" {
		err = h.opts.Cluster.Broadcast(ctx, b)
	} else {
		err = h.opts.Cluster.Send(ctx, tag, b)
	}
	if err != nil {
		h.logger.Warn("mcphttp: could not tell the other replicas", "kind", e.Kind, "session", e.Session, "error", err)
	}
}

// receive handles a message from another replica.
func (h *Handler) receive(b []byte) {
	var e envelope
	if json.Unmarshal(b, &e) != nil || e.From == h.opts.Cluster.Tag() {
		return
	}
	s := h.sessions.get(e.Session)
	if s == nil || s.principal != e.Principal {
		return // no copy here: nothing to tell
	}
	switch e.Kind {
	case "end":
		h.dropSession(s)
	case "state":
		if e.State != nil {
			s.ss.SetState(*e.State)
		}
	case "msg":
		msg, err := jsonrpc.DecodeMessage(e.Message)
		if err != nil {
			return
		}
		ctx := mcp.WithPrincipal(context.Background(), s.principal)
		s.ss.HandleMessage(ctx, msg, s.standalone)
	}
}

// sessionOptions are a session's options in the cluster: its requests to
// the client carry this replica's tag, and its state is saved.
func (h *Handler) sessionOptions(s *session, opts *mcp.SessionOptions) *mcp.SessionOptions {
	if opts == nil {
		opts = &mcp.SessionOptions{}
	}
	opts.ID = s.id
	if h.opts.Cluster != nil {
		opts.RequestIDPrefix = h.opts.Cluster.Tag() + "."
		opts.StateChanged = func(ss *mcp.ServerSession) { h.stateChanged(s) }
	}
	return opts
}

// saveSession writes the record of a session whose initialize succeeded,
// before the reply reaches the client, whose next request may go to any
// replica.
func (h *Handler) saveSession(s *session) error {
	params := s.ss.InitializeParams()
	if params == nil {
		return errors.New("mcphttp: no initialize params to save")
	}
	p := *params
	p.ProtocolVersion = s.ss.ProtocolVersion()
	rec := &SessionRecord{ID: s.id, Principal: s.principal, Key: s.key, Initialize: &p, State: s.ss.State(), Created: time.Now().UTC()}
	ctx, cancel := clusterCtx()
	defer cancel()
	return h.opts.Cluster.SaveSession(ctx, rec, h.opts.SessionIdleTimeout)
}

// stateChanged saves a session whose client changed its state, and tells
// the replicas that hold copies of it.
func (h *Handler) stateChanged(s *session) {
	if err := h.saveSession(s); err != nil {
		h.logger.Warn("mcphttp: could not save a session's state in the cluster", "session", s.id, "error", err)
		return
	}
	st := s.ss.State()
	h.sendEnvelope("", &envelope{Kind: "state", Session: s.id, Principal: s.principal, State: &st})
}

// copyMu serializes making local copies, so that two requests of one
// session arriving together make one.
var copyMu sync.Mutex

// localCopy makes a local copy of a session that another replica began,
// from its record, or returns nil when the cluster has none for the
// caller (or cannot be asked: the error).
func (h *Handler) localCopy(r *http.Request, id string) (*session, error) {
	ctx, cancel := clusterCtx()
	defer cancel()
	rec, err := h.opts.Cluster.LoadSession(ctx, id)
	if err != nil || rec == nil || rec.Initialize == nil {
		return nil, err
	}
	if rec.Principal != h.opts.Principal(r) || rec.Key != rec.Principal+":"+rec.ID {
		return nil, nil
	}
	copyMu.Lock()
	defer copyMu.Unlock()
	if s := h.sessions.get(id); s != nil {
		return s, nil
	}
	s := &session{h: h, id: id, principal: rec.Principal, owner: ownerOf(rec.Principal, r), key: rec.Key, shared: true, streams: map[string]*stream{}, lastUsed: time.Now(), touched: time.Now()}
	s.standalone = newStream(s, "g", true)
	t := &h.sessions
	t.mu.Lock()
	victim, err := h.makeRoom(s.owner)
	if err != nil {
		t.mu.Unlock()
		return nil, err
	}
	if victim != nil {
		t.remove(victim)
		go victim.close(false)
	}
	t.add(s)
	t.mu.Unlock()
	s.out = s.standalone
	st := rec.State
	s.ss = h.server.NewSession(s.out, h.sessionOptions(s, &mcp.SessionOptions{Initialized: rec.Initialize, State: &st}))
	h.logger.Debug("mcphttp: serving a session begun on another replica", "session", id)
	return s, nil
}

// touch postpones the session's expiry in the cluster, at most once per
// touchEvery.
func (s *session) touch() {
	h := s.h
	if !s.shared {
		return
	}
	s.mu.Lock()
	due := time.Since(s.touched) >= h.touchEvery()
	if due {
		s.touched = time.Now()
	}
	s.mu.Unlock()
	if !due {
		return
	}
	ctx, cancel := clusterCtx()
	defer cancel()
	if err := h.opts.Cluster.TouchSession(ctx, s.id, h.opts.SessionIdleTimeout); err != nil {
		h.logger.Debug("mcphttp: could not refresh a session in the cluster", "session", s.id, "error", err)
	}
}

// routeClientMessage sends a client's message that another replica must
// see there: an answer to a request that replica made (its id carries the
// replica's tag), or a notification, which may concern a request running
// anywhere (notifications/cancelled) or the session itself
// (notifications/initialized). It reports whether the message is for
// another replica only.
func (h *Handler) routeClientMessage(s *session, msg *jsonrpc.Message, raw []byte) bool {
	if h.opts.Cluster == nil || !s.shared {
		return false
	}
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		var id string
		if !msg.ID.IsString() || json.Unmarshal(msg.ID.Raw(), &id) != nil {
			return false
		}
		tag, _, ok := strings.Cut(id, ".")
		if !ok || tag == h.opts.Cluster.Tag() {
			return false
		}
		h.sendEnvelope(tag, &envelope{Kind: "msg", Session: s.id, Principal: s.principal, Message: raw})
		return true
	case jsonrpc.KindNotification:
		h.sendEnvelope("", &envelope{Kind: "msg", Session: s.id, Principal: s.principal, Message: raw})
	}
	return false
}
