package auth

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// OAuthConfig configures the OAuth 2.1 resource server.
type OAuthConfig struct {
	// Issuer is the authorization server's issuer identifier; tokens must
	// carry it in "iss".
	Issuer string
	// Resource is this server's canonical URI, such as
	// https://mcp.example.com/mcp. Tokens must name it in "aud" (RFC 8707
	// and RFC 9068), so a token issued for another service is refused.
	Resource string
	// JWKSURL is where the issuer's signing keys are. Empty means: read
	// jwks_uri from the issuer's metadata (RFC 8414, then OpenID
	// Connect discovery).
	JWKSURL string
	// RequiredScopes must all be granted for any request.
	RequiredScopes []string
	// ScopesSupported are advertised in the protected-resource metadata.
	ScopesSupported []string
	// HTTPClient fetches metadata and keys. Nil means a client with a 10s
	// timeout.
	HTTPClient *http.Client
	// Skew tolerates clock differences on exp, nbf and iat. Default 30s.
	Skew time.Duration
	// RefreshInterval is how long fetched keys are trusted before they are
	// fetched again. Default 10 minutes. A token signed with an unknown
	// key triggers an early fetch (at most every 30 seconds), which is how
	// key rotation is picked up.
	RefreshInterval time.Duration
	// Logger records failed key fetches. Default slog.Default().
	Logger *slog.Logger
}

// OAuth verifies bearer access tokens.
//
// The issuer's keys are fetched off the request path: one fetch at a
// time, whoever asks for it, in a goroutine of its own. While it runs,
// tokens signed with a key already cached verify at once; only a token
// that needs the fetch (the first ever, or one naming an unknown key id)
// waits for it. A failed fetch is retried with exponential backoff
// (1 second doubling to a minute), never on every request.
type OAuth struct {
	cfg OAuthConfig

	mu         sync.Mutex
	jwksURL    string
	keys       jwk.Set       // nil until a fetch succeeds
	fetched    time.Time     // when keys were fetched
	lastForced time.Time     // of the last fetch for an unknown key id
	failures   int           // fetches failed in a row
	retryAt    time.Time     // no fetch before, after a failure
	lastErr    error         // of the last failed fetch
	pending    chan struct{} // closed when the fetch in flight ends; nil when none
}

const (
	minRefetch   = 30 * time.Second
	minBackoff   = time.Second
	maxBackoff   = time.Minute
	fetchTimeout = 30 * time.Second // a bound for HTTPClients without a timeout
)

// MaxTokenSize bounds a bearer token. A larger one is refused unread:
// real access tokens are a few kilobytes, and a parser should not be
// handed megabytes by whoever asks.
const MaxTokenSize = 16 << 10

// MaxClaimSize and MaxClaimsSize bound the claims a [Principal] carries:
// a claim whose JSON is larger than MaxClaimSize is left out, and the
// rest are kept smallest first until they would pass MaxClaimsSize
// together.
const (
	MaxClaimSize  = 4 << 10
	MaxClaimsSize = 8 << 10
)

