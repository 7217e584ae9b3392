package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// A stream session's reader runs a request on its own goroutine when no
// other input is waiting, instead of handing it to another goroutine.
//
// Why: on a machine with idle cores, making a goroutine runnable wakes an
// OS thread for it, and the thread goes back to sleep once the reply is
// written. For a client that waits for each reply before sending the next
// request (the common case over stdio) those two futex calls and the
// context switches cost more than the request itself: the echo benchmark
// spent about half of the server's CPU on them (GOMAXPROCS=1 halved it).
// Run inline, a request is read, handled and answered by one goroutine,
// as the benchmark's limit server does.
//
// The price of inline running is that nothing more is read while the
// request runs: a cancellation or the client's answer to a question would
// wait for it. So a request that runs for longer than inlineGrace, or
// that sends the client a request of its own, gives reading to a new
// goroutine and goes on as if it had been handed off from the start.
// Input that is already waiting when a request is read means the client
// is pipelining: that request is handed off as before, so a burst runs in
// parallel.

// inlineGrace is how long a request may run on the reading goroutine
// before reading moves to another: checked by a ticker, so the hand-off
// comes between one and two periods after the request started.
const inlineGrace = time.Millisecond

// inlineGraceTest replaces inlineGrace in tests that need the watcher
// held off (0: use inlineGrace).
var inlineGraceTest atomic.Int64

// buffered is implemented by a Conn that can tell whether input is already
// waiting to be read.
type buffered interface {
	Buffered() int
}

// streamReader reads one stream session's messages. Exactly one goroutine
// reads at a time: the one that started the loop, or the one a hand-off
// started.
type streamReader struct {
	ss       *ServerSession
	conn     Conn
	ctx      context.Context // handlers' context
	buf      buffered        // nil: never run inline
	readErr  chan error
	stopping sync.Mutex // held while a message is admitted
	stopped  bool

	// running is the token of the request running inline, 0 when none.
	// Whoever swaps it to 0 decides: the reader (it goes on reading) or a
	// hand-off (a new goroutine reads; the old one ends after its request).
	running  atomic.Uint64
	nextTok  uint64 // only the reading goroutine touches it
	watching atomic.Bool
	grace    time.Duration
}

func newStreamReader(ss *ServerSession, conn Conn, ctx context.Context) *streamReader {
	r := &streamReader{ss: ss, conn: conn, ctx: ctx, readErr: make(chan error, 1), grace: inlineGrace}
	if g := inlineGraceTest.Load(); g > 0 {
		r.grace = time.Duration(g)
	}
	r.buf, _ = conn.(buffered)
	return r
}

// stop makes the reader admit nothing more.
func (r *streamReader) stop() {
	r.stopping.Lock()
	r.stopped = true
	r.stopping.Unlock()
}

// loop reads until the stream ends or a hand-off gives reading to another
// goroutine.
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
		var req *Request
		if r.buf != nil && r.buf.Buffered() == 0 {
			req = r.ss.receiveInline(r.ctx, data, r.conn)
		} else {
			r.ss.receive(r.ctx, data, r.conn)
		}
		r.stopping.Unlock()
		if req != nil && !r.runInline(req) {
			return
		}
	}
}

// runInline runs req on the reading goroutine and reports whether this
// goroutine still reads.
func (r *streamReader) runInline(req *Request) bool {
	r.nextTok++
	tok := r.nextTok
	r.running.Store(tok)
	req.yield = func() { r.handOff(tok) }
	if !r.watching.Load() && r.watching.CompareAndSwap(false, true) {
		go r.watch()
	}
	r.ss.run(r.ctx, req)
	return r.running.CompareAndSwap(tok, 0)
}

// handOff gives reading to a new goroutine if the request with token tok
// still runs inline; it is a no-op otherwise.
func (r *streamReader) handOff(tok uint64) {
	if r.running.CompareAndSwap(tok, 0) {
		go r.loop()
	}
}

// watch hands reading off from a request that has run inline for a whole
// tick, and ends once no request has run inline for two ticks.
func (r *streamReader) watch() {
	t := time.NewTicker(r.grace)
	defer t.Stop()
	var last uint64
	idle := 0
	for {
		select {
		case <-t.C:
		case <-r.ss.Done():
			r.watching.Store(false)
			return
		}
		tok := r.running.Load()
		switch {
		case tok != 0 && tok == last:
			r.handOff(tok)
			last, idle = 0, 0
		case tok != 0:
			last, idle = tok, 0
		default:
			last = 0
			if idle++; idle < 2 {
				continue
			}
			r.watching.Store(false)
			// A request that started inline after the load above needs a
			// watcher: keep this one if no other was started for it.
			if r.running.Load() == 0 || !r.watching.CompareAndSwap(false, true) {
				return
			}
			idle = 0
		}
	}
}
