package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
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
}

// OAuth verifies bearer access tokens.
type OAuth struct {
	cfg OAuthConfig

	mu         sync.Mutex
	jwksURL    string
	keys       jwk.Set
	fetched    time.Time
	lastForced time.Time
}

const minRefetch = 30 * time.Second

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
	return &OAuth{cfg: cfg, jwksURL: cfg.JWKSURL}, nil
}

// Config returns the configuration in use.
func (o *OAuth) Config() OAuthConfig { return o.cfg }

// ErrInvalidToken wraps every reason a token is refused.
var ErrInvalidToken = errors.New("invalid token")

// ErrKeysUnavailable means the issuer's keys could not be fetched, so no
// token can be checked: the fault is not the client's, and it is answered
// 503 rather than 401.
var ErrKeysUnavailable = errors.New("the authorization server's keys are unavailable")

// Verify checks a token's signature, issuer, audience and lifetime and
// returns its principal.
func (o *OAuth) Verify(ctx context.Context, token string) (*Principal, error) {
	keys, err := o.keySet(ctx, false)
	if err != nil {
		return nil, err
	}
	// A key id we do not know means the issuer has probably rotated its
	// keys: fetch them again (rate limited, so that made-up key ids cannot
	// turn into a flood of requests to the issuer).
	if kid := keyID(token); kid != "" {
		if _, ok := keys.LookupKeyID(kid); !ok {
			if fresh, ferr := o.keySet(ctx, true); ferr == nil {
				keys = fresh
			}
		}
	}
	tok, err := o.parse(token, keys)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	p := &Principal{Method: "oauth", Claims: map[string]any{}}
	p.Subject, _ = tok.Subject()
	if p.Subject == "" {
		return nil, fmt.Errorf("%w: no sub claim", ErrInvalidToken)
	}
	for _, k := range tok.Keys() {
		var v any
		if tok.Get(k, &v) == nil {
			p.Claims[k] = v
		}
	}
	p.Scopes = scopesOf(p.Claims)
	return p, nil
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

// keySet returns the cached keys, fetching them when they are missing or
// stale, or when force is set and no forced fetch happened recently.
func (o *OAuth) keySet(ctx context.Context, force bool) (jwk.Set, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now()
	stale := o.keys == nil || now.Sub(o.fetched) > o.cfg.RefreshInterval
	if !stale {
		if !force || now.Sub(o.lastForced) < minRefetch {
			return o.keys, nil
		}
		o.lastForced = now
	}
	if o.jwksURL == "" {
		u, err := o.discoverJWKS(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKeysUnavailable, err)
		}
		o.jwksURL = u
	}
	set, err := jwk.Fetch(ctx, o.jwksURL, jwk.WithHTTPClient(o.cfg.HTTPClient))
	if err != nil {
		if o.keys != nil {
			return o.keys, nil // keep serving with the keys we have
		}
		return nil, fmt.Errorf("%w: fetching %s: %v", ErrKeysUnavailable, o.jwksURL, err)
	}
	o.keys, o.fetched = set, now
	return set, nil
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
