package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Config chooses the accepted credentials; any configured one admits a
// request.
type Config struct {
	Basic   *BasicUsers
	APIKeys *APIKeys
	OAuth   *OAuth
	// Realm names the protection space in challenges. Default "mcpgate".
	Realm string
	// MethodScopes maps an MCP method, or "tools/call:NAME" for one tool,
	// to the OAuth scopes a token needs to call it. A token lacking them
	// gets 403 with an insufficient_scope challenge, so the client can
	// ask for more (step-up). Other credentials are not scoped.
	MethodScopes map[string][]string
	// Logger records refusals, with the user name of Basic credentials
	// (never a password, key or token). Default slog.Default().
	Logger *slog.Logger
	// Throttle slows down the guessing of Basic passwords; the zero
	// value throttles with its defaults.
	Throttle ThrottleConfig
}

// Middleware authenticates requests before they reach an MCP handler; the
// [Principal] it admits is in the request's context ([FromContext]).
type Middleware struct {
	cfg      Config
	throttle *throttle
	prmURL   string
	prmPath  string
	prmBody  []byte
}

// New returns the [Middleware] for cfg.
func New(cfg Config) (*Middleware, error) {
	if cfg.Basic == nil && cfg.APIKeys == nil && cfg.OAuth == nil {
		return nil, errors.New("auth: configure at least one of Basic users, API keys or OAuth")
	}
	if cfg.Realm == "" {
		cfg.Realm = "mcpgate"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	m := &Middleware{cfg: cfg, throttle: newThrottle(cfg.Throttle)}
	if o := cfg.OAuth; o != nil {
		u, _ := url.Parse(o.cfg.Resource)
		m.prmPath = "/.well-known/oauth-protected-resource" + strings.TrimSuffix(u.Path, "/")
		m.prmURL = u.Scheme + "://" + u.Host + m.prmPath
		prm := map[string]any{
			"resource":                 o.cfg.Resource,
			"authorization_servers":    []string{o.cfg.Issuer},
			"bearer_methods_supported": []string{"header"},
		}
		if len(o.cfg.ScopesSupported) > 0 {
			prm["scopes_supported"] = o.cfg.ScopesSupported
		}
		m.prmBody, _ = json.Marshal(prm)
	}
	return m, nil
}

// ResourceMetadataURL returns the URL of the protected-resource metadata
// (OAuth only).
func (m *Middleware) ResourceMetadataURL() string { return m.prmURL }

// Wrap authenticates every request to next. It also serves the OAuth
// protected-resource metadata (RFC 9728) at its well-known paths.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.prmBody != nil && (r.URL.Path == m.prmPath || r.URL.Path == "/.well-known/oauth-protected-resource") {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "max-age=300")
			w.Write(m.prmBody)
			return
		}
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r) // CORS preflights carry no credentials
			return
		}
		if q := r.URL.Query(); q.Has("access_token") || q.Has("api_key") {
			m.refuse(w, http.StatusBadRequest, `error="invalid_request", error_description="credentials are not accepted in the URL; send an Authorization header"`,
				"Bad Request: credentials are not accepted in the URL; send them in the Authorization header")
			return
		}
		p, user, err := m.authenticate(r)
		if err != nil {
			m.refuseCredentials(w, r, user, err)
			return
		}
		if p.Method == "oauth" {
			if missing := missingScopes(p, m.cfg.OAuth.cfg.RequiredScopes); len(missing) > 0 {
				m.insufficientScope(w, m.cfg.OAuth.cfg.RequiredScopes)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

// PrincipalID returns the binding key of the request's principal
// ([Principal.Key]): the function mcphttp.Options.Principal wants.
func (m *Middleware) PrincipalID(r *http.Request) string { return FromContext(r.Context()).Key() }

// clientError is a refusal whose text the client may read. Other errors'
// text goes to the log only: it may quote a library's internals.
type clientError string

func (e clientError) Error() string { return string(e) }

var (
	errNoCredentials  = clientError("authentication is required")
	errBasicOff       = clientError("Basic authentication is not accepted here")
	errMalformedBasic = clientError("malformed Basic credentials")
	errWrongPassword  = clientError("wrong user name or password")
	errUnknownKey     = clientError("unknown API key")
	errTooLarge       = clientError(fmt.Sprintf("the credentials are larger than %d bytes", MaxTokenSize))
)

// throttledError refuses a sign-in attempted too soon after failures.
type throttledError struct{ wait time.Duration }

func (e *throttledError) Error() string {
	return fmt.Sprintf("too many failed sign-ins; try again in %d seconds", e.seconds())
}

func (e *throttledError) seconds() int { return int((e.wait + time.Second - 1) / time.Second) }

// authenticate returns the request's principal, or why it has none; user
// is the name Basic credentials gave, for the log.
func (m *Middleware) authenticate(r *http.Request) (p *Principal, user string, err error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, "", errNoCredentials
	}
	scheme, cred, _ := strings.Cut(h, " ")
	cred = strings.TrimSpace(cred)
	switch strings.ToLower(scheme) {
	case "basic":
		return m.basic(r, cred)
	case "bearer":
		if cred == "" {
			return nil, "", errNoCredentials
		}
		if len(cred) > MaxTokenSize {
			return nil, "", fmt.Errorf("%w: %w", ErrInvalidToken, errTokenTooLarge)
		}
		if m.cfg.APIKeys != nil {
			if name := m.cfg.APIKeys.Lookup(cred); name != "" {
				return &Principal{Method: "apikey", Subject: name}, "", nil
			}
		}
		if m.cfg.OAuth != nil {
			p, err := m.cfg.OAuth.Verify(r.Context(), cred)
			return p, "", err
		}
		return nil, "", fmt.Errorf("%w: %w", ErrInvalidToken, errUnknownKey)
	}
	if len(scheme) > 32 {
		return nil, "", clientError("the authorization scheme is not accepted")
	}
	return nil, "", clientError(fmt.Sprintf("the %q authorization scheme is not accepted", scheme))
}

// basic checks Basic credentials, unless their address or user name has
// failed too often lately; every failure counts against both.
func (m *Middleware) basic(r *http.Request, cred string) (*Principal, string, error) {
	if m.cfg.Basic == nil {
		return nil, "", errBasicOff
	}
	if len(cred) > MaxTokenSize {
		return nil, "", errTooLarge
	}
	now := time.Now()
	raw, err := base64.StdEncoding.DecodeString(cred)
	if err != nil {
		if wait := m.throttle.wait(r.RemoteAddr, "", now); wait > 0 {
			return nil, "", &throttledError{wait}
		}
		m.throttle.fail(r.RemoteAddr, "", now)
		return nil, "", errMalformedBasic
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if wait := m.throttle.wait(r.RemoteAddr, user, now); wait > 0 {
		return nil, user, &throttledError{wait}
	}
	if !ok || !m.cfg.Basic.Check(user, pass) {
		m.throttle.fail(r.RemoteAddr, user, time.Now())
		return nil, user, errWrongPassword
	}
	return &Principal{Method: "basic", Subject: user}, user, nil
}

// refuseCredentials answers a request whose credentials were refused: 503
// when the issuer's keys are out of reach, 429 while throttled, else 401.
// The log gets the reason in full and the user name, if any, shortened.
func (m *Middleware) refuseCredentials(w http.ResponseWriter, r *http.Request, user string, err error) {
	attrs := []any{"path", r.URL.Path, "remote", r.RemoteAddr}
	if user != "" {
		attrs = append(attrs, "user", logName(user))
	}
	var throttled *throttledError
	switch {
	case errors.Is(err, ErrKeysUnavailable):
		m.cfg.Logger.Error("authentication: cannot check tokens", "err", err)
		w.Header().Set("Retry-After", "30")
		m.writeError(w, http.StatusServiceUnavailable, "Service Unavailable: the authorization server's keys cannot be fetched; try again later")
	case errors.As(err, &throttled):
		m.cfg.Logger.Warn("authentication: sign-in throttled", append(attrs, "retry_after", throttled.seconds())...)
		w.Header().Set("Retry-After", strconv.Itoa(throttled.seconds()))
		m.writeError(w, http.StatusTooManyRequests, "Too Many Requests: "+throttled.Error())
	default:
		m.cfg.Logger.Info("authentication: request refused", append(attrs, "reason", err)...)
		m.challenge(w, err)
	}
}

// logName bounds a client-chosen name for the log.
func logName(name string) string {
	if len(name) > 64 {
		return name[:64] + "..."
	}
	return name
}

// challenge answers 401 with a WWW-Authenticate challenge for each
// accepted method; an OAuth challenge names the resource metadata, where
// the client finds the authorization server, and the scopes to ask for.
func (m *Middleware) challenge(w http.ResponseWriter, err error) {
	h := w.Header()
	if m.cfg.Basic != nil {
		h.Add("WWW-Authenticate", fmt.Sprintf(`Basic realm=%q, charset="UTF-8"`, m.cfg.Realm))
	}
	switch {
	case m.cfg.OAuth != nil:
		c := fmt.Sprintf(`Bearer resource_metadata=%q`, m.prmURL)
		if s := m.cfg.OAuth.cfg.RequiredScopes; len(s) > 0 {
			c += fmt.Sprintf(`, scope=%q`, strings.Join(s, " "))
		}
		if errors.Is(err, ErrInvalidToken) {
			c += `, error="invalid_token", error_description="the access token is invalid or expired"`
		}
		h.Add("WWW-Authenticate", c)
	case m.cfg.APIKeys != nil:
		c := fmt.Sprintf(`Bearer realm=%q`, m.cfg.Realm)
		if errors.Is(err, ErrInvalidToken) {
			c += `, error="invalid_token"`
		}
		h.Add("WWW-Authenticate", c)
	}
	msg := "the credentials were not accepted"
	var ce clientError
	switch {
	case errors.As(err, &ce):
		msg = string(ce)
	case errors.Is(err, ErrInvalidToken):
		msg = "the access token is invalid or expired"
	}
	m.writeError(w, http.StatusUnauthorized, "Unauthorized: "+msg)
}

func (m *Middleware) refuse(w http.ResponseWriter, status int, bearerParams, msg string) {
	w.Header().Add("WWW-Authenticate", "Bearer "+bearerParams)
	m.writeError(w, status, msg)
}

func (m *Middleware) insufficientScope(w http.ResponseWriter, scopes []string) {
	m.refuse(w, http.StatusForbidden, m.insufficientParams(scopes),
		"Forbidden: the access token lacks the scope(s) "+strings.Join(scopes, " ")+"; ask the authorization server for them")
}

func (m *Middleware) insufficientParams(scopes []string) string {
	return fmt.Sprintf(`error="insufficient_scope", scope=%q, resource_metadata=%q`, strings.Join(scopes, " "), m.prmURL)
}

func (m *Middleware) writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonrpc.AppendError(nil, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}))
}

