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

// A stream session's reader runs a request on its own goroutine instead
// of handing it to another one, when no other input is waiting or the
// requests before it were quick.
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
// is pipelining: the burst runs inline, its replies held back and written
// together, while its requests stay quick (inlineBurstMax); after a slower
// one, the burst's next requests are handed off to run in parallel, with
// one run inline now and then (inlineProbeEvery) to see whether they
// still are slow.

// inlineGrace is how long a request may run on the reading goroutine
// before reading moves to another: checked by a ticker, so the hand-off
// comes between one and two periods after the request started.
const inlineGrace = time.Millisecond

// inlineGraceTest replaces inlineGrace in tests that need the watcher
// held off (0: use inlineGrace).
var inlineGraceTest atomic.Int64

// inlineBurstMax is how quick the last inline request must have been for
// a request of a pipelined burst to run inline too. Quick requests cost
// less run one after the other on the reading goroutine, their replies
// written together, than spread over cores (echo: 13 -> 6.5 µs of CPU a
// call); slower ones, or ones that wait on I/O, run in parallel.
const inlineBurstMax = 50 * time.Microsecond

// inlineBurstMaxTest replaces inlineBurstMax in tests whose quick
// requests must stay quick under the race detector (0: use
// inlineBurstMax).
var inlineBurstMaxTest atomic.Int64

// clockBase is where the reader's durations are measured from.
var clockBase = time.Now()

// inlineProbeEvery is how many requests of a burst are handed off after a
// slow one before the next runs inline again, to see whether they are
// still slow: one outlier (a GC pause, the thread preempted) would
// otherwise hand off every request of a long pipelined stream.
const inlineProbeEvery = 16

// buffered is implemented by a Conn that can tell whether input is already
// waiting to be read.
type buffered interface {
	LineWaiting() bool
}

// streamReader reads one stream session's messages. Exactly one goroutine
// reads at a time: the one that started the loop, or the one a hand-off
// started.
type streamReader struct {
	ss       *ServerSession
	conn     Conn
	ctx      context.Context // handlers' context
	buf      buffered        // nil: never run inline
	hold     holder          // nil: replies are never held back
	held     atomic.Bool     // the reader holds replies back
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
	burstMax time.Duration
	lastRun  time.Duration // how long the last inline request ran
	// handedOff counts the requests of a burst handed off in a row since
	// the last inline one.
	handedOff int
}

// newStreamReader returns the reader of a session whose handlers run
// under ctx. Whoever cancels ctx must close the session too (ServeConn
// does): a request's own context is cancelled through the session, not
// registered with ctx (see sessionCancels).
func newStreamReader(ss *ServerSession, conn Conn, ctx context.Context) *streamReader {
	r := &streamReader{ss: ss, conn: conn, ctx: sessionCancels{ctx, requestParent{ctx}}, readErr: make(chan error, 1), grace: inlineGrace, burstMax: inlineBurstMax}
	if g := inlineGraceTest.Load(); g > 0 {
		r.grace = time.Duration(g)
	}
	if m := inlineBurstMaxTest.Load(); m > 0 {
		r.burstMax = time.Duration(m)
	}
	r.buf, _ = conn.(buffered)
	r.hold, _ = conn.(holder)
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
	defer r.releaseHold()
	for {
		if r.buf != nil && !r.buf.LineWaiting() {
			r.releaseHold() // about to wait for input: send what is held
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
		burst := r.buf != nil && r.buf.LineWaiting()
		if r.buf != nil && (!burst || r.lastRun < r.burstMax || r.handedOff >= inlineProbeEvery) {
			req = r.ss.receiveInline(r.ctx, data, r.conn)
			r.handedOff = 0
		} else {
			r.ss.receive(r.ctx, data, r.conn)
			r.handedOff++
		}
		r.stopping.Unlock()
		if req == nil {
			continue
		}
		if burst && r.hold != nil && r.held.CompareAndSwap(false, true) {
			r.hold.hold()
		}
		// Monotonic time alone: time.Now would read the wall clock too,
		// which cost as much again on every request (a VM's clock reads
		// were 3.5% of a pipelined echo's CPU).
		start := time.Since(clockBase)
		if !r.runInline(req) {
			return
		}
		r.lastRun = time.Since(clockBase) - start
	}
}

// runInline runs req on the reading goroutine and reports whether this
// goroutine still reads.
func (r *streamReader) runInline(req *Request) bool {
	r.nextTok++
	tok := r.nextTok
	r.running.Store(tok)
	req.reader, req.readerTok = r, tok
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
		r.releaseHold()
		go r.loop()
	}
}

// releaseHold writes the replies held back while a burst was read.
func (r *streamReader) releaseHold() {
	if r.held.CompareAndSwap(true, false) {
		r.hold.release()
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

// sessionCancels marks the context of a stream session's handlers, whose
// cancellation always comes with the session's Close, which cancels every
// request in flight. A request's own context then hangs from requestParent
// instead: registering each one with the context every request shares,
// and removing it again, cost a lock and a map write on either side of
// every call (13% of a pipelined stdio tools/call's CPU time, profiled).
type sessionCancels struct {
	context.Context
	requests context.Context // requestParent{Context}, boxed once
}

// requestParent is ctx's values with no deadline (a stream session's
// context has none) and no Done channel.
type requestParent struct{ context.Context }

func (requestParent) Deadline() (time.Time, bool) { return time.Time{}, false }
func (requestParent) Done() <-chan struct{}       { return nil }
func (requestParent) Err() error                  { return nil }
