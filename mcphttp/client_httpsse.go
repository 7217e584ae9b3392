package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The 2024-11-05 HTTP+SSE transport, for servers that refuse the first
// POST: a GET of the endpoint opens a stream whose first event,
// "endpoint", names the URL to POST messages to; everything the server
// sends, answers included, comes on that stream, and its end is the end
// of the session.

// startLegacy opens the legacy stream and waits, within ctx, for its
// endpoint event.
func (c *clientConn) startLegacy(ctx context.Context) error {
	u := c.endpoint.Redacted()
	// The stream lives as long as the connection; ctx bounds only the
	// wait for the endpoint.
	sctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	fail := func(err error) error {
		stop()
		cancel()
		return err
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, c.endpoint.String(), nil)
	if err != nil {
		return fail(fmt.Errorf("mcphttp: %w", err))
	}
	c.setHeaders(req, "")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return fail(requestError(http.MethodGet, u, err))
	}
	if resp.StatusCode/100 != 2 {
		return fail(newHTTPError(resp, false))
	}
	if ct := mediaType(resp.Header.Get("Content-Type")); ct != "text/event-stream" {
		resp.Body.Close()
		return fail(fmt.Errorf("mcphttp: GET %s: the server answered with Content-Type %q, not an event stream", u, clientTruncate(ct, 64)))
	}
	r := newSSEReader(resp.Body, c.maxSize)
	var post *url.URL
	for post == nil {
		ev, err := r.next()
		if err != nil {
			resp.Body.Close()
			if ctx.Err() != nil {
				err = context.Cause(ctx)
			} else if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended")
			}
			return fail(fmt.Errorf("mcphttp: GET %s: no endpoint event came: %w", u, err))
		}
		if ev.event != "endpoint" {
			c.logger.Debug("mcphttp: ignored a legacy SSE event before the endpoint event", "type", clientTruncate(ev.event, 64))
			continue
		}
		if post, err = c.endpoint.Parse(strings.TrimSpace(string(ev.data))); err != nil || ev.tooLarge != nil {
			resp.Body.Close()
			return fail(fmt.Errorf("mcphttp: GET %s: the endpoint event does not hold a URL: %q", u, clientTruncate(string(ev.data), 100)))
		}
		if origin(post) != origin(c.endpoint) {
			resp.Body.Close()
			return fail(fmt.Errorf("mcphttp: GET %s: refusing the endpoint %s: it is on another origin than the server's", u, post.Redacted()))
		}
	}
	if !stop() {
		resp.Body.Close()
		cancel()
		return requestError(http.MethodGet, u, context.Cause(ctx))
	}
	c.mu.Lock()
	c.legacyURL = post
	c.mu.Unlock()
	if !c.spawn(func() {
		defer cancel()
		defer resp.Body.Close()
		c.readLegacy(r)
	}) {
		resp.Body.Close()
		cancel()
		return errClosed
	}
	c.logger.Debug("mcphttp: using the legacy HTTP+SSE transport", "endpoint", u, "post", post.Redacted())
	return nil
}

// origin is scheme://host:port with the port always written.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// readLegacy delivers the messages of the legacy stream; its end ends the
// connection, for the session on the server ended with it.
func (c *clientConn) readLegacy(r *sseReader) {
	for {
		ev, err := r.next()
		if err != nil {
			if c.ctx.Err() == nil {
				c.in.finish(fmt.Errorf("mcphttp: the server ended the legacy HTTP+SSE stream, and with it the session: %w", err))
			}
			return
		}
		switch {
		case ev.event != "" && ev.event != "message":
			c.logger.Debug("mcphttp: ignored a legacy SSE event of an unknown type", "type", clientTruncate(ev.event, 64))
		case ev.tooLarge != nil:
			c.in.push(nil, ev.tooLarge)
		case len(ev.data) > 0:
			c.deliver(ev.data, nil)
		}
	}
}

// legacyPost sends one message to the endpoint the stream named; the
// server answers 202 and sends any answer on the stream.
func (c *clientConn) legacyPost(ctx context.Context, msg []byte) error {
	c.mu.Lock()
	post := c.legacyURL
	c.mu.Unlock()
	ctx, done := c.bind(ctx)
	defer done()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, noReplyTimeout)
		defer cancel()
	}
	u := post.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, post.String(), bytes.NewReader(msg))
	if err != nil {
		return fmt.Errorf("mcphttp: %w", err)
	}
	c.setHeaders(req, "")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			err = c.cause(ctx)
		}
		return requestError(http.MethodPost, u, err)
	}
	if resp.StatusCode/100 != 2 {
		return newHTTPError(resp, false)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return nil
}
