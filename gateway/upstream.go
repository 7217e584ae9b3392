package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/auth/oauthclient"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/slogthrottle"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// State is an upstream's health.
type State string

const (
	StateStarting State = "starting" // connecting for the first time, or again
	StateReady    State = "ready"
	StateDegraded State = "degraded" // connected, but health checks or calls fail
	StateIdle     State = "idle"     // a lazy stdio server stopped until needed; its tools stay listed
	StateDown     State = "down"     // not connected; its tools are withdrawn until it is back
	// StateFailed: a command server that failed to start the same way
	// maxSameFailures times in a row; not tried again until its settings
	// change or an operator retries it (Gateway.Retry).
	StateFailed State = "failed"
	// StateAuthFailed: an upstream that refused the gateway's
	// credentials (HTTP 401 or 403, or a refused OAuth grant); not tried
	// again, since that would be refused too and may lock the account,
	// until its settings change, an operator retries it (Gateway.Retry),
	// or a person signs in again (mcpgate login). Its error says which.
	StateAuthFailed State = "auth-failed"
)

// maxSameFailures is how many identical start failures in a row make a
// command server failed.
const maxSameFailures = 5

// maxBackoff caps the wait between two attempts to connect.
const maxBackoff = 5 * time.Minute

// upstream is one configured server, supervised: connected, listed,
// checked, reconnected with backoff when it fails.
type upstream struct {
	g      *Gateway
	cfg    *config.Server
	logger *slog.Logger
	slots  chan struct{} // the concurrency bound
	// largeAPI says the server is a REST API whose description maps to
	// more than largeAPITools tools (openapi.go).
	largeAPI atomic.Bool

	mu      sync.Mutex
	state   State
	cs      *mcp.ClientSession
	ready   chan struct{} // closed and replaced whenever a connection is up or given up on
	lastErr error
	retryAt time.Time // when a down upstream is tried again
	since   time.Time // when the state last changed
	// connected: a session was up once, so the next one is a restart.
	connected bool
	restarts  int
	stats     callStats
	lastUsed  time.Time
	catalog   *catalog        // what it lists, as the gateway publishes it
	subs      map[string]bool // the resources subscribed to upstream, by its URI
	holds     map[string]int  // its URIs wanted by client requests in flight (subscribe.go)
	// optionalFailed: the optional kinds (prompts, resources...) the
	// server failed to list, with the wait before the next try.
	optionalFailed map[string]time.Duration
	active         []*activeCall
	breaker        breaker
	// bare: its latest session is with a bare tool server (bare.go).
	bare atomic.Bool

	// refreshMu runs this upstream's refreshes one at a time (held while
	// it is listed, which concerns no other upstream); refreshAsked
	// counts the refreshes asked for, refreshDone is the count when the
	// last successful one started (refreshMu).
	refreshMu     sync.Mutex
	refreshAsked  atomic.Int64
	refreshDone   int64
	refreshQueued atomic.Bool // a list_changed refresh waits for refreshMu
	// pubMu orders this upstream's publications and withdrawal (no I/O
	// but the pin store's one read and one write); raw is its last
	// listing before the pins had their say, kept to publish again when
	// a pin is approved (nil once withdrawn).
	pubMu sync.Mutex
	raw   *listing
	// flagged remembers the scanner's findings by definition hash, so
	// that a refresh scans only definitions it has not seen (pubMu).
	flagged map[string][]pins.Finding

	// subMu orders the changes of this upstream's resource
	// subscriptions, held across them (only this upstream's calls).
	subMu sync.Mutex

	local     *mcp.Server // a built-in, served in this process over a pipe
	tenantKey string      // "tenant/server" for a tenant's own instance, which publishes nothing

	// inst: a session's own instance, and the per-instance variables
	// (instances.go).
	inst instanceInfo

	// client connects to the upstream, kept across connections; only the
	// run goroutine uses it.
	client *mcp.Client
	// oauth is the OAuth client of an upstream with oauth, kept across
	// reconnections for its tokens; only the run goroutine uses it.
	oauth *http.Client
	// watch is the HTTP transport of the latest connection, which tells
	// refused when the upstream refuses our credentials in the middle of
	// a session; only the run goroutine uses it.
	watch   *refusalWatch
	refused chan error
	// hopFailed tells the supervisor that a call could not reach the
	// upstream (do), so it probes at once.
	hopFailed chan error
	// timedOut tells the supervisor that a call ran out of its time, so
	// it checks that the upstream still answers (supervise.go).
	timedOut chan error
	// hung is the last session closed because its server stopped
	// answering (mu): its calls fail as timed out, not as broken.
	hung *mcp.ClientSession
	// limitedTill is when the rate limit the upstream asked for ends
	// (mu): till then its calls fail fast (supervise.go).
	limitedTill time.Time

	// firstRound, set by Start, tells the gateway that the upstream's
	// first connection was listed or failed (nil after a reload).
	firstRound func()

	wake   chan struct{} // asks an idle upstream to connect
	retry  chan struct{} // asks a failed upstream to start again
	cancel context.CancelFunc
	done   chan struct{}
}

