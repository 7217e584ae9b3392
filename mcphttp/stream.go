package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// conn is one HTTP response that carries a stream's messages, owned by the
// goroutine serving that request. The stream writes to it while attached;
// closing end asks the owner to finish the response.
type conn struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	end chan struct{}
	sse bool // headers were sent as text/event-stream
}

func newConn(w http.ResponseWriter) *conn {
	return &conn{w: w, rc: http.NewResponseController(w), end: make(chan struct{})}
}

// stream is one response stream of a session: the answer to a POST (plain
// JSON when the reply comes first, SSE otherwise) or the standalone GET
// stream. Once a stream has sent SSE events it numbers and stores them, so
// a client can resume it on another connection with Last-Event-ID.
type stream struct {
	sess       *session
	name       string
	standalone bool

	mu      sync.Mutex
	c       *conn // nil when no connection is attached
	sse     bool  // events are numbered and stored
	seq     int
	replied bool
	done    chan struct{} // closed when the reply has been written

	// initialize marks the stream of the POST that creates its session:
	// an error reply there means no session was made, so the reply must
	// not hand out its id.
	initialize bool

	// In a shared session: the id of the request the stream answers, kept
	// at the head of its stored events once it turns into SSE (headed),
	// so that a replica resuming it after this one stopped can answer it;
	// ended once its last event is stored.
	reqID  *jsonrpc.ID
	headed bool
	ended  bool
}

func newStream(sess *session, name string, standalone bool) *stream {
	return &stream{sess: sess, name: name, standalone: standalone, sse: standalone, done: make(chan struct{})}
}

type streamKey struct{}

// WriteMessage sends a message that is not the reply: a notification or a
// server-to-client request made while the body's requests run.
func (s *stream) WriteMessage(msg []byte) error { return s.emit(msg, false) }

// WriteReply sends the reply that ends a POST's stream.
func (s *stream) WriteReply(msg []byte) error { return s.emit(msg, true) }

// TakeServer keeps the view of the server that NewSession hands to the
// session's first writer (see internal/httpmeta).
func (s *stream) TakeServer(v httpmeta.Server) { s.sess.view = v }

func (s *stream) emit(msg []byte, final bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replied {
		return nil // a late message for a stream already answered
	}
	if s.standalone && s.sess.shared {
		// Any replica may send on the GET stream of a shared session; the
		// one holding the stream writes what the cluster delivers. News
		// of lists and resources goes as a named change (see
		// Handler.changed), once per session.
		if serverWide(msg) {
			return nil
		}
		return s.sess.storeEvent(s.name, 0, msg, false)
	}
	if final && !s.standalone {
		s.replied = true
		defer close(s.done)
	}
	if final && s.initialize && s.sess.shared && replyError(msg) == nil {
		if err := s.sess.h.saveSession(s.sess); err != nil {
			// The session cannot be shared, so it cannot be served.
			s.sess.h.clusterLog.Warn("mcphttp: could not save a new session in the cluster", "error", err)
			msg = jsonrpc.AppendError(nil, *s.reqID, jsonrpc.Errorf(codeInternalError,
				"Service Unavailable: the store this server's replicas share sessions in does not answer, so no session can begin; retry shortly"))
			if s.c != nil && !s.sse {
				h := s.c.w.Header()
				h.Del(headerSessionID)
				h.Set("Content-Type", "application/json")
				h.Set("Retry-After", "1")
				s.c.w.WriteHeader(http.StatusServiceUnavailable)
				s.c.w.Write(msg)
				return nil
			}
		}
	}
	if !s.sse && final {
		// The reply came first: a plain JSON response, the cheapest for
		// clients and the easiest to debug with curl.
		if s.c != nil {
			h := s.c.w.Header()
			if s.initialize && replyError(msg) != nil {
				h.Del(headerSessionID)
			}
			h.Set("Content-Type", "application/json")
			if ra := retryAfter(msg); ra != "" {
				h.Set("Retry-After", ra)
			}
			s.c.w.WriteHeader(replyStatus(msg, s.sess.perRequest))
			s.c.w.Write(msg)
		}
		return nil
	}
	s.startSSE(false) // the event below flushes both
	s.seq++
	if err := s.sess.storeEvent(s.name, s.seq, msg, final && !s.standalone); err != nil {
		s.sess.h.clusterLog.Warn("mcphttp: could not store an event", "error", err)
	}
	if final && !s.standalone {
		s.ended = true
	}
	if s.c != nil {
		// The reply ends the response, whose end flushes it together
		// with the end of the body: one write instead of two.
		s.writeEvent(s.c, eventID(s.name, s.seq), msg, !(final && !s.standalone))
	}
	return nil
}

