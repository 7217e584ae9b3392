package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// streamReader reads one stream session's messages and hands each to
// the session, which handles it by the policy of package internal/sched:
// responses, notifications, initialize and ping on the reading
// goroutine, any other request on a goroutine of its own. One goroutine
// at a time reads.
type streamReader struct {
	ss       *ServerSession
	conn     Conn
	ctx      context.Context // the parent of the handlers' contexts
	readErr  chan error
	stopping sync.Mutex // held while a message is admitted
	stopped  bool
	buf      lineWaiter // nil: replies are never held back
	hold     holder
	held     bool // the reader holds replies back; only the reader touches it
}

// lineWaiter is a Conn that can tell whether a whole message is already
// waiting to be read.
type lineWaiter interface{ LineWaiting() bool }

// newStreamReader returns the reader of a session whose handlers run
// under ctx's values. A request's context does not hang from ctx's
// cancellation: the session's Close cancels every request in flight, and
// whoever cancels ctx must close the session too (ServeConn does). A
// context that cannot be cancelled has no Done channel, so a request's
// own context registers nowhere and costs no shared lock to make and end.
func newStreamReader(ctx context.Context, ss *ServerSession, conn Conn) *streamReader {
	r := &streamReader{ss: ss, conn: conn, ctx: context.WithoutCancel(ctx), readErr: make(chan error, 1)}
	r.hold, _ = conn.(holder)
	if r.hold != nil {
		r.buf, _ = conn.(lineWaiter)
	}
	return r
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
		if r.held && !r.buf.LineWaiting() {
			r.release() // about to wait for input: send what is held
		}
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
			r.release()
			r.readErr <- err
			return
		}
		if !r.held && r.buf != nil && r.buf.LineWaiting() {
			// A pipelined burst: its replies go out together once it has
			// been read (in BenchmarkServeStdioEcho/pipe64, 0.016 writes
			// a call instead of 0.92, and a quarter less CPU).
			r.held = true
			r.hold.hold()
		}
		req, stopped := r.receive(data)
		if stopped {
			r.release()
			r.readErr <- nil
			return
		}
		if req != nil {
			// A new goroutine reads on, and this one runs the request:
			// it starts at once, on the thread that read it, and the
			// new reader starts beside it, off the path from request to
			// reply. The other way round (a new goroutine for the
			// request) a client that waits for each reply waited for a
			// second thread to wake on every call: make bench's
			// sequential echo ran at 15,000-21,000 calls a second
			// instead of 43,000-48,000, on twice the CPU.
			go r.loop()
			r.ss.run(r.ctx, req)
			return
		}
	}
}

// receive hands a message to the session unless the reader has been
// stopped; it returns a request for the caller to run, if any.
func (r *streamReader) receive(data []byte) (req *Request, stopped bool) {
	r.stopping.Lock()
	defer r.stopping.Unlock()
	if r.stopped {
		return nil, true
	}
	return r.ss.receive(r.ctx, data, r.conn), false
}

// release writes the replies held back, if any.
func (r *streamReader) release() {
	if r.held {
		r.held = false
		r.hold.release()
	}
}
