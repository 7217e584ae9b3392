package mcphttp

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
)

// ClientTransport is an mcp.Transport to a server's Streamable HTTP
// endpoint. Each message is a POST; answers come back as JSON or as an SSE
// stream, which is resumed with GET and Last-Event-ID when it breaks
// before the answer; after initialize a GET stream carries what the
// server sends unprompted. A server that refuses the first POST with 400,
// 404 or 405 is spoken to with the 2024-11-05 HTTP+SSE transport instead.
//
// The zero value of every option but Endpoint is a good default.
type ClientTransport struct {
	// Endpoint is the URL of the server's MCP endpoint, such as
	// http://127.0.0.1:8765/mcp.
	Endpoint string
	// HTTPClient sends the requests; an OAuth http.RoundTripper plugs in
	// here. It must have no overall Timeout, which would cut the
	// long-lived streams: each POST is bounded by the context of its
	// call instead. Nil means a client with connect and TLS handshake
	// timeouts only.
	HTTPClient *http.Client
	// WrapTransport, if set, wraps the http.RoundTripper of the client
	// that sends the requests (HTTPClient's, or the default client's
	// with its connect bounds), for instrumentation such as tracing
	// headers. Nil means no wrapper.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Header is added to every request, e.g. Authorization for an API
	// key.
	Header http.Header
	// MaxMessageSize is the largest JSON body or SSE event read; a larger
	// one fails the call it answers and the session goes on. Zero means
	// jsonrpc.DefaultMaxMessageSize (4 MiB).
	MaxMessageSize int
	// DisableLegacyFallback makes a server that refuses the first POST an
	// error rather than a cue to try the 2024-11-05 HTTP+SSE transport.
	DisableLegacyFallback bool
	// MaxRetries is how many resumptions in a row that bring nothing
	// new a response stream that broke before its answer gets before the
	// call fails (a resumption that brings events starts the count
	// again, so a server may poll). Zero means 2, as in the TypeScript
	// SDK; a negative value means none.
	MaxRetries int
	// CloseTimeout bounds the DELETE with which Close ends the session
	// on the server: a server that never answers it cannot hold Close.
	// Zero means 5 seconds.
	CloseTimeout time.Duration
	// Logger receives diagnostics. Nil means slog.Default().
	Logger *slog.Logger
}

// defaultHTTPClient bounds connecting, never the exchange: streams live
// as long as the session.
var defaultHTTPClient = sync.OnceValue(func() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   8,
		ForceAttemptHTTP2:     true,
	}}
})

// wrapClient returns hc, or the default client when hc is nil, with its
// transport wrapped by wrap. The wrapped client is a copy: a caller's
// client and the shared default stay as they were.
func wrapClient(hc *http.Client, wrap func(http.RoundTripper) http.RoundTripper) *http.Client {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	if wrap == nil {
		return hc
	}
	c := *hc
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = wrap(rt)
	return &c
}

// ServerKey names the server by its endpoint URL.
func (t *ClientTransport) ServerKey() string { return "http:" + t.Endpoint }