// finish stores the end of a shared stream whose request ended without a
// reply (cancelled), so that a replica following it stops.
func (s *stream) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sess.shared || s.standalone || !s.sse || s.ended {
		return
	}
	s.ended = true
	s.seq++
	if err := s.sess.storeEvent(s.name, s.seq, nil, true); err != nil {
		s.sess.h.clusterLog.Warn("mcphttp: could not store the end of a stream", "error", err)
	}
}

// startSSE switches the attached connection to an event stream, opening
// with a priming event (an id and no data) for clients of 2025-11-25 and
// later, which lets them resume even before the first message. flush is
// false when an event follows at once and flushes both.
func (s *stream) startSSE(flush bool) {
	s.sse = true
	if s.sess.shared && !s.standalone && !s.headed {
		// Before the priming event: a client may resume from it at
		// another replica, which must then know what this stream answers.
		s.headed = true
		var head []byte
		if s.reqID != nil {
			head = s.reqID.Raw()
		}
		if err := s.sess.storeEvent(s.name, 0, head, false); err != nil {
			s.sess.h.clusterLog.Warn("mcphttp: could not store the head of a stream", "error", err)
		}
	}
	c := s.c
	if c == nil || c.sse {
		return
	}
	c.sse = true
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	var b bytes.Buffer
	if s.sess.primes() {
		b.WriteString("id: ")
		b.WriteString(eventID(s.name, s.seq))
		b.WriteString("\nretry: ")
		b.WriteString(strconv.FormatInt(s.sess.h.opts.RetryInterval.Milliseconds(), 10))
		b.WriteString("\ndata: \n\n")
	} else {
		b.WriteString(": stream open\n\n")
	}
	if flush {
		s.write(c, b.Bytes())
	} else {
		s.buffer(c, b.Bytes())
	}
}

func (s *stream) writeEvent(c *conn, id string, msg []byte, flush bool) {
	b := make([]byte, 0, len(msg)+len(id)+32)
	if !s.sess.perRequest {
		b = append(b, "id: "...)
		b = append(b, id...)
		b = append(b, '\n')
	}
	b = append(b, "event: message\ndata: "...)
	b = append(b, msg...)
	b = append(b, "\n\n"...)
	if flush {
		s.write(c, b)
	} else {
		s.buffer(c, b)
	}
}

// write sends bytes and flushes; a failed write detaches the connection,
// whose events stay stored for a resumption.
func (s *stream) write(c *conn, b []byte) {
	c.rc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err := c.w.Write(b)
	if err == nil {
		err = c.rc.Flush()
	}
	if err != nil {
		s.lost(c)
	}
}

// buffer writes bytes without flushing them: the next write does.
func (s *stream) buffer(c *conn, b []byte) {
	if _, err := c.w.Write(b); err != nil {
		s.lost(c)
	}
}

func (s *stream) lost(c *conn) {
	if s.c == c {
		s.c = nil
		close(c.end)
	}
}

// attach makes c the stream's connection, ending any previous one.
func (s *stream) attach(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attachLocked(c)
}

