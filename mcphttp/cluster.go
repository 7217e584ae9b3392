package mcphttp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
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
	// StateKey is a secret that every replica has the same of: it signs
	// the request states of 2026-07-28 input requests (see
	// mcp.Server.ShareStateKey), so that any replica opens the state
	// another issued.
	StateKey() []byte
	// Alive reports whether the replica tagged tag is running.
	Alive(ctx context.Context, tag string) bool
	// Peers returns the tags of the other replicas running.
	Peers(ctx context.Context) ([]string, error)

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
	// AppendOnce appends to the stream of each key of events (a stream
	// several replicas write: the GET stream) the key's event, numbering
	// it, unless an event named once was appended to that stream already
	// (the same news, told by another replica). It may send them
	// together: news reaches every session at once.
	AppendOnce(ctx context.Context, stream, once string, events map[string][]byte) error
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
	// OnRecover sets the function called when the cluster answers again
	// after it did not: the handler saves its sessions again then, in
	// case the store lost them.
	OnRecover(fn func())
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
	// Kind is "msg": a client's message; "end": the session ended;
	// "state": the client changed its state; "call", "ack" and "reply":
	// a request about a task, handed to the replica that runs it.
	Kind      string            `json:"k"`
	From      string            `json:"f"`
	Call      string            `json:"c,omitempty"` // names a call, its ack and its reply
	Session   string            `json:"s"`
	Principal string            `json:"p,omitempty"`
	Message   json.RawMessage   `json:"m,omitempty"`
	State     *mcp.SessionState `json:"st,omitempty"`
	Method    string            `json:"mt,omitempty"` // "changed": the notification's method
	Change    string            `json:"ch,omitempty"` // "changed": names the change, once for all replicas
	URI       string            `json:"u,omitempty"`  // "changed": the updated resource
	Stream    string            `json:"sn,omitempty"` // "run": the stream to answer on
	Carry     []byte            `json:"cx,omitempty"` // "call", "run": Options.CarryContext's save
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
		h.clusterLog.Warn("mcphttp: could not tell the other replicas", "kind", e.Kind, "session", e.Session, "error", err)
	}
}

// receive handles a message from another replica.
func (h *Handler) receive(b []byte) {
	var e envelope
	if json.Unmarshal(b, &e) != nil || e.From == h.opts.Cluster.Tag() {
		return
	}
	switch e.Kind {
	case "call":
		h.sendEnvelope(e.From, &envelope{Kind: "ack", Call: e.Call})
		go h.answerCall(&e)
		return
	case "run":
		go h.runFor(&e)
		return
	case "changed":
		go h.deliverChange(e.Change, e.Method, e.URI)
		return
	case "ack", "reply":
		if v, ok := h.calls.Load(e.Call); ok {
			select {
			case v.(chan *envelope) <- &e:
			default:
			}
		}
		return
	}
	if e.Call != "" && (e.Kind == "state" || e.Kind == "end") {
		// Applied below, before the sender hears of it: the sender
		// waits for every replica (see tellAll).
		defer h.sendEnvelope(e.From, &envelope{Kind: "ack", Call: e.Call})
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
		h.clusterLog.Warn("mcphttp: could not save a session's state in the cluster", "session", s.id, "error", err)
		return
	}
	st := s.ss.State()
	h.tellAll(&envelope{Kind: "state", Session: s.id, Principal: s.principal, State: &st})
}

// peersAck bounds how long a change to a session waits for the other
// replicas to apply it: past it, a replica that did not answer may serve
// the client's next request with the session as it was.
const peersAck = 2 * time.Second

// tellAll tells every other replica of a change to a session (its state,
// its end) and returns once each running replica has applied it, so that
// the client's next request, wherever it lands, sees the change: as with
// one process, what the client was answered holds from then on.
func (h *Handler) tellAll(e *envelope) {
	ctx, cancel := context.WithTimeout(context.Background(), peersAck)
	defer cancel()
	peers, err := h.opts.Cluster.Peers(ctx)
	if err != nil || len(peers) == 0 {
		h.sendEnvelope("", e)
		return
	}
	e.Call = newSessionID()
	ch := make(chan *envelope, len(peers)+1)
	h.calls.Store(e.Call, ch)
	defer h.calls.Delete(e.Call)
	h.sendEnvelope("", e)
	for need := len(peers); need > 0; {
		select {
		case a := <-ch:
			if a.Kind == "ack" {
				need--
			}
		case <-ctx.Done():
			h.clusterLog.Warn("mcphttp: not every replica acknowledged a change to a session", "kind", e.Kind, "session", e.Session, "missing", need)
			return
		}
	}
}