// Authorize enforces [Config.MethodScopes] for one JSON-RPC message: the
// function mcphttp.Options.Authorize wants.
func (m *Middleware) Authorize(r *http.Request, msg *jsonrpc.Message) error {
	p := FromContext(r.Context())
	if p == nil || p.Method != "oauth" || len(m.cfg.MethodScopes) == 0 {
		return nil
	}
	need := slices.Clone(m.cfg.MethodScopes[msg.Method])
	if msg.Method == "tools/call" {
		var params struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(msg.Params, &params) == nil {
			need = append(need, m.cfg.MethodScopes["tools/call:"+params.Name]...)
		}
	}
	if len(missingScopes(p, need)) == 0 {
		return nil
	}
	// The challenge lists everything this request needs, scopes already
	// granted included, so the client does not lose them when it asks
	// again.
	all := slices.Clone(m.cfg.OAuth.cfg.RequiredScopes)
	for _, s := range need {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	m.cfg.Logger.Info("authentication: insufficient scope", "subject", p.Subject, "method", msg.Method, "needs", all)
	return &mcphttp.StatusError{
		Status:  http.StatusForbidden,
		Header:  http.Header{"Www-Authenticate": {"Bearer " + m.insufficientParams(all)}},
		Message: "Forbidden: " + msg.Method + " needs the scope(s) " + strings.Join(all, " ") + "; ask the authorization server for them",
	}
}

func missingScopes(p *Principal, need []string) []string {
	var missing []string
	for _, s := range need {
		if !p.HasScope(s) {
			missing = append(missing, s)
		}
	}
	return missing
}