// Connect returns a connection to t.Endpoint. Nothing is sent until the
// first message (initialize), which also decides between Streamable HTTP
// and the legacy transport.
func (t *ClientTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	u, err := url.Parse(t.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("mcphttp: the endpoint %q is not an http or https URL", t.Endpoint)
	}
	c := &clientConn{
		endpoint:   u,
		hc:         t.HTTPClient,
		header:     t.Header.Clone(),
		maxSize:    t.MaxMessageSize,
		maxRetries: t.MaxRetries,
		closeWait:  t.CloseTimeout,
		fallback:   !t.DisableLegacyFallback,
		logger:     t.Logger,
		in:         newInbox(),
	}
	c.hc = wrapClient(c.hc, t.WrapTransport)
	if c.maxSize <= 0 {
		c.maxSize = jsonrpc.DefaultMaxMessageSize
	}
	if c.closeWait <= 0 {
		c.closeWait = defaultCloseTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = 2
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	c.ctx, c.cancel = context.WithCancelCause(context.Background())
	return c, nil
}

const (
	modeUnknown = iota // the first POST has not been answered yet
	modeStreamable
	modeLegacy
)

// noReplyTimeout bounds a POST that expects no JSON-RPC answer (a
// notification or a response) when its context has no deadline: the
// server owes it only a 202.
const noReplyTimeout = 30 * time.Second

// defaultCloseTimeout is ClientTransport.CloseTimeout's default.
const defaultCloseTimeout = 5 * time.Second

// sizeSetting names the option that raises the limit on the size of a
// server's answer, for mcp.MessageTooLargeError.
const sizeSetting = "mcphttp.ClientTransport.MaxMessageSize"

// codeTransportError is the code of the error responses the transport
// makes up for calls the server left unanswered, as the TypeScript SDK
// uses it for a closed connection.
const codeTransportError = -32000

var errClosed = fmt.Errorf("mcphttp: the connection was closed (%w)", mcp.ErrSessionClosed)

// clientConn is the mcp.Conn of a ClientTransport.
type clientConn struct {
	endpoint   *url.URL
	hc         *http.Client
	header     http.Header
	maxSize    int
	maxRetries int
	closeWait  time.Duration
	fallback   bool
	logger     *slog.Logger

	ctx    context.Context // ends at Close
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup // the goroutines reading streams
	in     *inbox

	probe sync.Mutex // held while the first POST decides the mode
	mode  atomic.Int32

	mu          sync.Mutex
	closed      bool
	sessionID   string
	sessionLost bool // the server forgot the session; initialize is next
	version     string
	wantGET     bool               // initialize succeeded: open the GET stream
	stopGET     context.CancelFunc // ends the current GET stream
	retry       time.Duration      // the last retry field the server sent
	hasRetry    bool
	legacyURL   *url.URL // where the legacy transport POSTs
}

// SetProtocolVersion records the negotiated revision, sent from now on in
// MCP-Protocol-Version; the GET stream opens once notifications/initialized
// has been accepted.
func (c *clientConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	c.version, c.wantGET = v, true
	c.mu.Unlock()
}

// ReadMessage returns the next message from the server, from whichever
// stream it came. An oversized one is a *jsonrpc.TooLargeError.
func (c *clientConn) ReadMessage() ([]byte, error) { return c.in.pop() }

func (c *clientConn) WriteMessage(msg []byte) error {
	return c.WriteMessageContext(context.Background(), msg)
}

// WriteMessageContext sends msg in a POST of its own. It returns once the
// server has accepted it; the answer to a request, or an error response
// saying why none came, follows through ReadMessage. ctx bounds the POST
// and the response stream that answers it.
func (c *clientConn) WriteMessageContext(ctx context.Context, msg []byte) error {
	if c.ctx.Err() != nil {
		return errClosed
	}
	o, err := classify(msg)
	if err != nil {
		return err
	}
	if c.mode.Load() == modeUnknown {
		c.probe.Lock()
		if c.mode.Load() == modeUnknown {
			defer c.probe.Unlock()
			return c.first(ctx, msg, o)
		}
		c.probe.Unlock()
	}
	if c.mode.Load() == modeLegacy {
		return c.legacyPost(ctx, msg)
	}
	_, err = c.post(ctx, msg, o)
	return err
}

// first sends the first message, and falls back to the legacy transport
// when the server refuses an initialize as a 2024-11-05 server does.
func (c *clientConn) first(ctx context.Context, msg []byte, o outgoing) error {
	status, err := c.post(ctx, msg, o)
	if err == nil {
		c.mode.Store(modeStreamable)
		return nil
	}
	if !o.initialize || !c.fallback || (status != http.StatusBadRequest && status != http.StatusNotFound && status != http.StatusMethodNotAllowed) {
		return err
	}
	c.logger.Debug("mcphttp: the server refused the Streamable HTTP initialize; trying the legacy HTTP+SSE transport", "endpoint", c.endpoint.Redacted(), "error", err)
	if lerr := c.startLegacy(ctx); lerr != nil {
		return fmt.Errorf("%w; the fallback to the legacy HTTP+SSE transport failed too: %w", err, lerr)
	}
	c.mode.Store(modeLegacy)
	return c.legacyPost(ctx, msg)
}

// Close ends the streams and then the session, with DELETE. It waits for
// the goroutines it started, and at most CloseTimeout for the server.
func (c *clientConn) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	sid := c.sessionID
	c.mu.Unlock()
	c.cancel(errClosed)
	c.in.finish(errClosed)
	c.wg.Wait()
	if sid == "" || c.mode.Load() == modeLegacy {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.closeWait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.endpoint.String(), nil)
	if err != nil {
		return nil
	}
	c.setHeaders(req, sid)
	resp, err := c.hc.Do(req)
	if err != nil {
		c.logger.Debug("mcphttp: ending the session failed", "error", requestError(http.MethodDelete, c.endpoint.Redacted(), err))
		return nil
	}
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotFound {
		c.logger.Debug("mcphttp: ending the session failed", "error", newHTTPError(resp, true))
		return nil
	}
	resp.Body.Close()
	return nil
}

// bind returns ctx, also ended by Close.
func (c *clientConn) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(c.ctx, func() { cancel(errClosed) })
	return ctx, func() { stop(); cancel(nil) }
}

// cause says why a request's context ended: Close, or the caller.
func (c *clientConn) cause(ctx context.Context) error {
	if c.ctx.Err() != nil {
		return errClosed
	}
	return context.Cause(ctx)
}

// spawn runs f on a goroutine Close waits for, unless Close has begun.
func (c *clientConn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// setHeaders adds the caller's headers, the session and the revision.
func (c *clientConn) setHeaders(req *http.Request, sid string) {
	for k, v := range c.header {
		req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
	}
	if sid != "" {
		req.Header.Set(headerSessionID, sid)
	}
	c.mu.Lock()
	v := c.version
	c.mu.Unlock()
	if v != "" {
		req.Header.Set(headerProtocolVersion, v)
	}
}

// session returns the session id to send, and whether the server forgot
// the last one.
func (c *clientConn) session() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID, c.sessionLost
}

// sessionGone forgets sid after the server answered 404 to it.
func (c *clientConn) sessionGone(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != sid {
		return
	}
	c.logger.Debug("mcphttp: the server ended the session", "session", sid)
	c.sessionID, c.sessionLost, c.wantGET = "", true, false
	if c.stopGET != nil {
		c.stopGET()
		c.stopGET = nil
	}
}

// serverRetry returns the last retry field the server sent.
func (c *clientConn) serverRetry() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.retry, c.hasRetry
}

var _ interface {
	mcp.Conn
	mcp.ContextWriter
	mcp.ProtocolVersionSetter
} = (*clientConn)(nil)