// localCopy makes a local copy of a session that another replica began,
// from its record, or returns nil when the cluster has none for the
// caller (or cannot be asked: the error).
func (h *Handler) localCopy(r *http.Request, id string) (*session, error) {
	principal := h.opts.Principal(r)
	return h.copyOf(id, principal, ownerOf(principal, r))
}

// copyOf is localCopy for principal's session id, counted against o.
func (h *Handler) copyOf(id, principal string, o owner) (*session, error) {
	ctx, cancel := clusterCtx()
	defer cancel()
	rec, err := h.opts.Cluster.LoadSession(ctx, id)
	if err != nil || rec == nil || rec.Initialize == nil {
		return nil, err
	}
	if rec.Principal != principal || rec.Key != rec.Principal+":"+rec.ID {
		return nil, nil
	}
	h.copyMu.Lock()
	defer h.copyMu.Unlock()
	if s := h.sessions.get(id); s != nil {
		return s, nil
	}
	s := &session{h: h, id: id, principal: rec.Principal, owner: o, key: rec.Key, shared: true, streams: map[string]*stream{}, lastUsed: time.Now(), touched: time.Now()}
	s.standalone = newStream(s, "g", true)
	s.out = s.standalone
	st := rec.State
	s.ss = h.server.NewSession(s.out, h.sessionOptions(s, &mcp.SessionOptions{Initialized: rec.Initialize, State: &st}))
	if err := h.addSession(s); err != nil {
		s.ss.Close()
		return nil, err
	}
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

// Tasks run on the replica whose request created them; their ids carry
// its tag (see mcp.SessionOptions.RequestIDPrefix). A request about a
// task that another replica runs is handed to it, and its answer comes
// back the same way.

// taskMethods are the requests that the replica running a task answers.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/result": true, "tasks/cancel": true, "tasks/update": true}

// taskOwner returns the tag of the replica running the task that msg is
// about, when that is another replica.
func (h *Handler) taskOwner(msg *jsonrpc.Message) string {
	if h.opts.Cluster == nil || msg == nil || !taskMethods[msg.Method] {
		return ""
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(msg.Params, &p) != nil {
		return ""
	}
	tag, _, ok := strings.Cut(p.TaskID, ".")
	if !ok || tag == "" || tag == h.opts.Cluster.Tag() {
		return ""
	}
	return tag
}

// callAck bounds the wait for the replica running a task to take a
// request about it: past it, the request failed to arrive.
const callAck = 5 * time.Second

// forwardTask hands a request about a task to the replica that runs it,
// and writes its answer. s is nil for a 2026-07-28 request.
func (h *Handler) forwardTask(w http.ResponseWriter, r *http.Request, s *session, b *body, tag string) {
	call := newSessionID()
	ch := make(chan *envelope, 2)
	h.calls.Store(call, ch)
	defer h.calls.Delete(call)
	e := &envelope{Kind: "call", Call: call, Principal: h.opts.Principal(r), Message: b.raw}
	if s != nil {
		e.Session = s.id
	}
	h.sendEnvelope(tag, e)
	perRequest := s == nil
	fail := func(format string, args ...any) {
		msg := jsonrpc.AppendError(nil, *b.id, jsonrpc.Errorf(CodeReplicaStopped, format, args...).WithData(map[string]any{"replica": tag}))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(replyStatus(msg, perRequest))
		w.Write(msg)
	}
	ack := time.NewTimer(callAck)
	defer ack.Stop()
	check := time.NewTicker(ownerCheck)
	defer check.Stop()
	acked, misses := false, 0
	for {
		select {
		case e := <-ch:
			if e.Kind == "ack" {
				acked = true
				continue
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(replyStatus(e.Message, perRequest))
			w.Write(e.Message)
			return
		case <-ack.C:
			if !acked {
				fail("The server replica running this task did not take the request; retry it")
				return
			}
		case <-check.C:
			if h.stopped(tag, &misses) {
				fail("The server replica running this task stopped, and the task with it: it failed. Start it again if it is safe to")
				return
			}
		case <-r.Context().Done():
			return
		case <-h.closing:
			fail("This server replica is shutting down; retry the request")
			return
		}
	}
}

// answerCall serves a request about one of this replica's tasks that
// another replica received, and sends the answer back.
func (h *Handler) answerCall(e *envelope) {
	reply := func(msg []byte) {
		h.sendEnvelope(e.From, &envelope{Kind: "reply", Call: e.Call, Message: msg})
	}
	msg, err := jsonrpc.DecodeMessage(e.Message)
	if err != nil || msg.Kind() != jsonrpc.KindRequest {
		return
	}
	ctx := mcp.WithPrincipal(context.Background(), e.Principal)
	out := &capture{}
	if e.Session == "" {
		ss := h.server.NewSession(out, &mcp.SessionOptions{RequestIDPrefix: h.opts.Cluster.Tag() + "."})
		defer ss.Close()
		ss.HandleMessage(ctx, msg, out)
	} else {
		s := h.sessions.get(e.Session)
		if s == nil || s.principal != e.Principal {
			var err error
			if s, err = h.copyOf(e.Session, e.Principal, owner{principal: e.Principal, addr: "cluster"}); err != nil || s == nil {
				reply(jsonrpc.AppendError(nil, msg.ID, jsonrpc.Errorf(codeSessionNotFound, "Not Found: session not found or ended; start a new one with initialize")))
				return
			}
		}
		if !s.begin() {
			reply(jsonrpc.AppendError(nil, msg.ID, jsonrpc.Errorf(codeSessionNotFound, "Not Found: session ended; start a new one with initialize")))
			return
		}
		defer s.end()
		// What the request sends on the way goes to the session's
		// stream: a forwarded tasks/result is where a session-era task
		// sends its requests (an elicitation) while it waits, and this
		// replica has no stream to the client of its own for it.
		out.relay = s.standalone
		s.ss.HandleMessage(ctx, msg, out)
	}
	out.mu.Lock()
	r := out.reply
	out.mu.Unlock()
	if r != nil {
		reply(r)
	}
}

// capture keeps the reply to one request, and passes what the request
// sends on the way to relay (nil: dropped).
type capture struct {
	mu    sync.Mutex
	reply []byte
	relay mcp.MessageWriter
}

func (c *capture) WriteMessage(b []byte) error {
	if c.relay == nil {
		return nil
	}
	return c.relay.WriteMessage(b)
}

func (c *capture) WriteReply(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reply = msg
	return nil
}

// News of lists and resources: a change arises on one replica (a tool
// added, a resource updated), and every session must hear of it once,
// wherever its GET stream is held, and have it stored for a client that
// resumes the stream. The replica where it arose names the change and
// tells every replica, itself included; each appends the notification to
// the GET stream of every session it holds a copy of, and the cluster
// keeps the first append of each change per session only. What the
// server writes to its sessions' GET streams directly for such a change
// is dropped: the named change stands for it.

// serverWide reports whether msg is news of a list or a resource, which
// every session hears of.
func serverWide(msg []byte) bool {
	for _, method := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed", "notifications/resources/updated"} {
		if bytes.Contains(msg, []byte(method)) {
			m, err := jsonrpc.DecodeMessage(msg)
			return err == nil && m.Kind() == jsonrpc.KindNotification && m.Method == method
		}
	}
	return false
}

// changed tells every replica of a change that arose here.
func (h *Handler) changed(method, uri string) {
	e := &envelope{Kind: "changed", Method: method, URI: uri, Change: newSessionID()}
	h.sendEnvelope("", e)
	go h.deliverChange(e.Change, method, uri)
}

// deliverChange stores a change's notification in the GET stream of every
// session this replica holds a copy of (the cluster keeps one per
// session, whichever replica comes first).
func (h *Handler) deliverChange(change, method, uri string) {
	h.sessions.mu.Lock()
	copies := make([]*session, 0, len(h.sessions.byID))
	for _, s := range h.sessions.byID {
		if s.shared {
			copies = append(copies, s)
		}
	}
	h.sessions.mu.Unlock()
	events := make(map[string][]byte, len(copies))
	for _, s := range copies {
		if msg := s.ss.ChangeNotification(method, uri); msg != nil {
			events[s.key] = msg
		}
	}
	if len(events) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*clusterTimeout)
	defer cancel()
	if err := h.opts.Cluster.AppendOnce(ctx, "g", change, events); err != nil {
		h.clusterLog.Warn("mcphttp: could not store news of a change", "method", method, "error", err)
	}
}

// recovered saves again the records of the sessions this replica holds
// copies of, after the cluster did not answer for a while: a store that
// restarted without its data must not lose sessions that replicas are
// serving. A record another replica changed since is overwritten with
// this copy's state, which differs only if the client changed its log
// level or subscriptions there during the outage.
func (h *Handler) recovered() {
	h.sessions.mu.Lock()
	copies := make([]*session, 0, len(h.sessions.byID))
	for _, s := range h.sessions.byID {
		if s.shared {
			copies = append(copies, s)
		}
	}
	h.sessions.mu.Unlock()
	saved := 0
	for _, s := range copies {
		if s.ss.ProtocolVersion() == "" {
			continue // not initialized yet: its initialize saves it
		}
		if err := h.saveSession(s); err != nil {
			h.clusterLog.Warn("mcphttp: could not save a session again after the cluster recovered", "session", s.id, "error", err)
			return
		}
		saved++
	}
	h.logger.Info("mcphttp: the cluster answers again; sessions saved again", "sessions", saved)
}

// A request that must run on another replica (Options.Route) is handed to
// it with the name of a stream of that replica's; the replica runs it on
// that stream, whose events (its progress, its requests to the client,
// its reply) it stores as it would for a client that resumes, and this
// replica answers the POST by following the stream. The client may
// resume it anywhere, answers the replica's requests through any replica,
// and gets -32012 if the replica stops, as for any stream.

// forwardRun hands a request to the replica tagged tag and answers the
// POST with its stream.
func (h *Handler) forwardRun(w http.ResponseWriter, r *http.Request, ctx context.Context, s *session, b *body, tag string) {
	var carry []byte
	if cc := h.opts.CarryContext; cc != nil && cc.Save != nil {
		var err error
		if carry, err = cc.Save(ctx); err != nil {
			h.httpError(w, http.StatusInternalServerError, b.id, codeInternalError, "Internal error: the request could not be handed to the replica that must run it")
			return
		}
	}
	var n [8]byte
	rand.Read(n[:])
	name := "p" + tag + "." + strconv.FormatUint(binary.BigEndian.Uint64(n[:])>>2|1, 10)
	call := newSessionID()
	ch := make(chan *envelope, 2)
	h.calls.Store(call, ch)
	defer h.calls.Delete(call)
	h.sendEnvelope(tag, &envelope{Kind: "run", Call: call, Session: s.id, Principal: s.principal, Message: b.raw, Stream: name, Carry: carry})
	fail := func(why string) {
		msg := jsonrpc.AppendError(nil, *b.id, jsonrpc.Errorf(CodeReplicaStopped, "%s", why).WithData(map[string]any{"replica": tag}))
		w.Header().Set("Content-Type", "application/json")
		w.Write(msg)
	}
	ack := time.NewTimer(callAck)
	defer ack.Stop()
	select {
	case <-ch:
	case <-ack.C:
		fail("The server replica that must run this request did not take it; retry it")
		return
	case <-r.Context().Done():
		return
	case <-h.closing:
		fail("This server replica is shutting down; retry the request")
		return
	}
	h.serveSharedStream(w, r, s, name, 0)
}

// runFor runs a request another replica handed over (see forwardRun), on
// the stream it named.
func (h *Handler) runFor(e *envelope) {
	msg, err := jsonrpc.DecodeMessage(e.Message)
	if err != nil || msg.Kind() != jsonrpc.KindRequest {
		return
	}
	if tag, ok := streamOwner(e.Stream); !ok || tag != h.opts.Cluster.Tag() {
		return
	}
	s := h.sessions.get(e.Session)
	if s == nil || s.principal != e.Principal {
		if s, err = h.copyOf(e.Session, e.Principal, owner{principal: e.Principal, addr: "cluster"}); err != nil || s == nil {
			return // the other replica's wait for the head ends it
		}
	}
	if !s.begin() {
		return
	}
	defer s.end()
	st := newStream(s, e.Stream, false)
	st.reqID = &msg.ID
	st.mu.Lock()
	st.startSSE(false) // stores the head: the stream exists before the ack
	st.mu.Unlock()
	s.mu.Lock()
	s.streams[st.name] = st
	s.mu.Unlock()
	defer s.dropStream(st)
	h.sendEnvelope(e.From, &envelope{Kind: "ack", Call: e.Call})

	ctx := mcp.WithPrincipal(context.Background(), s.principal)
	if cc := h.opts.CarryContext; cc != nil && cc.Restore != nil && e.Carry != nil {
		ctx = cc.Restore(ctx, e.Carry)
	}
	ctx = context.WithValue(ctx, streamKey{}, st)
	h.inflight.Add(1)
	defer h.inflight.Done()
	s.ss.HandleMessage(ctx, msg, st)
	st.finish()
	st.mu.Lock()
	if !st.replied {
		st.replied = true
		close(st.done)
	}
	st.mu.Unlock()
}