// NewOAuth checks cfg. Keys are fetched on first use, so the server starts
// even while the authorization server is unreachable.
func NewOAuth(cfg OAuthConfig) (*OAuth, error) {
	if cfg.Issuer == "" || cfg.Resource == "" {
		return nil, errors.New("auth: OAuth needs an issuer and this server's resource URI")
	}
	if u, err := url.Parse(cfg.Resource); err != nil || !u.IsAbs() || u.Fragment != "" {
		return nil, fmt.Errorf("auth: resource %q must be an absolute URI without a fragment", cfg.Resource)
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Skew <= 0 {
		cfg.Skew = 30 * time.Second
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 10 * time.Minute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &OAuth{cfg: cfg, jwksURL: cfg.JWKSURL}, nil
}

// Config returns the configuration in use.
func (o *OAuth) Config() OAuthConfig { return o.cfg }

// ErrInvalidToken wraps every reason a token is refused. The wrapped
// text may quote the JWT library; show clients only that the token was
// refused.
var ErrInvalidToken = errors.New("invalid token")

// ErrKeysUnavailable means the issuer's keys could not be fetched, so no
// token can be checked: the fault is not the client's, and it is answered
// 503 rather than 401.
var ErrKeysUnavailable = errors.New("the authorization server's keys are unavailable")

// errTokenTooLarge is the refusal of a token over MaxTokenSize.
var errTokenTooLarge = clientError(fmt.Sprintf("the bearer token is larger than %d bytes", MaxTokenSize))

// Verify checks a token's signature, issuer, audience and lifetime and
// returns its principal.
func (o *OAuth) Verify(ctx context.Context, token string) (*Principal, error) {
	if len(token) > MaxTokenSize {
		return nil, fmt.Errorf("%w: %w", ErrInvalidToken, errTokenTooLarge)
	}
	keys, err := o.keysFor(ctx, keyID(token))
	if err != nil {
		return nil, err
	}
	tok, err := o.parse(token, keys)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	p := &Principal{Method: "oauth"}
	p.Subject, _ = tok.Subject()
	if p.Subject == "" {
		return nil, fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	p.Issuer, _ = tok.Issuer()
	all := map[string]any{}
	for _, k := range tok.Keys() {
		var v any
		if tok.Get(k, &v) == nil {
			all[k] = v
		}
	}
	p.Scopes = scopesOf(all)
	p.Claims = boundClaims(all)
	return p, nil
}

// boundClaims keeps the claims within MaxClaimSize each, smallest first
// (then by name, so that the choice is the same every time) up to
// MaxClaimsSize together.
func boundClaims(all map[string]any) map[string]any {
	type sized struct {
		name string
		size int
	}
	var list []sized
	for k, v := range all {
		b, err := json.Marshal(v)
		if err == nil && len(k)+len(b) <= MaxClaimSize {
			list = append(list, sized{k, len(k) + len(b)})
		}
	}
	slices.SortFunc(list, func(a, b sized) int {
		return cmp.Or(cmp.Compare(a.size, b.size), strings.Compare(a.name, b.name))
	})
	out := make(map[string]any, len(list))
	total := 0
	for _, c := range list {
		if total+c.size > MaxClaimsSize {
			break
		}
		total += c.size
		out[c.name] = all[c.name]
	}
	return out
}

func (o *OAuth) parse(token string, keys jwk.Set) (jwt.Token, error) {
	return jwt.Parse([]byte(token),
		jwt.WithKeySet(keys, jws.WithInferAlgorithmFromKey(true)),
		jwt.WithValidate(true),
		jwt.WithIssuer(o.cfg.Issuer),
		jwt.WithAudience(o.cfg.Resource),
		jwt.WithRequiredClaim("exp"),
		jwt.WithAcceptableSkew(o.cfg.Skew),
	)
}

// keyID returns the kid of a compact JWS, or "" when it has none or is
// malformed (parsing then reports why).
func keyID(token string) string {
	msg, err := jws.Parse([]byte(token))
	if err != nil || len(msg.Signatures()) != 1 {
		return ""
	}
	kid, _ := msg.Signatures()[0].ProtectedHeaders().KeyID()
	return kid
}

// scopesOf reads "scope" (space-separated, RFC 9068) or "scp" (a list or
// a string, as some issuers send).
func scopesOf(claims map[string]any) []string {
	var out []string
	add := func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, strings.Fields(v)...)
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	add(claims["scope"])
	add(claims["scp"])
	return out
}

// keysFor returns the keys to check a token signed with key kid. Cached
// keys that know kid are returned at once, starting a background fetch
// when they are stale. A token that needs a fetch, because there are no
// keys yet or because kid is unknown (the issuer has probably rotated its
// keys), waits for it, bounded by ctx; unknown key ids start a fetch at
// most every minRefetch, so that made-up ones cannot flood the issuer.
func (o *OAuth) keysFor(ctx context.Context, kid string) (jwk.Set, error) {
	o.mu.Lock()
	now := time.Now()
	keys := o.keys
	wait := keys == nil
	if !wait && kid != "" {
		if _, known := keys.LookupKeyID(kid); !known && (o.pending != nil || now.Sub(o.lastForced) >= minRefetch) {
			wait = true
			if o.pending == nil {
				o.lastForced = now
			}
		}
	}
	var done chan struct{}
	if wait || now.Sub(o.fetched) > o.cfg.RefreshInterval {
		done = o.startFetch(now)
	}
	unavailable := o.lastErr
	o.mu.Unlock()

	if wait && done != nil {
		select {
		case <-done:
		case <-ctx.Done():
			if keys != nil {
				return keys, nil
			}
			return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, ctx.Err())
		}
		o.mu.Lock()
		keys, unavailable = o.keys, o.lastErr
		o.mu.Unlock()
	}
	if keys == nil {
		if unavailable == nil {
			unavailable = errors.New("not fetched yet")
		}
		return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, unavailable)
	}
	return keys, nil
}