func newUpstream(g *Gateway, cfg *config.Server) *upstream {
	n := cfg.MaxConcurrency
	if n <= 0 {
		n = 32
	}
	return &upstream{
		g: g, cfg: cfg, logger: upstreamLogger(g.logger, cfg.Name),
		slots: make(chan struct{}, n), state: StateStarting, since: time.Now(), ready: make(chan struct{}),
		wake: make(chan struct{}, 1), retry: make(chan struct{}, 1), refused: make(chan error, 1), hopFailed: make(chan error, 1), timedOut: make(chan error, 1), done: make(chan struct{}),
	}
}

// upstreamLogger is the logger of one upstream (its stderr, its
// client's warnings, the gateway's lines about it): throttled on its own,
// so a server that writes garbage or floods notifications costs a few
// lines a minute and a count of the rest, and never silences another.
func upstreamLogger(l *slog.Logger, name string, attrs ...any) *slog.Logger {
	h := slogthrottle.New(l.Handler(), &slogthrottle.Options{Limit: 100, Interval: time.Minute})
	return slog.New(h).With(append([]any{"upstream", name}, attrs...)...)
}

// startTimeout bounds a connection's start: initialize and listing.
func (u *upstream) startTimeout() time.Duration {
	if d := u.cfg.StartTimeout.D(); d > 0 {
		return d
	}
	return config.DefaultStartTimeout.D()
}

func (u *upstream) timeout() time.Duration {
	if d := u.cfg.Timeout.D(); d > 0 {
		return d
	}
	return 30 * time.Second
}

func (u *upstream) lazy() bool { return u.cfg.Command != "" && u.cfg.Start != "eager" }

// transport builds the connection to the server: a subprocess with its
// stderr in our log, or HTTP with the configured credentials on this hop
// only.
func (u *upstream) transport() (mcp.Transport, error) {
	c, err := u.instanceConfig()
	if err != nil {
		return nil, err
	}
	if u.local != nil {
		return localTransport{u.local}, nil
	}
	if c.OpenAPI != nil {
		ctx, cancel := context.WithTimeout(context.Background(), openAPIWait)
		defer cancel()
		srv, err := u.openAPIServer(ctx, c)
		if err != nil {
			return nil, err
		}
		return localTransport{srv}, nil
	}
	if c.Command != "" {
		// Looked up first, so a command that is not there is one clear
		// error per attempt, not a failed start.
		path, err := c.LookCommand()
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(path, c.Args...)
		cmd.Args[0] = c.Command
		cmd.Env = os.Environ()
		for k, v := range c.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.Dir = c.Cwd
		return &mcp.CommandTransport{Command: cmd, Logger: u.logger.With("stream", "stderr")}, nil
	}
	h := http.Header{}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	if c.BearerToken != "" {
		h.Set("Authorization", "Bearer "+c.BearerToken)
	}
	t := &mcphttp.ClientTransport{Endpoint: c.URL, Header: h, Logger: u.logger, DisableLegacyFallback: c.Type == "http" || c.Type == "streamable-http"}
	u.watch = &refusalWatch{u: u, base: http.DefaultTransport}
	t.HTTPClient = &http.Client{Transport: u.g.tracing.transport(u.watch)}
	if c.OAuth != nil {
		if u.oauth == nil {
			// authorization_code: tokens a person got with `mcpgate login`,
			// refreshed here; the gateway never opens a browser (no
			// Authorize), so a refused refresh ends in ErrSignInRequired.
			// Only those go in the shared token file: a client_credentials
			// token (a nil Store keeps it in memory) is the service
			// account's, and the file is also what `mcpgate --oauth` reads
			// as the user's own token for the same URL.
			var store oauthclient.TokenStore
			if c.OAuth.Grant == oauthclient.GrantAuthorizationCode {
				store = u.g.tokenStore
			}
			u.oauth = &http.Client{Transport: oauthclient.NewTransport(oauthclient.Config{
				ServerURL: c.URL, GrantType: c.OAuth.Grant, ClientID: c.OAuth.ClientID, ClientSecret: c.OAuth.ClientSecret,
				Scopes: c.OAuth.Scopes, ClientName: "mcpgate", Store: store, Logger: u.logger,
				AllowPrivateNetworks: c.OAuth.AllowPrivateNetworks,
			}, nil)}
		}
		u.watch.base = u.oauth.Transport
	}
	return t, nil
}

