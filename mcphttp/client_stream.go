package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// streamState is what the reader of a stream remembers across
// reconnections.
type streamState struct {
	pending  map[jsonrpc.ID]bool // requests still unanswered
	lastID   string              // the last event id, to resume after
	retry    time.Duration       // the stream's own retry field
	hasRetry bool
}

// maxRetryDelay caps a server's retry field, so that an absurd one does
// not stall a call for hours.
const maxRetryDelay = 5 * time.Minute

// consume reads events from body until it ends, delivering messages. It
// reports whether the stream brought anything new: a message or an event
// id not seen before.
func (c *clientConn) consume(body io.Reader, st *streamState) (bool, error) {
	r := newSSEReader(body, c.maxSize)
	progressed := false
	for {
		ev, err := r.next()
		if err != nil {
			return progressed, err
		}
		if ev.hasID && ev.id != st.lastID {
			st.lastID, progressed = ev.id, true
		}
		if ev.hasRetry {
			d := time.Duration(min(ev.retryMS, maxRetryDelay.Milliseconds())) * time.Millisecond
			st.retry, st.hasRetry = d, true
			c.mu.Lock()
			c.retry, c.hasRetry = d, true
			c.mu.Unlock()
		}
		if ev.event != "" && ev.event != "message" {
			c.logger.Debug("mcphttp: ignored an SSE event of an unknown type", "type", clientTruncate(ev.event, 64))
			continue
		}
		switch {
		case ev.tooLarge != nil:
			progressed = true
			c.tooLarge(ev.tooLarge, st.pending)
		case len(ev.data) > 0:
			progressed = true
			c.deliver(ev.data, st.pending)
		}
	}
}

// tooLarge fails the request an oversized event answers, when its id can
// be read; otherwise it passes the error on for the client to place.
func (c *clientConn) tooLarge(e *jsonrpc.TooLargeError, pending map[jsonrpc.ID]bool) {
	for _, id := range []jsonrpc.ID{jsonrpc.PeekID(e.Prefix), jsonrpc.PeekTrailingID(e.Suffix)} {
		if !id.IsZero() && pending[id] {
			delete(pending, id)
			c.in.push(nil, &mcp.MessageTooLargeError{Limit: e.Limit, Size: e.Size, Setting: sizeSetting, ID: id})
			return
		}
	}
	c.in.push(nil, e)
}

// readResponseStream reads the SSE answer to a POST. When the stream ends
// before answering every request, it is resumed with GET and
// Last-Event-ID after the server's retry delay, up to MaxRetries times in
// a row without progress; then the requests left get error responses.
func (c *clientConn) readResponseStream(ctx context.Context, body io.ReadCloser, ids []jsonrpc.ID) {
	st := &streamState{pending: idSet(ids)}
	fail := func(why string) {
		c.failIDs(remaining(st.pending), "mcphttp: the server closed the response stream before answering and it could not be resumed: "+why)
	}
	attempts := 0
	var lastErr error
	for {
		if body != nil {
			progressed, err := c.consume(body, st)
			body.Close()
			if progressed {
				attempts = 0
			}
			lastErr = err
			if errors.Is(err, io.EOF) {
				lastErr = errors.New("the server ended it")
			}
		}
		if len(st.pending) == 0 || ctx.Err() != nil {
			return
		}
		switch {
		case st.lastID == "":
			fail("it carried no event id to resume from")
			return
		case c.maxRetries == 0:
			fail("resumption is off (ClientTransport.MaxRetries is negative)")
			return
		case attempts >= c.maxRetries:
			fail(fmt.Sprintf("%d attempts in a row brought nothing; the last: %v", attempts, lastErr))
			return
		}
		attempts++
		delay := c.delay(st, attempts)
		c.logger.Debug("mcphttp: resuming a response stream", "last_event_id", st.lastID, "delay", delay, "attempt", attempts, "after", lastErr)
		if !sleepCtx(ctx, delay) {
			return
		}
		resp, err := c.get(ctx, st.lastID)
		body = nil
		switch {
		case err == nil:
			body = resp.Body
		case ctx.Err() != nil:
			return
		case permanent(err):
			fail(err.Error())
			return
		default:
			lastErr = err
		}
	}
}