// startFetch returns the channel that closes when the fetch in flight
// ends, starting one if none is; nil while failures back off. o.mu is
// held.
func (o *OAuth) startFetch(now time.Time) chan struct{} {
	if o.pending != nil {
		return o.pending
	}
	if now.Before(o.retryAt) {
		return nil
	}
	o.pending = make(chan struct{})
	go o.fetch(o.pending, o.jwksURL)
	return o.pending
}

// fetch gets the issuer's keys, discovering where they are first if need
// be, and closes done. It runs on a context of its own: the request that
// started it may go, others may be waiting.
func (o *OAuth) fetch(done chan struct{}, jwksURL string) {
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	var err error
	if jwksURL == "" {
		jwksURL, err = o.discoverJWKS(ctx)
	}
	var set jwk.Set
	if err == nil {
		if set, err = jwk.Fetch(ctx, jwksURL, jwk.WithHTTPClient(o.cfg.HTTPClient)); err != nil {
			err = fmt.Errorf("fetching %s: %v", jwksURL, err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pending = nil
	if jwksURL != "" {
		o.jwksURL = jwksURL // discovered once, even if the keys failed
	}
	if err != nil {
		o.failures++
		backoff := maxBackoff
		if o.failures < 8 {
			backoff = min(minBackoff<<(o.failures-1), maxBackoff)
		}
		o.retryAt, o.lastErr = time.Now().Add(backoff), err
		o.cfg.Logger.Warn("authentication: cannot fetch the authorization server's keys", "issuer", o.cfg.Issuer, "err", err, "failures", o.failures, "retry_in", backoff, "cached", o.keys != nil)
		return
	}
	o.keys, o.fetched = set, time.Now()
	o.failures, o.retryAt, o.lastErr = 0, time.Time{}, nil
}

// discoverJWKS reads jwks_uri from the issuer's metadata, trying RFC 8414
// and then OpenID Connect discovery, path-inserted first.
func (o *OAuth) discoverJWKS(ctx context.Context) (string, error) {
	iss, err := url.Parse(o.cfg.Issuer)
	if err != nil {
		return "", err
	}
	path := strings.TrimSuffix(iss.Path, "/")
	var candidates []string
	base := iss.Scheme + "://" + iss.Host
	if path != "" {
		candidates = append(candidates, base+"/.well-known/oauth-authorization-server"+path, base+"/.well-known/openid-configuration"+path, base+path+"/.well-known/openid-configuration")
	} else {
		candidates = append(candidates, base+"/.well-known/oauth-authorization-server", base+"/.well-known/openid-configuration")
	}
	for _, c := range candidates {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c, nil)
		resp, err := o.cfg.HTTPClient.Do(req)
		if err != nil {
			continue
		}
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&meta)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && err == nil && meta.JWKSURI != "" {
			if meta.Issuer != "" && meta.Issuer != o.cfg.Issuer {
				return "", fmt.Errorf("auth: metadata at %s names issuer %q, not %q", c, meta.Issuer, o.cfg.Issuer)
			}
			return meta.JWKSURI, nil
		}
	}
	return "", fmt.Errorf("auth: no jwks_uri in the metadata of issuer %s; set the JWKS URL", o.cfg.Issuer)
}
