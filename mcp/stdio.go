package mcp

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// ServeOptions configure ServeConn and ServeStdio.
type ServeOptions struct {
	// MaxMessageSize is the largest message read (stdio); a larger one is
	// answered with an error naming the limit and the session goes on.
	// Zero means jsonrpc.DefaultMaxMessageSize (4 MiB).
	MaxMessageSize int
	// ShutdownTimeout is how long requests in flight may run on once the
	// input ends or ctx is cancelled. Zero means 10 seconds.
	ShutdownTimeout time.Duration
}

// NewStdioConn returns a Conn of newline-delimited messages read from r
// and written to w. Close closes r and w when they are io.Closers.
func NewStdioConn(r io.Reader, w io.Writer, maxMessageSize int) Conn {
	return &lineConn{r: jsonrpc.NewLineReader(r, maxMessageSize), w: jsonrpc.NewLineWriter(w), rc: r, wc: w}
}

type lineConn struct {
	r    *jsonrpc.LineReader
	w    *jsonrpc.LineWriter
	rc   io.Reader
	wc   io.Writer
	once sync.Once
}

func (c *lineConn) ReadMessage() ([]byte, error)  { return c.r.Read() }
func (c *lineConn) LineWaiting() bool             { return c.r.LineWaiting() }
func (c *lineConn) WriteMessage(msg []byte) error { return c.w.Write(msg) }
func (c *lineConn) hold()                         { c.w.Hold() }
func (c *lineConn) release()                      { c.w.Release() }

// holder is a MessageWriter that can keep writes back while the reader
// reads a pipelined burst, so that the burst's replies share one write.
type holder interface {
	hold()
	release()
}

func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		if cl, ok := c.rc.(io.Closer); ok {
			err = cl.Close()
		}
		if cl, ok := c.wc.(io.Closer); ok && any(cl) != any(c.rc) {
			err = errors.Join(err, cl.Close())
		}
	})
	return err
}

// ServeStdio serves one session on standard input and output until the
// input ends or ctx is cancelled (use signal.NotifyContext for SIGTERM and
// SIGINT), then lets requests in flight finish and returns nil. Nothing
// but protocol messages is written to stdout.
func (s *Server) ServeStdio(ctx context.Context, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	in, out := stdioFiles()
	return s.ServeConn(ctx, NewStdioConn(in, out, o.MaxMessageSize), &o)
}

// ServeConn serves one session on conn until the peer ends the stream or
// ctx is cancelled. It then stops reading, gives requests in flight up to
// ShutdownTimeout to finish (their answers are still written), cancels any
// that remain, and returns. An error is returned only if reading failed
// for a reason other than the end of the stream.
func (s *Server) ServeConn(ctx context.Context, conn Conn, opts *ServeOptions) error {
	var o ServeOptions
	if opts != nil {
		o = *opts
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	ss := s.NewSession(conn, nil)
	// Handlers outlive a cancelled ctx by up to ShutdownTimeout: the
	// reader gives them ctx's values only, and ss.Close cancels them.
	r := newStreamReader(ctx, ss, conn)
	go r.loop()

	var err error
	select {
	case err = <-r.readErr:
	case <-ctx.Done():
		r.stop()
	}
	// Drain: requests already admitted finish, up to the deadline.
	ss.Drain()
	done := make(chan struct{})
	go func() {
		ss.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(o.ShutdownTimeout):
		s.logger.Warn("mcp: requests still running at shutdown were cancelled", "timeout", o.ShutdownTimeout)
		ss.Close()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	ss.Close()
	if ctx.Err() != nil {
		// The reader may be blocked in a read that only closing ends.
		conn.Close()
	}
	return err
}
