package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// streamReader reads one stream session's messages on one goroutine and
// hands each to the session, which runs it by the policy of package
// internal/sched: responses, notifications, initialize and ping on this
// goroutine, every other request on a goroutine of its own.
type streamReader struct {
	ss       *ServerSession
	conn     Conn
	ctx      context.Context // the parent of the handlers' contexts
	readErr  chan error
	stopping sync.Mutex // held while a message is admitted
	stopped  bool
}

// newStreamReader returns the reader of a session whose handlers run
// under ctx's values. A request's context does not hang from ctx's
// cancellation: the session's Close cancels every request in flight, and
// whoever cancels ctx must close the session too (ServeConn does). A
// context that cannot be cancelled has no Done channel, so a request's
// own context registers nowhere and costs no shared lock to make and end.
func newStreamReader(ctx context.Context, ss *ServerSession, conn Conn) *streamReader {
	return &streamReader{ss: ss, conn: conn, ctx: context.WithoutCancel(ctx), readErr: make(chan error, 1)}
}

// stop makes the reader admit nothing more.
func (r *streamReader) stop() {
	r.stopping.Lock()
	r.stopped = true
	r.stopping.Unlock()
}

// loop reads until the stream ends or the reader is stopped.
func (r *streamReader) loop() {
	for {
		data, err := r.conn.ReadMessage()
		var tooLarge *jsonrpc.TooLargeError
		if errors.As(err, &tooLarge) {
			r.ss.writeError(r.conn, jsonrpc.PeekID(tooLarge.Prefix), jsonrpc.Errorf(jsonrpc.CodeInvalidRequest,
				"Invalid Request: %s; send smaller messages", tooLarge.Error()))
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) {
				err = nil
			}
			r.readErr <- err
			return
		}
		r.stopping.Lock()
		if r.stopped {
			r.stopping.Unlock()
			r.readErr <- nil
			return
		}
		r.ss.receive(r.ctx, data, r.conn)
		r.stopping.Unlock()
	}
}

// handOff is what ServerSession.call (server_requests.go) calls for a
// request that runs on the reading goroutine; none does any more, so
// Request.reader is always nil. It goes once that call site does.
func (r *streamReader) handOff(uint64) {}