// signInGrant reports whether a person signs in for this upstream with
// `mcpgate login`, which is then the remedy for a refusal.
func (u *upstream) signInGrant() bool {
	return u.cfg.OAuth != nil && u.cfg.OAuth.Grant == oauthclient.GrantAuthorizationCode
}

// authFailure reports whether err is the upstream refusing our
// credentials: retrying would only be refused again (and may lock the
// account), so the upstream stays down until the configuration changes.
// An authorization server that is down or failing (ErrTemporary) is not
// a refusal: that is retried with backoff like any outage.
func authFailure(err error) bool {
	var he *mcphttp.HTTPError
	return errors.As(err, &he) && (he.Status == http.StatusUnauthorized || he.Status == http.StatusForbidden) ||
		errors.Is(err, oauthclient.ErrAuthorization) && !errors.Is(err, oauthclient.ErrTemporary)
}

// refusalWatch is an HTTP upstream's transport. Once its session is up
// (live), it tells the supervisor when a request finds our credentials
// refused, since every later request would be refused too: a 401 (a
// static token revoked), or an OAuth token gone for good (its refresh was
// refused and nobody can sign in here). A 403 is not: on a live session
// it refuses one request (a tool needing a scope), not us. Whatever the
// request was (a call, a list, a health check), its caller gets its error
// as before.
type refusalWatch struct {
	u    *upstream
	base http.RoundTripper
	live atomic.Bool
}

func (w *refusalWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	var refused error
	switch {
	case !w.live.Load():
	case errors.Is(err, oauthclient.ErrSignInRequired):
		refused = err
	case err == nil && resp.StatusCode == http.StatusUnauthorized:
		refused = fmt.Errorf("HTTP 401 to %s %s: the upstream no longer accepts our credentials", req.Method, req.URL.Redacted())
	}
	if refused != nil {
		select {
		case w.u.refused <- refused:
		default: // told already
		}
	}
	return resp, err
}

// waitCredentials keeps an upstream that refused our credentials
// auth-failed, without retrying (retries would only be refused again, and
// may lock the account), until there is something new to try: an
// operator's retry (Gateway.Retry), or, with the authorization_code
// grant, a new sign-in (the token kept for the server changes when
// `mcpgate login` stores one). Then it reports true to connect again with
// a fresh OAuth client. A change of the configuration replaces this
// upstream, ending ctx: it reports false when ctx ends.
func (u *upstream) waitCredentials(ctx context.Context, err error) bool {
	retry := "mcpgate status --retry " + u.cfg.Name
	key, kerr := oauthclient.StoreKey(u.cfg.URL)
	if !u.signInGrant() || u.g.tokenStore == nil || kerr != nil {
		u.setAuthFailed(u.credentialsRefused(err))
		u.logger.Error("gateway: upstream refused our credentials; not retrying until the configuration changes or an operator retries it (`"+retry+"`, or POST /admin/retry?server=NAME on the ops listener)", "error", err)
		if !u.awaitRetry(ctx) {
			return false
		}
		u.oauth = nil // a fresh client asks for a fresh token
		return true
	}
	login := "mcpgate login " + u.cfg.Name
	u.setAuthFailed(fmt.Errorf("%w; sign in again with `%s`", err, login))
	u.logger.Error("gateway: upstream needs a new sign-in; not retrying. Run `"+login+" --config FILE` (this gateway's file): the gateway connects again as soon as the new token is kept",
		"error", err, "run", login)
	kept := u.keptToken(ctx, key)
	for sleep(ctx, tokenPoll) {
		select {
		case <-u.retry:
			u.logger.Info("gateway: retrying the upstream that refused our credentials, as asked")
			u.oauth = nil
			return true
		default:
		}
		if tok := u.keptToken(ctx, key); tok != "" && tok != kept {
			u.logger.Info("gateway: a new sign-in was kept; connecting again")
			u.oauth = nil // the old client has given its token up
			return true
		}
	}
	return false
}

