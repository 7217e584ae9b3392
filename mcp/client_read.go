package mcp

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// The reading goroutine: every message from the server is read here and
// handed on, answers to their pending calls, notifications to
// client_notify.go, requests to client_answers.go. Only the end of the
// connection ends it, never a bad message.

// readLoop reads the server's messages until the connection ends; only
// the end of the connection ends the session, never a bad message.
func (cs *ClientSession) readLoop() {
	defer close(cs.readDone)
	defer cs.notes.close()
	for {
		data, err := cs.conn.ReadMessage()
		var tooLarge *jsonrpc.TooLargeError
		var known *MessageTooLargeError
		switch {
		case errors.As(err, &known):
			if known.ID.IsZero() || !cs.failCall(known.ID, known) {
				cs.logger.Warn("mcp: dropped an oversized message from the server", "error", known.Error())
			}
			continue
		case errors.As(err, &tooLarge):
			cs.tooLarge(tooLarge)
			continue
		}
		if err != nil {
			if cs.ctx.Err() == nil {
				cs.logger.Debug("mcp: the connection to the server ended", "error", err)
				cs.cancel(fmt.Errorf("%w: %w", ErrConnectionClosed, err))
			}
			return
		}
		if jsonrpc.IsBatch(data) {
			elems, err := jsonrpc.SplitBatch(data)
			if err != nil {
				cs.logger.Warn("mcp: dropped a malformed batch from the server", "error", jsonrpc.AsError(err).Message)
				continue
			}
			for _, e := range elems {
				cs.handle(e)
			}
			continue
		}
		cs.handle(data)
	}
}

// ErrMessageTooLarge is matched, with errors.Is, by the error of a call
// whose answer was larger than the client accepts (a
// *MessageTooLargeError). The session goes on: only that call failed.
var ErrMessageTooLarge = errors.New("mcp: the server's answer exceeds the client's message size limit")

// MessageTooLargeError fails a call whose answer from the server was over
// the client's limit on message size; the session goes on. A Conn
// returns one from ReadMessage, with ID set, when it knows which request
// an oversized message answered (as an HTTP response does).
type MessageTooLargeError struct {
	// Limit is the size limit in bytes.
	Limit int
	// Size is the answer's size in bytes, or 0 when reading stopped at
	// the limit before the size was known.
	Size int
	// Setting names the option that raises the limit, such as
	// "CommandTransport.MaxMessageSize". Empty means the transport's
	// MaxMessageSize.
	Setting string
	// ID is the id of the request the answer was to.
	ID jsonrpc.ID
}

func (e *MessageTooLargeError) Error() string {
	what := "the server's answer"
	if e.Size > 0 {
		what = fmt.Sprintf("the server's answer of %d bytes", e.Size)
	}
	setting := e.Setting
	if setting == "" {
		setting = "the transport's MaxMessageSize"
	}
	return fmt.Sprintf("%s exceeds the %d-byte limit on messages; raise %s or ask for less", what, e.Limit, setting)
}

// Is reports ErrMessageTooLarge as matching.
func (e *MessageTooLargeError) Is(target error) bool { return target == ErrMessageTooLarge }

// tooLarge fails the call an oversized message answered, when its id can
// be found; the session goes on.
func (cs *ClientSession) tooLarge(e *jsonrpc.TooLargeError) {
	var setting string
	if s, ok := cs.conn.(sizeSetter); ok {
		setting = s.sizeSetting()
	}
	for _, id := range []jsonrpc.ID{jsonrpc.PeekID(e.Prefix), jsonrpc.PeekTrailingID(e.Suffix)} {
		if !id.IsZero() && cs.failCall(id, &MessageTooLargeError{Limit: e.Limit, Size: e.Size, Setting: setting, ID: id}) {
			return
		}
	}
	cs.logger.Warn("mcp: dropped an oversized message from the server", "error", e.Error())
}

func (cs *ClientSession) failCall(id jsonrpc.ID, err error) bool {
	cs.mu.Lock()
	pc := cs.pending[id]
	delete(cs.pending, id)
	cs.mu.Unlock()
	if pc == nil {
		return false
	}
	pc.fail <- err
	return true
}

func (cs *ClientSession) handle(data []byte) {
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		var de *jsonrpc.DecodeError
		if errors.As(err, &de) && !de.ID.IsZero() && cs.failCall(de.ID, fmt.Errorf("the server sent a malformed response: %s", err)) {
			return
		}
		cs.logger.Warn("mcp: dropped a malformed message from the server", "error", err)
		return
	}
	switch msg.Kind() {
	case jsonrpc.KindResponse:
		cs.handleResponse(msg)
	case jsonrpc.KindNotification:
		cs.handleNotification(msg)
	case jsonrpc.KindRequest:
		cs.handleRequest(msg)
	}
}

func (cs *ClientSession) handleResponse(msg *jsonrpc.Message) {
	cs.mu.Lock()
	pc := cs.pending[msg.ID]
	delete(cs.pending, msg.ID)
	cs.mu.Unlock()
	if pc != nil {
		if pc.progress != nil {
			// Behind the progress notifications already queued, so that
			// all of them reach the callback before the call returns.
			cs.notes.push(func() { pc.ch <- msg }, true)
		} else {
			pc.ch <- msg
		}
		return
	}
	// A string id holding the digits of a call we made is that call
	// answered with the wrong id type: fail it now rather than let it
	// wait for its deadline.
	if msg.ID.IsString() {
		var digits string
		if unmarshalValue(msg.ID.Raw(), &digits) == nil {
			if n, err := strconv.ParseInt(digits, 10, 64); err == nil && cs.failCall(jsonrpc.IntID(n),
				fmt.Errorf("the server answered with the id %s, a string, for request %d: JSON-RPC requires the id exactly as sent", truncateString(msg.ID.String(), 64), n)) {
				return
			}
		}
	}
	if cs.ctx.Err() != nil {
		// Closing: calls abandoned by Close (an open listen stream, say)
		// may still be answered on the way out.
		cs.logger.Debug("mcp: dropped a response that arrived while closing", "id", truncateString(msg.ID.String(), 64))
		return
	}
	if cs.abandoned.has(msg.ID) {
		// The answer to a request given up on (a probe that took too
		// long on a cold start, a call cancelled): late, not wrong.
		cs.logger.Debug("mcp: dropped an answer that came after its request was given up", "id", truncateString(msg.ID.String(), 64))
		return
	}
	cs.logger.Warn("mcp: dropped a response whose id matches no request of ours", "id", truncateString(msg.ID.String(), 64))
}

// abandon remembers the id of a request given up on.
func (cs *ClientSession) abandon(id jsonrpc.ID) { cs.abandoned.add(id) }

// idRing is a small set of the latest ids added, for recognising late
// answers without growing.
type idRing struct {
	mu  sync.Mutex
	ids [64]string
	n   int
}

func (r *idRing) add(id jsonrpc.ID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids[r.n%len(r.ids)] = string(id.Raw())
	r.n++
}

func (r *idRing) has(id jsonrpc.ID) bool {
	k := string(id.Raw())
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, x := range r.ids[:min(r.n, len(r.ids))] {
		if x == k {
			return true
		}
	}
	return false
}
