package mcphttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/httpmeta"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// getReadyWait bounds the wait, after initialization, for the server to
// answer the GET that opens the standalone stream.
const getReadyWait = time.Second

// post sends one message to the endpoint and sees to its answer: a JSON
// body is read before it returns, an SSE stream is read by a goroutine.
// It returns the HTTP status (0 when there was none) for the fallback
// decision.
func (c *clientConn) post(ctx context.Context, msg []byte, o outgoing) (int, error) {
	sid, lost := c.session()
	if o.perRequest != nil {
		// 2026-07-28 requests stand alone: no session.
		sid, lost = "", false
	}
	if o.initialize {
		// A new session is asked for without one.
		sid = ""
	} else if lost {
		return 0, fmt.Errorf("mcphttp: the server ended the session; it must be initialized again: %w", mcp.ErrSessionNotFound)
	}
	ctx, done := c.bind(ctx)
	if _, ok := ctx.Deadline(); !ok && len(o.ids) == 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, noReplyTimeout)
		unbind := done
		done = func() { cancel(); unbind() }
	}
	u := c.endpoint.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint.String(), bytes.NewReader(msg))
	if err != nil {
		done()
		return 0, fmt.Errorf("mcphttp: %w", err)
	}
	c.setHeaders(req, sid)
	for k, v := range o.perRequest {
		req.Header[k] = v
	}
	if o.perRequest != nil {
		for k, v := range httpmeta.CallHeaders(ctx) {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			err = c.cause(ctx)
		}
		done()
		return 0, requestError(http.MethodPost, u, err)
	}
	if resp.StatusCode/100 != 2 && o.perRequest != nil && resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusTooManyRequests &&
		mediaType(resp.Header.Get("Content-Type")) == "application/json" {
		// A 2026-07-28 server answers errors with a status and a JSON-RPC
		// body that the caller must see as the call's error: a legacy
		// server's refusal of the same request carries no matching id.
		// Not a 429: its Retry-After, which only the HTTPError keeps, is
		// what the caller must act on (the body's message is in it too).
		b, _ := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxSize)))
		resp.Body.Close()
		if m, err := jsonrpc.DecodeMessage(b); err == nil && m.Kind() == jsonrpc.KindResponse && m.ID == o.ids[0] {
			done()
			c.in.push(b, nil)
			return resp.StatusCode, nil
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	}
	if resp.StatusCode/100 != 2 {
		he := newHTTPError(resp, sid != "")
		done()
		if he.Status == http.StatusNotFound && sid != "" {
			c.sessionGone(sid)
		}
		return he.Status, he
	}
	if o.initialize {
		c.mu.Lock()
		// A server without sessions sends no id, and needs none back.
		c.sessionID, c.sessionLost = resp.Header.Get(headerSessionID), false
		c.mu.Unlock()
	}
	if o.initialized {
		// Servers send what they have to say unprompted (such as an
		// elicitation during the first call) on the GET stream, and many
		// drop it when there is none yet: let the stream open before
		// the first request goes out, for at most getReadyWait, which a
		// server that holds the headers of its GET answer costs.
		select {
		case <-c.startGET():
		case <-time.After(getReadyWait):
		case <-ctx.Done():
		}
	}
	if len(o.ids) == 0 || resp.StatusCode == http.StatusAccepted {
		// Nothing to read: drain a little so the connection can be reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		resp.Body.Close()
		done()
		return resp.StatusCode, nil
	}
	switch ct := mediaType(resp.Header.Get("Content-Type")); ct {
	case "application/json":
		c.readJSON(ctx, resp.Body, resp.ContentLength, o.ids)
		done()
	case "text/event-stream":
		ok := c.spawn(func() {
			defer done()
			c.readResponseStream(ctx, resp.Body, o.ids)
		})
		if !ok {
			resp.Body.Close()
			done()
		}
	default:
		resp.Body.Close()
		done()
		c.failIDs(o.ids, fmt.Sprintf("mcphttp: the server answered POST with Content-Type %q, neither application/json nor text/event-stream", clientTruncate(ct, 64)))
	}
	return resp.StatusCode, nil
}

func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

