package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// errOwnerStopped ends the following of a stream whose request ran on a
// replica that stopped.
var errOwnerStopped = errors.New("mcphttp: the replica running the request stopped")

// ownerCheck is how often a replica following another's stream asks
// whether that replica still runs: how long at most a client resuming the
// stream of a killed replica waits for its answer (plus the cluster's own
// notice of the death).
const ownerCheck = time.Second

// streamOwner returns the tag of the replica that runs a shared POST
// stream, from its name ("p" + tag + "." + number).
func streamOwner(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "p")
	if !ok {
		return "", false
	}
	tag, n, ok := strings.Cut(rest, ".")
	if !ok || tag == "" {
		return "", false
	}
	if v, err := strconv.Atoi(n); err != nil || v < 1 {
		return "", false
	}
	return tag, true
}

// serveSharedStream serves a GET of a shared session that this replica
// cannot serve from memory: the session's GET stream (name "g"), which any
// replica may send on and this one holds for the client while it lasts,
// or the resumption of a POST stream another replica runs or ran. after
// is the last event the client has (-1 for a fresh GET stream).
func (h *Handler) serveSharedStream(w http.ResponseWriter, r *http.Request, s *session, name string, after int) {
	c := h.opts.Cluster
	octx, ocancel := clusterCtx()
	defer ocancel()
	var owner string
	var head []byte
	if name == "g" {
		holder := c.Tag() + ":" + newSessionID()
		ttl := 3 * h.opts.KeepAlive
		ok, err := c.ClaimStream(octx, s.key, name, holder, ttl)
		if err != nil {
			h.unavailable(w, err)
			return
		}
		if !ok {
			h.httpError(w, http.StatusConflict, nil, codeInvalidRequest, "Conflict: this session already has a GET stream open; only one is allowed")
			return
		}
		defer func() {
			ctx, cancel := clusterCtx()
			defer cancel()
			c.ReleaseStream(ctx, s.key, name, holder)
		}()
		if after < 0 {
			last, err := c.LastSeq(octx, s.key, name)
			if err != nil {
				h.unavailable(w, err)
				return
			}
			after = last
		}
		defer h.keepClaim(s, holder, ttl)()
	} else {
		tag, ok := streamOwner(name)
		if !ok {
			h.httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: Last-Event-ID names no stream of this server")
			return
		}
		var exists bool
		var err error
		head, exists, err = c.Head(octx, s.key, name)
		if err != nil {
			h.unavailable(w, err)
			return
		}
		if !exists {
			h.httpError(w, http.StatusBadRequest, nil, codeInvalidRequest, "Bad Request: Last-Event-ID names no stream of this server, or one whose events are gone")
			return
		}
		owner = tag
	}

	sw := &sharedWriter{w: w, rc: http.NewResponseController(w), name: name}
	sw.open(s.primes(), after, h.opts.RetryInterval)
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	stop := h.watchShared(ctx, cancel, s, sw, owner)
	defer stop()

	last, final := after, false
	deliver := func(seq int, data []byte, fin bool) error {
		last, final = seq, fin
		if len(data) > 0 {
			return sw.event(seq, data)
		}
		return nil
	}
	err := c.Follow(ctx, s.key, name, after, deliver)
	if final || owner == "" || !errors.Is(context.Cause(ctx), errOwnerStopped) {
		if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrEventsGone) {
			h.logger.Debug("mcphttp: following a shared stream ended", "session", s.id, "stream", name, "error", err)
		}
		return
	}
	// The replica running the request stopped: what it stored before is
	// passed on, and if that holds no answer, the answer is that it
	// stopped, stored so that a later resumption gets the same.
	bctx, bcancel := clusterCtx()
	defer bcancel()
	if c.Replay(bctx, s.key, name, last, deliver) != nil || final {
		return
	}
	var id jsonrpc.ID
	if len(head) == 0 || id.UnmarshalJSON(head) != nil {
		return
	}
	msg := jsonrpc.AppendError(nil, id, jsonrpc.Errorf(CodeReplicaStopped,
		"The server replica running this request stopped before it answered; the request may or may not have taken effect. Retry it if it is safe to.").
		WithData(map[string]any{"replica": owner}))
	if _, err := c.AppendEvent(bctx, s.key, name, last+1, msg, true); err != nil {
		h.logger.Debug("mcphttp: could not store the answer for a stopped replica", "error", err)
	}
	sw.event(last+1, msg)
}

