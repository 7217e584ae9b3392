package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// HTTPError is a server's answer with a status outside 2xx. It wraps
// mcp.ErrSessionNotFound when the status is 404 and the request carried a
// session id: the server has ended the session.
type HTTPError struct {
	Status int
	Header http.Header
	// Body is the start of the response body (at most 4 KiB).
	Body string
	// Method is the HTTP method of the request: POST, GET or DELETE.
	Method string

	url     string
	session bool // the request carried Mcp-Session-Id
}

// maxErrorBody bounds what an error answer's body is read for.
const maxErrorBody = 4 << 10

func newHTTPError(resp *http.Response, session bool) *HTTPError {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	return &HTTPError{
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Body:    string(b),
		Method:  resp.Request.Method,
		url:     resp.Request.URL.Redacted(),
		session: session,
	}
}

func (e *HTTPError) Error() string {
	var why string
	status := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
	switch {
	case e.Status == http.StatusUnauthorized:
		why = "the server requires authorization (" + status + "); set credentials in ClientTransport.Header (such as an API key) or an OAuth HTTPClient"
	case e.Status == http.StatusForbidden:
		why = "the server refused access (" + status + "): the credentials lack the permission (scope) needed, or the server does not allow this client's Origin or Host"
	case e.Status == http.StatusNotFound && e.session:
		why = "the server no longer knows this session (" + status + "): it ended or expired; a new one must be initialized"
	case e.Status == http.StatusNotFound:
		why = "the server has no MCP endpoint at this URL (" + status + "); check ClientTransport.Endpoint"
	case e.Status == http.StatusMethodNotAllowed:
		why = "the server does not accept " + e.Method + " at this URL (" + status + ")"
	case e.Status == http.StatusNotAcceptable || e.Status == http.StatusUnsupportedMediaType:
		why = "the server rejected the request's headers (" + status + ")"
	case e.Status == http.StatusRequestEntityTooLarge:
		why = "the message is larger than the server accepts (" + status + ")"
	case e.Status == http.StatusTooManyRequests:
		why = "the server is limiting the rate of requests (" + status + "); retry later"
	case e.Status == http.StatusBadRequest:
		why = "the server rejected the request (" + status + ")"
	case e.Status >= 500:
		why = "the server failed (" + status + "); retry later"
	default:
		why = "the server answered " + status
	}
	msg := "mcphttp: " + e.Method + " " + e.url + ": " + why
	if d := e.detail(); d != "" {
		msg += ": " + d
	}
	return msg
}

// detail is the server's own explanation: the message of a JSON-RPC error
// body, or the start of a text body.
func (e *HTTPError) detail() string {
	body := strings.TrimSpace(e.Body)
	if body == "" {
		return ""
	}
	if m, err := jsonrpc.DecodeMessage([]byte(body)); err == nil && m.Error != nil {
		return clientTruncate(m.Error.Message, 300)
	}
	if strings.HasPrefix(e.Header.Get("Content-Type"), "text/html") {
		return ""
	}
	return clientTruncate(strings.Join(strings.Fields(body), " "), 300)
}

// Unwrap reports a 404 to a request that carried a session id as
// mcp.ErrSessionNotFound, on which an mcp.Client starts a new session.
func (e *HTTPError) Unwrap() error {
	if e.Status == http.StatusNotFound && e.session {
		return mcp.ErrSessionNotFound
	}
	return nil
}

// RetryAfter is how long the server asked the client to wait before its
// next request, read from the answer's Retry-After header (seconds, or
// an HTTP date); zero when it sent none, or one that cannot be read or
// has passed. A 429 (Too Many Requests) often carries it, and a 503.
func (e *HTTPError) RetryAfter() time.Duration {
	v := strings.TrimSpace(e.Header.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		// Beyond any sane wait, and beyond what a Duration holds.
		return time.Duration(min(s, maxRetryAfter)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// maxRetryAfter caps, in seconds, the Retry-After that RetryAfter
// reports: a year.
const maxRetryAfter = 365 * 24 * 3600

// RequestError is a request that got no HTTP answer: the connection to
// the server could not be made, or it failed or was closed before the
// answer's status came. Whether the server received the request is then
// unknown, unless NotSent.
type RequestError struct {
	// Method is the HTTP method of the request: POST, GET or DELETE.
	Method string
	// NotSent reports that the request certainly did not reach the
	// server: the connection could not be made (refused, unreachable, a
	// name that does not resolve), so sending it again cannot run it
	// twice.
	NotSent bool
	// Err is the cause, as the HTTP client reported it.
	Err error

	msg string
}

func (e *RequestError) Error() string { return e.msg }

// Unwrap returns the cause.
func (e *RequestError) Unwrap() error { return e.Err }

// errServerClosedIdle is the text of net/http's error (unexported) for
// a request sent on a kept-alive connection that the server closed
// meanwhile: the server closed it without answering, as with io.EOF.
// net/http sends such a request again only when it is idempotent, which
// a POST is not.
const errServerClosedIdle = "http: server closed idle connection"

// requestError explains why a request got no answer at all.
func requestError(method, u string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	switch {
	case errors.Is(err, errClosed):
		return errClosed
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("mcphttp: %s %s: %w", method, u, err)
	}
	re := &RequestError{Method: method, Err: err}
	var op *net.OpError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), err.Error() == errServerClosedIdle:
		re.msg = fmt.Sprintf("mcphttp: %s %s: the server closed the connection without answering: %v", method, u, err)
	case errors.As(err, &op) && op.Op == "dial":
		re.NotSent = true
		re.msg = fmt.Sprintf("mcphttp: %s %s: the server could not be reached: %v", method, u, err)
	default:
		re.msg = fmt.Sprintf("mcphttp: %s %s: the request failed: %v", method, u, err)
	}
	return re
}

func clientTruncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