// readJSON delivers a JSON answer, and answers with an error each request
// of ids it does not answer, so that no call waits for its deadline.
// size is the body's Content-Length, or -1 when unknown.
func (c *clientConn) readJSON(ctx context.Context, body io.ReadCloser, size int64, ids []jsonrpc.ID) {
	b, err := io.ReadAll(io.LimitReader(body, int64(c.maxSize)+1))
	body.Close()
	switch {
	case err != nil && ctx.Err() != nil:
		return // the caller stopped waiting, or Close
	case err != nil:
		c.failIDs(ids, "mcphttp: the server closed the connection before finishing its response: "+err.Error())
		return
	case len(b) > c.maxSize:
		for _, id := range ids {
			c.in.push(nil, &mcp.MessageTooLargeError{Limit: c.maxSize, Size: max(int(size), 0), Setting: sizeSetting, ID: id})
		}
		return
	case !jsontext.Value(b).IsValid(jsontext.AllowInvalidUTF8(true)):
		c.failIDs(ids, "mcphttp: the server's response is not valid JSON: "+clientTruncate(string(b), 100))
		return
	}
	pending := idSet(ids)
	answered(b, pending)
	c.in.push(b, nil)
	c.failIDs(remaining(pending), "mcphttp: the server's JSON response did not answer the request")
}

func idSet(ids []jsonrpc.ID) map[jsonrpc.ID]bool {
	m := make(map[jsonrpc.ID]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func remaining(pending map[jsonrpc.ID]bool) []jsonrpc.ID {
	ids := make([]jsonrpc.ID, 0, len(pending))
	for id := range pending {
		ids = append(ids, id)
	}
	return ids
}

// answered removes from pending the requests that data (a message or a
// batch) answers. A malformed answer counts: the client fails its call.
// The server's own requests may reuse our ids, so the id alone is not
// enough.
func answered(data []byte, pending map[jsonrpc.ID]bool) {
	if len(pending) == 0 {
		return
	}
	elems := [][]byte{data}
	if jsonrpc.IsBatch(data) {
		elems, _ = jsonrpc.SplitBatch(data)
	}
	for _, e := range elems {
		id := jsonrpc.PeekID(e)
		if id.IsZero() || !pending[id] {
			continue
		}
		m, err := jsonrpc.DecodeMessage(e)
		var de *jsonrpc.DecodeError
		if err == nil && m.Kind() == jsonrpc.KindResponse || errors.As(err, &de) && de.ID == id && !de.Reply {
			delete(pending, id)
		}
	}
}

// deliver hands a message to ReadMessage; data that is not JSON at all
// is logged and skipped.
func (c *clientConn) deliver(data []byte, pending map[jsonrpc.ID]bool) {
	if !jsontext.Value(data).IsValid(jsontext.AllowInvalidUTF8(true)) {
		c.logger.Warn("mcphttp: skipped an SSE event whose data is not JSON", "data", clientTruncate(string(data), 100))
		return
	}
	answered(data, pending)
	c.in.push(data, nil)
}

// outgoing is what the transport needs to know of a message it sends.
type outgoing struct {
	ids         []jsonrpc.ID // of the requests, which expect an answer
	initialize  bool
	initialized bool
	perRequest  http.Header // a 2026-07-28 request: its routing headers
}

func classify(msg []byte) (outgoing, error) {
	var o outgoing
	elems := [][]byte{msg}
	if jsonrpc.IsBatch(msg) {
		var err error
		if elems, err = jsonrpc.SplitBatch(msg); err != nil {
			return o, fmt.Errorf("mcphttp: not a JSON-RPC batch: %s", jsonrpc.AsError(err).Message)
		}
	}
	for _, e := range elems {
		m, err := jsonrpc.DecodeMessage(e)
		if err != nil {
			return o, fmt.Errorf("mcphttp: not a JSON-RPC message: %s", err)
		}
		switch m.Kind() {
		case jsonrpc.KindRequest:
			o.ids = append(o.ids, m.ID)
			o.initialize = o.initialize || m.Method == "initialize"
			if len(elems) == 1 && httpmeta.PerRequestClaim(m.Params) {
				o.perRequest = perRequestHeaders(m)
			}
		case jsonrpc.KindNotification:
			o.initialized = o.initialized || m.Method == "notifications/initialized"
		}
	}
	return o, nil
}