func (s *stream) attachLocked(c *conn) {
	if s.c != nil && s.c != c {
		close(s.c.end)
	}
	s.c = c
	if s.sse {
		// A fresh POST stream (StreamResponses) holds its opening until
		// the first event, the first keep-alive or the end of the
		// response, so that a quick reply costs one write, not two.
		s.startSSE(s.standalone || s.seq > 0)
	}
}

// release detaches c if it is still the stream's connection. After it
// returns, nothing is written to c.
func (s *stream) release(c *conn) {
	s.mu.Lock()
	if s.c == c {
		s.c = nil
	}
	s.mu.Unlock()
}

// detach ends the attached connection without ending the stream: its
// later events are stored, and the client resumes with Last-Event-ID.
func (s *stream) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		return
	}
	s.startSSE(true)
	c := s.c
	s.c = nil
	close(c.end)
}

// tick keeps an idle connection alive. A request still running without an
// answer is switched to SSE first, so that proxies see bytes and the
// client can resume if the connection breaks.
func (s *stream) tick(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != c || s.replied {
		return
	}
	s.startSSE(false) // the keep-alive below flushes both
	if s.c == c {
		s.write(c, []byte(": keepalive\n\n"))
	}
}

// replay writes the stored events after seq to c and attaches c, all
// under the stream's lock so that no event is missed or sent twice.
func (s *stream) replay(c *conn, after int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.sse = true
	h := c.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.w.WriteHeader(http.StatusOK)
	err := s.sess.replayEvents(s.name, after, func(seq int, data []byte) error {
		s.writeEvent(c, eventID(s.name, seq), data, true)
		return nil
	})
	if err != nil {
		return err
	}
	if s.replied {
		return nil // finished: the replay was all there was
	}
	s.attachLocked(c)
	return nil
}

// CloseSSEStream ends the HTTP response of the request whose handler
// context is ctx, switching it to SSE first, without ending the request:
// its result is stored, and the client gets it by resuming the stream with
// GET and Last-Event-ID. Servers use it to avoid long-held connections
// (the 2025-11-25 polling pattern). It reports whether there was such a
// stream.
func CloseSSEStream(ctx context.Context) bool {
	s, _ := ctx.Value(streamKey{}).(*stream)
	if s == nil {
		return false
	}
	s.detach()
	return true
}

// replyError returns the error of a JSON-RPC error reply, nil for any
// other message.
func replyError(msg []byte) *jsonrpc.Error {
	if !bytes.Contains(msg, []byte(`"error"`)) {
		return nil
	}
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil
	}
	return m.Error
}

// retryAfter is the Retry-After header (whole seconds, rounded up) of an
// error reply whose data says when to retry (retryAfterMs, as the
// gateway's rate limits send), or "".
func retryAfter(msg []byte) string {
	if !bytes.Contains(msg, []byte(`"retryAfterMs"`)) {
		return ""
	}
	e := replyError(msg)
	if e == nil || len(e.Data) == 0 {
		return ""
	}
	var d struct {
		RetryAfterMs float64 `json:"retryAfterMs"`
	}
	if json.Unmarshal(e.Data, &d) != nil || d.RetryAfterMs <= 0 {
		return ""
	}
	return strconv.Itoa(int(math.Ceil(d.RetryAfterMs / 1000)))
}

// replyStatus is the HTTP status of a plain JSON reply: 400 for an error
// saying the request itself was malformed and, in 2026-07-28 requests, for
// the errors the revision answers with 400 (an undeclared client
// capability, a header mismatch, an unsupported revision); else 200.
func replyStatus(msg []byte, perRequest bool) int {
	e := replyError(msg)
	if e == nil {
		return http.StatusOK
	}
	switch e.Code {
	case jsonrpc.CodeInvalidRequest, jsonrpc.CodeParseError:
		return http.StatusBadRequest
	case mcp.CodeMissingRequiredClientCapability, mcp.CodeHeaderMismatch, mcp.CodeUnsupportedProtocolVersion:
		if perRequest {
			return http.StatusBadRequest
		}
	}
	return http.StatusOK
}