// permanent reports whether a GET failed in a way retrying cannot mend:
// an answer in 4xx other than timeouts and rate limits.
func permanent(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Status/100 == 4 && he.Status != http.StatusRequestTimeout && he.Status != http.StatusTooManyRequests
}

// delay is how long to wait before reconnection attempt n: exactly the
// retry field of the server when it sent one, else a bounded exponential
// backoff from 1 second.
func (c *clientConn) delay(st *streamState, n int) time.Duration {
	if st.hasRetry {
		return st.retry
	}
	if d, ok := c.serverRetry(); ok {
		return d
	}
	return backoff(n)
}

func backoff(n int) time.Duration {
	d := time.Second
	for i := 1; i < n && d < 30*time.Second; i++ {
		d = d * 3 / 2
	}
	return min(d, 30*time.Second)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// get opens an SSE stream with GET: the standalone stream, or a
// resumption when lastID is set.
func (c *clientConn) get(ctx context.Context, lastID string) (*http.Response, error) {
	sid, _ := c.session()
	u := c.endpoint.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.endpoint.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("mcphttp: %w", err)
	}
	c.setHeaders(req, sid)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set(headerLastEventID, lastID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			err = c.cause(ctx)
		}
		return nil, requestError(http.MethodGet, u, err)
	}
	if resp.StatusCode/100 != 2 {
		// A 404 here may mean the session is gone, or only that the
		// server has no GET route: the next POST tells, without costing a
		// new session per GET to a server of the second kind.
		return nil, newHTTPError(resp, sid != "")
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("mcphttp: GET %s: the server answered with Content-Type %q, not an event stream", u, clientTruncate(ct, 64))
	}
	return resp, nil
}

// startGET opens the standalone GET stream of the session, if
// initialize has succeeded, ending any earlier one. The channel it
// returns is closed once the server has answered the first GET (or it
// failed, or none was sent).
func (c *clientConn) startGET() <-chan struct{} {
	ready := make(chan struct{})
	c.mu.Lock()
	if !c.wantGET || c.closed {
		c.mu.Unlock()
		close(ready)
		return ready
	}
	if c.stopGET != nil {
		c.stopGET()
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.stopGET = cancel
	c.mu.Unlock()
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	if !c.spawn(func() {
		defer cancel()
		defer signal()
		c.runGET(ctx, signal)
	}) {
		cancel()
		signal()
	}
	return ready
}

// runGET keeps the standalone stream open until ctx ends, reconnecting
// with Last-Event-ID when it drops. A server without one (405 or 404) is
// left alone.
func (c *clientConn) runGET(ctx context.Context, answered func()) {
	st := &streamState{}
	failures := 0
	for {
		resp, err := c.get(ctx, st.lastID)
		answered()
		if ctx.Err() != nil {
			if resp != nil {
				resp.Body.Close()
			}
			return
		}
		if err != nil {
			var he *HTTPError
			if errors.As(err, &he) {
				switch {
				case he.Status == http.StatusMethodNotAllowed || he.Status == http.StatusNotFound:
					c.logger.Debug("mcphttp: the server offers no GET stream", "status", he.Status)
					return
				case he.Status == http.StatusBadRequest && st.lastID != "":
					// It does not know the event: a fresh stream is the
					// best left.
					st.lastID = ""
				case he.Status == http.StatusConflict:
					// The server has not yet noticed that our last stream
					// is gone: it will.
				case permanent(err):
					c.logger.Warn("mcphttp: the GET stream for server messages could not be opened", "error", err)
					return
				}
			}
			failures++
			c.logger.Debug("mcphttp: the GET stream could not be opened; retrying", "error", err, "attempt", failures)
		} else {
			progressed, err := c.consume(resp.Body, st)
			resp.Body.Close()
			if ctx.Err() != nil {
				return
			}
			if progressed {
				failures = 0
			} else if failures++; failures >= 2 {
				// Resuming brings nothing twice in a row: the events may
				// be gone, so start afresh.
				st.lastID = ""
			}
			c.logger.Debug("mcphttp: the GET stream ended; reconnecting", "error", err)
		}
		d := backoff(failures)
		if failures <= 1 {
			d = c.delay(st, 1)
		} else if r, ok := c.serverRetry(); ok {
			d = max(d, r)
		}
		if !sleepCtx(ctx, d) {
			return
		}
	}
}