// credentialsRefused is an upstream's refusal of our credentials as its
// status shows it: what happened, and what the operator must do.
func (u *upstream) credentialsRefused(err error) error {
	retry := "`mcpgate status --retry " + u.cfg.Name + "`"
	c := u.cfg
	switch {
	case errors.Is(err, oauthclient.ErrAuthorization):
		return fmt.Errorf("the authorization server refused the gateway's OAuth credentials (%w); check the server's oauth settings (clientId, clientSecret, scopes), then run %s", err, retry)
	case len(c.Headers) > 0 || c.BearerToken != "":
		return fmt.Errorf("the upstream refused the credentials (%w); check the server's headers and bearerToken, then run %s", err, retry)
	}
	return fmt.Errorf("the upstream asks for credentials and none are configured (%w); set headers, bearerToken or oauth on the server, or run %s once it accepts the gateway", err, retry)
}

// tokenPoll is how often a store is read while waiting for a sign-in: a
// small local file.
const tokenPoll = time.Second

// keptToken is the access token kept for key, or "".
func (u *upstream) keptToken(ctx context.Context, key string) string {
	tok, err := u.g.tokenStore.Load(ctx, key)
	if err != nil || tok == nil {
		return ""
	}
	return tok.AccessToken
}

func (u *upstream) clientOptions() *mcp.ClientOptions {
	v := u.cfg.ProtocolVersion
	if v == "auto" {
		v = ""
	}
	return &mcp.ClientOptions{
		ProtocolVersion:            v,
		RequestTimeout:             -1, // each call has the upstream's timeout
		Logger:                     u.logger,
		MaxServerRequests:          cap(u.slots) * maxRelaysPerCall, // a call's relays are bounded apart
		OneConnectionPerConnect:    true,                            // run retries, one process an attempt
		Bare:                       bareMode(u.cfg.Protocol),
		DeclareCapabilities:        u.declare,
		ElicitationURL:             true, // links are checked (checkElicitationURL)
		CreateMessageHandler:       u.relaySampling,
		ElicitationHandler:         u.relayElicitation,
		RootsHandler:               u.relayRoots,
		LoggingMessageHandler:      u.relayLog,
		ToolListChangedHandler:     u.listChanged,
		PromptListChangedHandler:   u.listChanged,
		ResourceListChangedHandler: u.listChanged,
		ResourceUpdatedHandler:     u.resourceUpdated,
		Middleware:                 u.g.tracing.clientMiddleware(u),
	}
}