// watchShared runs beside the following of a shared stream: it keeps the
// connection alive, and ends the following when the handler shuts down,
// the session ends here, or the replica running the stream's request
// (owner, if any) stops. The returned function stops it and waits.
func (h *Handler) watchShared(ctx context.Context, cancel context.CancelCauseFunc, s *session, sw *sharedWriter, owner string) func() {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		keep := time.NewTicker(h.opts.KeepAlive)
		defer keep.Stop()
		check := time.NewTicker(ownerCheck)
		defer check.Stop()
		if owner == "" {
			check.Stop()
		}
		misses := 0
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-h.closing:
				cancel(errors.New("mcphttp: shutting down"))
				return
			case <-s.ss.Done():
				cancel(errors.New("mcphttp: the session ended"))
				return
			case <-keep.C:
				s.touch()
				if sw.keepAlive() != nil {
					cancel(errors.New("mcphttp: the connection broke"))
					return
				}
			case <-check.C:
				if h.stopped(owner, &misses) {
					cancel(errOwnerStopped)
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// keepClaim renews this connection's hold on a session's GET stream while
// it lasts; the returned function stops renewing.
func (h *Handler) keepClaim(s *session, holder string, ttl time.Duration) func() {
	t := time.NewTicker(ttl / 3)
	done := make(chan struct{})
	go func() {
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				ctx, cancel := clusterCtx()
				h.opts.Cluster.ClaimStream(ctx, s.key, "g", holder, ttl)
				cancel()
			}
		}
	}()
	return func() { close(done) }
}

// unavailable answers a request that needs the cluster while it does not
// answer.
func (h *Handler) unavailable(w http.ResponseWriter, err error) {
	h.clusterLog.Warn("mcphttp: the cluster does not answer", "error", err)
	w.Header().Set("Retry-After", "1")
	h.httpError(w, http.StatusServiceUnavailable, nil, codeInternalError, "Service Unavailable: the store this server's replicas share sessions in does not answer; retry shortly")
}

// sharedWriter writes a followed stream's events to one response; the
// following and the keep-alives write from two goroutines.
type sharedWriter struct {
	mu   sync.Mutex
	w    http.ResponseWriter
	rc   *http.ResponseController
	name string
}

func (sw *sharedWriter) open(primes bool, after int, retry time.Duration) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	h := sw.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	sw.w.WriteHeader(http.StatusOK)
	if primes {
		sw.w.Write([]byte("id: " + eventID(sw.name, max(after, 0)) + "\nretry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\ndata: \n\n"))
	} else {
		sw.w.Write([]byte(": stream open\n\n"))
	}
	sw.rc.Flush()
}

func (sw *sharedWriter) event(seq int, data []byte) error {
	b := make([]byte, 0, len(data)+len(sw.name)+40)
	b = append(b, "id: "...)
	b = append(b, eventID(sw.name, seq)...)
	b = append(b, "\nevent: message\ndata: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	return sw.write(b)
}

func (sw *sharedWriter) keepAlive() error { return sw.write([]byte(": keepalive\n\n")) }

func (sw *sharedWriter) write(b []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := sw.w.Write(b); err != nil {
		return err
	}
	return sw.rc.Flush()
}

// stopped reports whether the replica tagged owner has stopped: its
// liveness key was missing at two checks in a row. One miss is not
// enough: a store that restarted without its data has lost every
// replica's key until each renews it (within a second).
func (h *Handler) stopped(owner string, misses *int) bool {
	ctx, cancel := clusterCtx()
	defer cancel()
	if h.opts.Cluster.Alive(ctx, owner) {
		*misses = 0
		return false
	}
	*misses++
	return *misses >= 2
}
