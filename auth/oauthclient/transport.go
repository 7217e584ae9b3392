package oauthclient

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Transport is an http.RoundTripper that adds OAuth access tokens to
// requests to an MCP server and obtains them when the server asks (401),
// asks for more scopes when it says they are missing (403
// insufficient_scope), and refreshes them when they expire.
//
// A request is sent again after a token is obtained, so its body must be
// replayable: http.NewRequest sets GetBody for bytes, strings and
// bytes.Buffer readers.
type Transport struct {
	cfg    Config
	base   http.RoundTripper
	log    *slog.Logger
	now    func() time.Time
	signer *signer
	// cfgErr is a configuration mistake, reported by every RoundTrip (the
	// constructor returns no error so that it fits in a struct literal).
	cfgErr error

	outMu sync.Mutex
	out   map[netScope]*http.Client // see outbound

	mu       sync.Mutex
	pinned   *session
	sessions map[string]*session
	recent   []*session // most recent last, for same-origin fallback
}

var _ http.RoundTripper = (*Transport)(nil)

// NewTransport returns a Transport that sends requests through base
// (http.DefaultTransport when nil). Configuration errors are returned by
// RoundTrip.
func NewTransport(cfg Config, base http.RoundTripper) *Transport {
	if base == nil {
		base = http.DefaultTransport
	}
	if cfg.GrantType == "" {
		cfg.GrantType = GrantAuthorizationCode
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mcpgate"
	}
	if cfg.MaxStepUps <= 0 {
		cfg.MaxStepUps = 1
	}
	if cfg.ProtocolVersion == "" {
		cfg.ProtocolVersion = "2025-11-25"
	}
	if cfg.Store == nil {
		cfg.Store = NewMemoryStore()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	t := &Transport{cfg: cfg, base: base, log: cfg.Logger, now: cfg.Now, sessions: map[string]*session{}}
	t.cfgErr = t.checkConfig()
	if t.cfgErr == nil && cfg.ServerURL != "" {
		u, _ := url.Parse(cfg.ServerURL)
		t.pinned = newSession(u)
	}
	return t
}

func (t *Transport) checkConfig() error {
	cfg := &t.cfg
	var errs []error
	switch cfg.GrantType {
	case GrantAuthorizationCode:
		if cfg.RedirectURL != "" {
			if u, err := url.Parse(cfg.RedirectURL); err != nil || !u.IsAbs() || u.Fragment != "" {
				errs = append(errs, errors.New("Config.RedirectURL must be an absolute URL without a fragment"))
			}
		}
	case GrantClientCredentials:
		if cfg.ClientID == "" {
			errs = append(errs, errors.New("the client credentials grant needs Config.ClientID"))
		} else if cfg.ClientSecret == "" && cfg.PrivateKeyPEM == "" {
			errs = append(errs, errors.New("the client credentials grant needs Config.ClientSecret or Config.PrivateKeyPEM"))
		}
	case GrantJWTBearer:
		if cfg.ClientID == "" {
			errs = append(errs, errors.New("the JWT bearer grant needs Config.ClientID, the client's pre-registered id at the MCP server's authorization server"))
		}
		if cfg.Assertion == nil {
			errs = append(errs, errors.New("the JWT bearer grant needs Config.Assertion to obtain its assertions (TokenExchange.Assertion for an enterprise IdP's ID-JAG)"))
		}
	default:
		errs = append(errs, errors.New("Config.GrantType must be authorization_code, client_credentials or "+GrantJWTBearer+", not "+cfg.GrantType))
	}
	switch cfg.TokenEndpointAuthMethod {
	case "", AuthMethodNone, AuthMethodClientSecretBasic, AuthMethodClientSecretPost, AuthMethodPrivateKeyJWT:
	default:
		errs = append(errs, errors.New("Config.TokenEndpointAuthMethod "+cfg.TokenEndpointAuthMethod+" is not supported"))
	}
	if cfg.PrivateKeyPEM != "" {
		s, err := newSigner(cfg.PrivateKeyPEM, cfg.SigningAlgorithm)
		if err != nil {
			errs = append(errs, err)
		}
		t.signer = s
	} else if cfg.TokenEndpointAuthMethod == AuthMethodPrivateKeyJWT {
		errs = append(errs, errors.New("private_key_jwt needs Config.PrivateKeyPEM"))
	}
	if cfg.ClientMetadataURL != "" {
		// A client ID metadata document URL is an https URL with a path
		// (the draft's §3), since it is the client's identity.
		if u, err := url.Parse(cfg.ClientMetadataURL); err != nil || u.Scheme != "https" || strings.Trim(u.Path, "/") == "" {
			errs = append(errs, errors.New("Config.ClientMetadataURL must be an https URL with a path"))
		}
	}
	if cfg.ServerURL != "" {
		if u, err := url.Parse(cfg.ServerURL); err != nil || !u.IsAbs() || u.Host == "" {
			errs = append(errs, errors.New("Config.ServerURL must be an absolute URL"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return authErr(nil, "oauthclient configuration: %v", errors.Join(errs...))
}

// session is the state for one MCP server (one resource).
type session struct {
	server *url.URL
	key    string // canonical server URL: the token store key
	origin string

	mu     sync.Mutex
	loaded bool
	tok    *Token
	disc   *discovery
	client *clientIdentity
	// requested are the scopes of the last authorization request: the
	// base of step-up unions, so that granted scopes are not lost.
	requested []string
	// failed remembers scope sets that were obtained and still refused,
	// so the client does not ask the user again and again.
	failed map[string]bool
	flight *flight
}

// flight is one token acquisition that concurrent requests share.
type flight struct {
	done        chan struct{}
	refreshOnly bool // it may only refresh: its failure says nothing to others
	tok         *Token
	err         error
}

func newSession(u *url.URL) *session {
	return &session{server: &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}, key: canonicalURL(u), origin: originOf(u), failed: map[string]bool{}}
}

// sessionFor returns the session of the server that u belongs to, or nil
// when the Transport is pinned to another origin.
func (t *Transport) sessionFor(u *url.URL) *session {
	if t.pinned != nil {
		if originOf(u) != t.pinned.origin {
			return nil
		}
		return t.pinned
	}
	key := canonicalURL(u)
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.sessions[key]; ok {
		return s
	}
	// Another path of an origin that already has a token (the old
	// HTTP+SSE transport posts to a second endpoint): share it, since the
	// token is for that origin's server.
	origin := originOf(u)
	for i := len(t.recent) - 1; i >= 0; i-- {
		s := t.recent[i]
		if s.origin != origin {
			continue
		}
		s.mu.Lock()
		has := s.tok != nil
		s.mu.Unlock()
		if has {
			return s
		}
	}
	s := newSession(u)
	t.sessions[key] = s
	t.recent = append(t.recent, s)
	return s
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.cfgErr != nil {
		closeBody(req)
		return nil, t.cfgErr
	}
	s := t.sessionFor(req.URL)
	if s == nil {
		return t.base.RoundTrip(req) // another origin: never gets the token
	}
	ctx := req.Context()
	tok, err := t.current(ctx, s)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.send(req, s, tok, true)
	if err != nil {
		return nil, err
	}
	authorized := false // a token was obtained for this very request
	stepUps := 0
	for {
		switch {
		case resp.StatusCode == http.StatusUnauthorized && wantsOAuth(resp.Header):
			if authorized {
				// A token obtained a moment ago is refused: asking again
				// would loop. Say so rather than hand back a bare 401.
				discard(resp)
				return nil, authErr(nil, "the server at %s refused the access token it was just issued (401 again); check that %s issues tokens for the resource %s", s.key, t.issuerOf(s), t.resourceOf(s))
			}
			if !replayable(req) {
				discard(resp)
				return nil, authErr(ErrBodyNotReplayable, "the server at %s asks for authorization, but the request body cannot be sent again (http.Request.GetBody is nil)", s.key)
			}
			ch, _ := bearerChallenge(resp.Header)
			discard(resp)
			t.log.Info("oauthclient: the server asks for authorization", "server", s.key, "had_token", tok != nil)
			tok, err = t.renew(ctx, s, renewal{stale: tok, challenge: ch, refused: tok != nil})
			if err != nil {
				return nil, err
			}
			authorized = true
		case resp.StatusCode == http.StatusForbidden && tok != nil && insufficientScope(resp.Header):
			ch, _ := bearerChallenge(resp.Header)
			challenged := strings.Fields(ch.Params["scope"])
			s.mu.Lock()
			need := union(union(s.requested, tok.Scopes), challenged)
			failed := s.failed[scopeKey(need)]
			if authorized && stepUps > 0 {
				// The scopes were obtained for this request and the server
				// still refuses: remember, so later requests do not ask
				// the user again for nothing.
				s.failed[scopeKey(need)] = true
				failed = true
			}
			s.mu.Unlock()
			switch {
			case len(challenged) == 0:
				return resp, nil // nothing to ask for: the server's answer stands
			case tok.hasScopes(challenged) || failed || stepUps >= t.cfg.MaxStepUps:
				discard(resp)
				return nil, authErr(ErrStepUpRefused, "the server at %s refuses the request for lack of the scope(s) %q, which were requested already; giving up rather than asking again", s.key, strings.Join(challenged, " "))
			case !replayable(req):
				discard(resp)
				return nil, authErr(ErrBodyNotReplayable, "the server at %s asks for more scopes, but the request body cannot be sent again (http.Request.GetBody is nil)", s.key)
			}
			discard(resp)
			t.log.Info("oauthclient: the server asks for more scopes", "server", s.key, "scopes", need)
			tok, err = t.renew(ctx, s, renewal{stale: tok, challenge: ch, need: need})
			if err != nil {
				return nil, err
			}
			authorized = true
			stepUps++
		default:
			return resp, nil
		}
		if resp, err = t.send(req, s, tok, false); err != nil {
			return nil, err
		}
	}
}

// send sends req, or a copy with a fresh body when retrying, with the
// token (if any) as its Authorization. The caller's request is never
// modified (http.RoundTripper's contract).
func (t *Transport) send(req *http.Request, s *session, tok *Token, first bool) (*http.Response, error) {
	r := req.Clone(req.Context())
	if !first && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, authErr(ErrBodyNotReplayable, "reading the request body again: %v", err)
		}
		r.Body = body
	}
	// The token goes only to the server it was issued for (its origin),
	// never to another host a request happens to be sent to.
	if tok != nil && originOf(req.URL) == s.origin {
		r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return t.base.RoundTrip(r)
}

// current returns the token to send, loading it from the store the first
// time and refreshing it when it has expired; nil when there is none
// (the server will say what it wants). It fails only when the refresh
// failed for a reason that may pass (ErrTemporary): the token is kept for
// the next request, and sending none would only be refused.
func (t *Transport) current(ctx context.Context, s *session) (*Token, error) {
	s.mu.Lock()
	if !s.loaded {
		s.loaded = true
		tok, err := t.cfg.Store.Load(ctx, s.key)
		if err != nil {
			t.log.Warn("oauthclient: cannot load the stored token", "server", s.key, "err", err)
		} else if tok != nil && tok.AccessToken != "" {
			s.tok = tok
			s.requested = slices.Clone(tok.Scopes)
		}
	}
	tok := s.tok
	s.mu.Unlock()
	if tok == nil || !tok.Expired(t.now()) {
		return tok, nil
	}
	fresh, err := t.renew(ctx, s, renewal{stale: tok, refreshOnly: true})
	if err != nil {
		if !errors.Is(err, errCannotRefresh) {
			t.log.Warn("oauthclient: cannot refresh the expired token", "server", s.key, "err", err)
		}
		if errors.Is(err, ErrTemporary) {
			return nil, err
		}
		return nil, nil
	}
	return fresh, nil
}

// renewal says why a new token is needed.
type renewal struct {
	stale       *Token    // the token the request used, or nil
	challenge   Challenge // the server's Bearer challenge, if any
	need        []string  // scopes the new token must have (step-up)
	refreshOnly bool      // expired: refresh it, but do not involve the user
	refused     bool      // the server answered 401 to the token
}

var errCannotRefresh = errors.New("the token cannot be refreshed without the user")

// renew obtains a new token. Concurrent callers share one acquisition:
// whoever comes while one runs waits for it and takes its result, so an
// expired token causes one refresh and a 401 one sign-in, however many
// requests were in flight.
func (t *Transport) renew(ctx context.Context, s *session, r renewal) (*Token, error) {
	s.mu.Lock()
	for {
		if f := s.flight; f != nil {
			s.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return nil, wrapAuthErr(ctx.Err(), "waiting for the authorization of %s", s.key)
			}
			// Share the outcome, unless it failed only because the request
			// that ran it gave up, or it could only refresh and this
			// request may authorize: then try again for this one.
			if f.err != nil && !isContextErr(f.err) && (r.refreshOnly || !f.refreshOnly) {
				return nil, f.err
			}
			s.mu.Lock()
			continue
		}
		// Someone renewed the token since this request used it.
		if cur := s.tok; cur != nil && cur != r.stale && !cur.Expired(t.now()) && cur.hasScopes(r.need) {
			s.mu.Unlock()
			return cur, nil
		}
		f := &flight{done: make(chan struct{}), refreshOnly: r.refreshOnly}
		s.flight = f
		s.mu.Unlock()

		tok, err := t.obtain(withServer(ctx, s.server), s, r)
		if err == nil {
			// Stored before the flight ends, so stores happen in order.
			if serr := t.cfg.Store.Save(ctx, s.key, tok); serr != nil {
				t.log.Warn("oauthclient: cannot store the token", "server", s.key, "err", serr)
			}
		}
		s.mu.Lock()
		if err == nil {
			s.tok = tok
		} else if !errors.Is(err, errCannotRefresh) && !isContextErr(err) && !errors.Is(err, ErrTemporary) && r.stale != nil && s.tok == r.stale && !r.refreshOnly {
			s.tok = nil // refused and not replaced: do not send it again
		}
		f.tok, f.err = tok, err
		s.flight = nil
		close(f.done)
		s.mu.Unlock()
		return tok, err
	}
}

// obtain does the work of renew: refresh if possible, else authorize.
func (t *Transport) obtain(ctx context.Context, s *session, r renewal) (*Token, error) {
	s.mu.Lock()
	cur := s.tok
	if cur == nil {
		cur = r.stale
	}
	s.mu.Unlock()

	// A token the server refused may have been refused because the server
	// moved to another authorization server (SEP-2352): its resource
	// metadata says so. Then neither the old client registration nor a
	// refresh at the old server is of any use.
	var rediscovered *discovery
	if r.refused && cur != nil {
		d, err := t.discover(ctx, s.server, r.challenge)
		if err != nil {
			return nil, err
		}
		rediscovered = d
		if cur.Issuer != "" && d.as.Issuer != cur.Issuer {
			t.log.Info("oauthclient: the server moved to another authorization server; registering and authorizing there", "server", s.key, "from", cur.Issuer, "to", d.as.Issuer)
			cur = nil
			s.mu.Lock()
			s.tok, s.disc, s.client = nil, d, nil
			s.mu.Unlock()
		}
	}

	// A refresh token renews the grant without the user, but cannot add
	// scopes: not for step-up.
	if cur != nil && cur.RefreshToken != "" && len(r.need) == 0 {
		tok, err := t.refreshToken(ctx, s, cur)
		if err == nil {
			return tok, nil
		}
		if isContextErr(err) || errors.Is(err, ErrTemporary) {
			// Not a refusal: the refresh token may well be good, so it is
			// kept for a later try rather than replaced by a new sign-in
			// (or, without a person, given up).
			return nil, err
		}
		t.log.Info("oauthclient: refresh failed", "server", s.key, "err", err)
		s.mu.Lock()
		if s.tok == cur {
			s.tok = nil
		}
		s.mu.Unlock()
		if r.refreshOnly {
			return nil, err
		}
	}
	if r.refreshOnly {
		// A machine client simply asks again (with a new assertion, for
		// the JWT bearer grant); a user's token waits for the server's
		// 401, which says what to ask for.
		if t.cfg.GrantType != GrantAuthorizationCode && cur != nil && cur.TokenEndpoint != "" &&
			(t.cfg.GrantType != GrantJWTBearer || (cur.Issuer != "" && cur.Resource != "")) {
			id := &clientIdentity{issuer: cur.Issuer, id: t.cfg.ClientID, secret: t.cfg.ClientSecret}
			id.method = t.authMethod(&serverMetadata{}, id, cur.AuthMethod)
			tr, err := t.machineGrant(ctx, cur.TokenEndpoint, cur.Issuer, cur.Resource, id, cur.Scopes)
			if err != nil {
				return nil, err
			}
			return t.newToken(tr, cur.Resource, cur.Issuer, cur.TokenEndpoint, id, cur.Scopes), nil
		}
		return nil, errCannotRefresh
	}
	if t.cfg.GrantType == GrantAuthorizationCode && t.cfg.Authorize == nil {
		// Nobody to ask: fail before discovery, since registering a client
		// (dynamic registration, with no redirect URI) would leave one at
		// the authorization server that nobody can use, and could fail
		// with a message that hides the real remedy, signing in.
		if len(r.need) > 0 {
			return nil, authErr(nil, "the server at %s asks for the scope(s) %q, which only a person signing in can grant, and this client cannot ask one (no Config.Authorize)", s.key, strings.Join(r.need, " "))
		}
		return nil, authErr(ErrSignInRequired, "the server at %s needs a person to sign in (no usable token is kept for it), and this client cannot ask one (no Config.Authorize)", s.key)
	}

	// Discover, unless this server was discovered already and the
	// challenge does not point elsewhere.
	s.mu.Lock()
	d := s.disc
	known := s.client
	requested := s.requested
	s.mu.Unlock()
	if rediscovered != nil {
		d = rediscovered
	} else if rm := r.challenge.Params["resource_metadata"]; d == nil || (rm != "" && rm != d.prmURL) {
		var err error
		if d, err = t.discover(ctx, s.server, r.challenge); err != nil {
			return nil, err
		}
	}
	id, err := t.identify(ctx, d.as, known)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.disc, s.client = d, id
	s.mu.Unlock()

	// Scopes, in the MCP specification's order: the challenge's, else the
	// resource metadata's scopes_supported, else (our addition) the
	// configured ones, else none. A re-authorization keeps what was asked
	// before (SEP-2350), so a step-up does not lose earlier grants.
	scopes := r.need
	if scopes == nil {
		scopes = strings.Fields(r.challenge.Params["scope"])
		if len(scopes) == 0 {
			scopes = slices.Clone(d.prmScopes)
		}
		if len(scopes) == 0 {
			scopes = slices.Clone(t.cfg.Scopes)
		}
		scopes = union(requested, scopes)
	}
	var tr *tokenResponse
	if grant := t.cfg.GrantType; grant != GrantAuthorizationCode {
		// Checked before anything is asked of anyone (for the JWT bearer
		// grant: before the IdP is asked for an assertion).
		if g := d.as.GrantTypesSupported; len(g) > 0 && !slices.Contains(g, grant) {
			what := "the client_credentials grant"
			if grant == GrantJWTBearer {
				what = "the JWT bearer grant (" + GrantJWTBearer + "), which enterprise-managed authorization needs,"
			}
			return nil, authErr(nil, "the authorization server %s does not support %s (grant_types_supported: %q)", d.as.Issuer, what, g)
		}
		tr, err = t.machineGrant(ctx, d.as.TokenEndpoint, d.as.Issuer, d.resource, id, scopes)
	} else {
		// offline_access asks for a refresh token; only where the
		// authorization server lists it, since an unknown scope may fail
		// the whole request (SEP-2207).
		if !t.cfg.NoOfflineAccess && slices.Contains(d.as.ScopesSupported, "offline_access") {
			scopes = union(scopes, []string{"offline_access"})
		}
		tr, err = t.authorizeCode(ctx, d, id, scopes)
	}
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.requested = scopes
	s.mu.Unlock()
	tok := t.newToken(tr, d.resource, d.as.Issuer, d.as.TokenEndpoint, id, scopes)
	t.log.Info("oauthclient: authorized", "server", s.key, "issuer", d.as.Issuer, "scopes", tok.Scopes, "refreshable", tok.RefreshToken != "")
	return tok, nil
}

// refreshToken refreshes cur with the client it was issued to.
func (t *Transport) refreshToken(ctx context.Context, s *session, cur *Token) (*Token, error) {
	s.mu.Lock()
	id := s.client
	s.mu.Unlock()
	if id == nil || id.id != cur.ClientID {
		id = &clientIdentity{issuer: cur.Issuer, id: cur.ClientID, secret: cur.ClientSecret, method: cur.AuthMethod}
		if id.secret == "" && id.id == t.cfg.ClientID {
			id.secret = t.cfg.ClientSecret // a configured secret is not stored
		}
		if id.method == "" {
			id.method = t.authMethod(&serverMetadata{}, id, "")
		}
	}
	if cur.TokenEndpoint == "" || id.id == "" {
		return nil, errors.New("the stored token does not say where to refresh it")
	}
	tr, err := t.refresh(ctx, cur, id)
	if err != nil {
		return nil, err
	}
	tok := t.newToken(tr, cur.Resource, cur.Issuer, cur.TokenEndpoint, id, cur.Scopes)
	if tok.RefreshToken == "" {
		tok.RefreshToken = cur.RefreshToken // not rotated: keep using it
	}
	t.log.Info("oauthclient: refreshed the token", "server", s.key)
	return tok, nil
}

func (t *Transport) newToken(tr *tokenResponse, resource, issuer, endpoint string, id *clientIdentity, requested []string) *Token {
	tok := &Token{
		AccessToken:   tr.AccessToken,
		TokenType:     "Bearer",
		RefreshToken:  tr.RefreshToken,
		Expiry:        tr.expiry(t.now()),
		Scopes:        slices.Clone(requested),
		Resource:      resource,
		Issuer:        issuer,
		TokenEndpoint: endpoint,
		ClientID:      id.id,
		AuthMethod:    id.method,
	}
	// RFC 6749 §5.1: scope is in the response when it differs from the
	// request; then it is what was granted.
	if tr.Scope != "" {
		tok.Scopes = strings.Fields(tr.Scope)
	}
	if id.dynamic {
		tok.ClientSecret = id.secret
	}
	return tok
}

func (t *Transport) issuerOf(s *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disc != nil {
		return s.disc.as.Issuer
	}
	return "the authorization server"
}

func (t *Transport) resourceOf(s *session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.disc != nil {
		return s.disc.resource
	}
	return s.key
}

// wantsOAuth reports whether a 401 is a challenge this client can answer:
// a Bearer challenge, or none at all (2025-03-26 servers need not send
// one).
func wantsOAuth(h http.Header) bool {
	cs := ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if len(cs) == 0 {
		return true
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return true
		}
	}
	return false
}

// insufficientScope reports a Bearer challenge with
// error="insufficient_scope" (RFC 6750 §3.1).
func insufficientScope(h http.Header) bool {
	c, ok := bearerChallenge(h)
	return ok && c.Params["error"] == "insufficient_scope"
}

func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// discard reads a little of an unwanted response, so its connection can
// be reused, and closes it.
func discard(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// union returns a followed by the members of b it lacks, without
// duplicates.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	for _, s := range slices.Concat(a, b) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func scopeKey(scopes []string) string {
	s := slices.Clone(scopes)
	slices.Sort(s)
	return strings.Join(s, " ")
}