// run supervises the upstream until ctx ends.
func (u *upstream) run(ctx context.Context) {
	defer close(u.done)
	backoff := 250 * time.Millisecond
	first := true
	probeClosed := false // the last attempt ended on the revision probe
	lastFailure := ""    // the error of the last failed attempt
	same := 0            // how many attempts in a row failed that way
	for ctx.Err() == nil {
		park := first && u.lazy()
		cs, err := u.connect(ctx, park)
		if err != nil && authFailure(err) {
			if !u.waitCredentials(ctx, err) {
				return
			}
			continue
		}
		if errors.Is(err, mcp.ErrProbeClosed) && !probeClosed {
			// The server closed on the revision probe: the client asks it
			// initialize first now, at once (a server of an older
			// revision is not down for that).
			probeClosed = true
			u.logger.Info("gateway: the upstream closed the connection on the revision probe; starting it again to ask initialize first", "error", err)
			continue
		}
		probeClosed = false
		if err != nil {
			wait := backoff + time.Duration(rand.Int64N(int64(backoff/2)+1))
			if limit, ok := u.noteRateLimit(ctx, err); ok {
				wait = max(wait, limit) // as it asked
			}
			u.mu.Lock()
			u.retryAt = time.Now().Add(wait)
			u.mu.Unlock()
			u.setDown(err)
			// The same failure again (a command still missing) is news
			// once: later steps log it at info, not forever at warn.
			level := slog.LevelWarn
			if key := failureKey(err); key == lastFailure {
				level = slog.LevelInfo
				same++
			} else {
				lastFailure, same = key, 1
			}
			if same >= maxSameFailures && u.cfg.Command != "" {
				// A command that fails to start the same way again and
				// again will not mend itself: stop starting it.
				u.setFailed(err, same)
				if !u.awaitRetry(ctx) {
					return
				}
				backoff, lastFailure, same = 250*time.Millisecond, "", 0
				continue
			}
			u.logger.Log(ctx, level, "gateway: upstream unavailable; retrying", "error", err, "in", wait.Round(time.Millisecond))
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-u.retry: // an operator asks: now
				t.Stop()
			case <-ctx.Done():
				t.Stop()
				return
			}
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		backoff = 250 * time.Millisecond
		var idle bool
		var refused error
		if park {
			// Its tools are known now; the process waits for a call.
			idle = true
		} else {
			idle, refused = u.serve(ctx, cs)
		}
		first = false
		if ctx.Err() != nil {
			return
		}
		if refused != nil {
			if !u.waitCredentials(ctx, refused) {
				return
			}
			continue
		}
		if idle {
			// Stopped for idleness: wait until a request needs it.
			select {
			case <-u.wake:
			case <-ctx.Done():
				return
			}
		}
	}
}

// connect starts a session and publishes the upstream's lists. With
// park (a lazy server's first start, to learn its tools) the session is
// ended once listed and the upstream left idle, never handed to a call:
// a call waiting meanwhile wakes it again.
func (u *upstream) connect(ctx context.Context, park bool) (*mcp.ClientSession, error) {
	u.mu.Lock()
	if u.state != StateIdle {
		u.setStateLocked(StateStarting)
	}
	u.mu.Unlock()
	select {
	case <-u.refused: // about an earlier session
	default:
	}
	select {
	case <-u.hopFailed: // likewise
	default:
	}
	select {
	case <-u.timedOut: // likewise
	default:
	}
	select {
	case <-u.retry: // asked while it was not failing
	default:
	}
	if u.cfg.Command != "" && u.local == nil {
		// Starts of command servers are bounded gateway-wide: seventy
		// processes started together on two CPUs time each other out.
		select {
		case u.g.starts <- struct{}{}:
			defer func() { <-u.g.starts }()
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	cctx, cancel := context.WithTimeout(ctx, u.startTimeout())
	defer cancel()
	t, err := u.transport()
	if err != nil {
		return nil, err
	}
	if u.client == nil {
		// One client for every connection: it remembers a server found to
		// speak only older revisions, so that a server that dies at start
		// is started once an attempt, not probed and started again.
		u.client = mcp.NewClient(&mcp.Implementation{Name: "mcpgate", Version: u.g.version}, u.clientOptions())
	}
	cs, err := u.client.Connect(cctx, t)
	if errors.Is(err, mcp.ErrProbeClosed) {
		return nil, fmt.Errorf("%w; if the server speaks only older revisions, set protocolVersion (such as %q) on it in the configuration", err, "2025-11-25")
	}
	if err != nil {
		return nil, err
	}
	u.bare.Store(cs.Bare())
	if err := u.refresh(cctx, cs); err != nil {
		cs.Close()
		return nil, err
	}
	// Everything the upstream logs comes to the gateway; each downstream
	// session's own level decides what its client sees.
	if cs.InitializeResult().Capabilities.Logging != nil {
		if err := cs.SetLoggingLevel(cctx, mcp.LevelDebug); err != nil {
			u.logger.Debug("gateway: the upstream refused logging/setLevel", "error", err)
		}
	}
	if park {
		u.mu.Lock()
		u.cs, u.lastErr = nil, nil
		u.setStateLocked(StateIdle)
		u.breaker.reset()
		close(u.ready)
		u.ready = make(chan struct{})
		u.mu.Unlock()
		cs.Close()
		u.logger.Info("gateway: upstream listed; stopped until a request needs it", "protocol", cs.ProtocolVersion())
		u.announce()
		return nil, nil
	}
	u.resubscribe(cctx, cs)
	if w := u.watch; w != nil {
		w.live.Store(true)
	}
	u.mu.Lock()
	u.cs, u.lastErr, u.lastUsed = cs, nil, time.Now()
	if u.connected {
		u.restarts++
		u.g.metrics.restarted(u.cfg.Name)
	}
	u.connected = true
	u.setStateLocked(StateReady)
	u.breaker.reset()
	close(u.ready)
	u.ready = make(chan struct{})
	u.mu.Unlock()
	u.logger.Info("gateway: upstream ready", "protocol", cs.ProtocolVersion())
	u.announce()
	return cs, nil
}

// announce tells the first round of discovery that this upstream is
// listed or has failed.
func (u *upstream) announce() {
	if u.firstRound != nil {
		u.firstRound()
	}
}

// serve watches a live session: health checks, idleness, its end. It
// reports whether the session was stopped for idleness, or the refusal of
// our credentials that ended it.
func (u *upstream) serve(ctx context.Context, cs *mcp.ClientSession) (idle bool, refused error) {
	if w := u.watch; w != nil {
		// What this session's requests find after it ends is not news.
		defer w.live.Store(false)
	}
	interval := u.cfg.HealthInterval.D()
	if interval == 0 {
		interval = 30 * time.Second
	}
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	idleCheck := time.NewTicker(time.Second)
	defer idleCheck.Stop()
	for {
		select {
		case <-ctx.Done():
			cs.Close()
			return false, nil
		case <-cs.Done():
			err := cs.Err()
			if err == nil {
				err = errors.New("the connection closed")
			}
			u.logger.Warn("gateway: upstream connection lost", "error", err)
			u.setDown(err)
			return false, nil
		case err := <-u.refused:
			cs.Close()
			return false, err
		case err := <-u.timedOut:
			if !u.stillAnswers(ctx, cs, err) {
				return false, nil
			}
		case err := <-u.hopFailed:
			// A call could not reach the upstream: degraded at once, and
			// down (its tools withdrawn, reconnected with backoff) unless
			// it answers a probe.
			u.mu.Lock()
			if u.state == StateReady {
				u.lastErr = err
				u.setStateLocked(StateDegraded)
			}
			u.mu.Unlock()
			pctx, cancel := context.WithTimeout(ctx, min(u.timeout(), 5*time.Second))
			perr := cs.Ping(pctx)
			cancel()
			if _, limited := u.noteRateLimit(ctx, perr); perr != nil && !limited {
				u.logger.Warn("gateway: a call could not reach the upstream, nor could a probe; taking it down until it answers again", "call", err, "probe", perr)
				cs.Close()
				u.setDown(fmt.Errorf("a call failed (%v) and so did a probe: %w", err, perr))
				return false, nil
			}
			u.mu.Lock()
			if u.state == StateDegraded {
				u.lastErr = nil
				u.setStateLocked(StateReady)
			}
			u.mu.Unlock()
		case <-tick:
			if u.limitLeft() > 0 {
				break // a ping would only spend what the server allows
			}
			// Ping is ping for a session and server/discover for a
			// 2026-07-28 one, which has no ping.
			pctx, cancel := context.WithTimeout(ctx, u.timeout())
			err := cs.Ping(pctx)
			cancel()
			if _, limited := u.noteRateLimit(ctx, err); limited {
				err = nil // it answered, asking for less
			}
			u.mu.Lock()
			if err != nil && u.state == StateReady {
				u.lastErr = err
				u.setStateLocked(StateDegraded)
				u.logger.Warn("gateway: upstream health check failed", "error", err)
			} else if err == nil && u.state == StateDegraded {
				u.lastErr = nil
				u.setStateLocked(StateReady)
			}
			u.mu.Unlock()
		case <-idleCheck.C:
			if u.idleFor() {
				u.logger.Info("gateway: stopping idle upstream", "after", u.cfg.IdleTimeout.D())
				u.stopIdle(cs)
				return true, nil
			}
		}
	}
}

// stopIdle ends the session of an unused stdio upstream; its tools stay
// published, and the next call starts it again.
func (u *upstream) stopIdle(cs *mcp.ClientSession) {
	u.mu.Lock()
	u.cs = nil
	u.setStateLocked(StateIdle)
	u.mu.Unlock()
	cs.Close()
}

// idleFor reports whether a lazy stdio upstream has been unused for its
// idle timeout with nothing in flight.
func (u *upstream) idleFor() bool {
	d := u.cfg.IdleTimeout.D()
	if d <= 0 || u.cfg.Command == "" {
		return false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.active) == 0 && len(u.slots) == 0 && time.Since(u.lastUsed) >= d
}

// failureKey is an error's text with its numbers left out (process ids,
// ports, times), to tell the same failure again from another one.
func failureKey(err error) string {
	text := err.Error()
	// A process that died is the same failure whether the gateway's
	// write or its read found it first: what it said counts.
	if i := strings.Index(text, "the server process exited"); i >= 0 {
		text = text[i:]
		for _, end := range []string{": EOF", ": mcp: "} {
			if j := strings.Index(text, end); j >= 0 {
				text = text[:j]
			}
		}
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, text)
}

// setFailed marks a command server failed: down, and not started again
// until an operator retries it or its settings change.
func (u *upstream) setFailed(err error, times int) {
	u.setDown(err)
	u.mu.Lock()
	u.setStateLocked(StateFailed)
	u.mu.Unlock()
	u.logger.Error("gateway: upstream failed to start the same way again and again; not starting it again until its settings change or an operator retries it (POST /admin/retry?server=NAME on the ops listener, or mcpgate status --retry NAME)",
		"error", err, "times", times)
}

// setAuthFailed marks an upstream that refused our credentials: down,
// and not tried again until there is something new to try
// (waitCredentials).
func (u *upstream) setAuthFailed(err error) {
	u.setDown(err)
	u.mu.Lock()
	u.setStateLocked(StateAuthFailed)
	u.mu.Unlock()
}

// awaitRetry waits for an operator's retry (or a request's, for a lazy
// server), and reports false when ctx ends first.
func (u *upstream) awaitRetry(ctx context.Context) bool {
	select {
	case <-u.retry:
		u.logger.Info("gateway: retrying the failed upstream, as asked")
		return true
	case <-ctx.Done():
		return false
	}
}

// setDown marks the upstream down and withdraws its tools: the others
// keep serving.
func (u *upstream) setDown(err error) {
	u.mu.Lock()
	was := u.state
	u.cs, u.lastErr = nil, err
	u.setStateLocked(StateDown)
	close(u.ready)
	u.ready = make(chan struct{})
	u.mu.Unlock()
	if was != StateDown {
		u.g.withdraw(u, false)
	}
	u.announce()
}

// setStateLocked changes the state, noting when (u.mu held).
func (u *upstream) setStateLocked(s State) {
	if u.state != s {
		u.state, u.since = s, time.Now()
	}
}

func (u *upstream) currentState() State {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.state
}

// session returns a live session, waking an idle upstream and waiting
// (within ctx) for one that is connecting.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		u.mu.Lock()
		cs, state, ready := u.cs, u.state, u.ready
		u.mu.Unlock()
		if cs != nil {
			return cs, nil
		}
		switch state {
		case StateIdle:
			select {
			case u.wake <- struct{}{}:
				u.logger.Info("gateway: starting the idle upstream for a request")
			default:
			}
		case StateDown, StateFailed, StateAuthFailed:
			return nil, u.unavailable()
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, errUnavailable(u.cfg.Name, fmt.Errorf("not ready within the request's time: %w", context.Cause(ctx)), state, time.Second)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// localTransport serves an in-process server on one end of a pipe; the
// server's side ends when the client closes its end.
type localTransport struct{ s *mcp.Server }

func (t localTransport) Connect(ctx context.Context) (mcp.Conn, error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	go func() {
		t.s.ServeConn(context.Background(), mcp.NewStdioConn(sr, sw, 0), &mcp.ServeOptions{ShutdownTimeout: time.Second})
		sw.Close()
	}()
	return &pipeConn{Conn: mcp.NewStdioConn(cr, cw, 0), closers: []io.Closer{cw, cr}}, nil
}

type pipeConn struct {
	mcp.Conn
	closers []io.Closer
}

func (c *pipeConn) Close() error {
	err := c.Conn.Close()
	for _, cl := range c.closers {
		cl.Close()
	}
	return err
}
