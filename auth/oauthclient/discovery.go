package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// resourceMetadata is RFC 9728 protected resource metadata (the members
// the client uses).
type resourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported"`
}

// serverMetadata is RFC 8414 / OpenID Connect Discovery metadata (the
// members the client uses).
type serverMetadata struct {
	Issuer                                     string    `json:"issuer"`
	AuthorizationEndpoint                      string    `json:"authorization_endpoint"`
	TokenEndpoint                              string    `json:"token_endpoint"`
	RegistrationEndpoint                       string    `json:"registration_endpoint"`
	ScopesSupported                            []string  `json:"scopes_supported"`
	ResponseTypesSupported                     []string  `json:"response_types_supported"`
	GrantTypesSupported                        []string  `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string  `json:"token_endpoint_auth_methods_supported"`
	TokenEndpointAuthSigningAlgValuesSupported []string  `json:"token_endpoint_auth_signing_alg_values_supported"`
	CodeChallengeMethodsSupported              *[]string `json:"code_challenge_methods_supported"` // nil: not advertised
	ClientIDMetadataDocumentSupported          bool      `json:"client_id_metadata_document_supported"`
	AuthorizationResponseIssParameterSupported bool      `json:"authorization_response_iss_parameter_supported"`

	// source is where the metadata came from, for messages; "" for the
	// 2025-03-26 default endpoints.
	source string
}

// discovery is what the client learnt about a server and its
// authorization server.
type discovery struct {
	// resource is the RFC 8707 resource parameter: the PRM's resource
	// exactly as published, or the canonical server URL without PRM.
	resource  string
	prmURL    string
	prmScopes []string
	as        *serverMetadata
	// legacy: no PRM, the 2025-03-26 way (the MCP server's origin is the
	// authorization server).
	legacy bool
}

const maxMetadataSize = 1 << 20

// StoreKey is the key under which a [Transport] whose [Config.ServerURL]
// is serverURL keeps its token in the [TokenStore]: the server's canonical
// URL. It lets a program look at (or delete) what was kept for a server, such
// as a gateway waiting for a person to sign in again.
func StoreKey(serverURL string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", fmt.Errorf("oauthclient: %q is not an absolute URL", serverURL)
	}
	return canonicalURL(u), nil
}

// canonicalURL is the canonical form of a server URL (MCP specification,
// "Canonical Server URI"): lower-case scheme and host, no default port,
// no query or fragment, no lone trailing slash.
func canonicalURL(u *url.URL) string {
	s := originOf(u)
	if p := u.EscapedPath(); p != "/" {
		s += p
	}
	return s
}

// originOf is scheme://host[:port], lower-cased, default port dropped.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// resourceAllowed reports whether a PRM resource covers the server URL:
// same origin, and the server's path is the resource's path or below it
// (a resource at the origin's root covers every path).
func resourceAllowed(resource string, server *url.URL) bool {
	r, err := url.Parse(resource)
	if err != nil || !r.IsAbs() || r.Fragment != "" {
		return false
	}
	if originOf(r) != originOf(server) {
		return false
	}
	rp := strings.TrimSuffix(r.EscapedPath(), "/")
	sp := strings.TrimSuffix(server.EscapedPath(), "/")
	return rp == "" || sp == rp || strings.HasPrefix(sp, rp+"/")
}

// fetchJSON GETs a metadata document (what says which, for messages). It
// returns the HTTP status; v is filled only on 200. A redirect or a
// refused address is an error matching ErrAuthorization, which ends the
// discovery: the metadata is there, and it must not be fetched so.
func (t *Transport) fetchJSON(ctx context.Context, rawURL, what string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("MCP-Protocol-Version", t.cfg.ProtocolVersion)
	resp, err := t.do(req, what, "metadata")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return resp.StatusCode, nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxMetadataSize)).Decode(v); err != nil {
		return resp.StatusCode, fmt.Errorf("%s is not valid JSON metadata: %w", rawURL, err)
	}
	return resp.StatusCode, nil
}

// discover finds the server's resource metadata and authorization server,
// as the MCP specification (2025-11-25) orders it: the resource_metadata
// of the challenge, then the path-based well-known URI, then the root
// one; without any, the 2025-03-26 way.
//
// The metadata must be on the server's own origin: a resource_metadata
// elsewhere is ignored, with a warning, for the well-known URIs. A 401
// is unauthenticated, and metadata from another origin could name any
// authorization server, which would then receive the client's
// registration and credentials, for a resource it claims to be.
func (t *Transport) discover(ctx context.Context, server *url.URL, ch Challenge) (*discovery, error) {
	var candidates []string
	origin := originOf(server)
	if raw := ch.Params["resource_metadata"]; raw != "" {
		u, err := t.checkURL(ctx, raw, "resource metadata URL")
		switch {
		case err != nil:
			t.log.Warn("oauthclient: ignoring the resource_metadata of the challenge", "server", canonicalURL(server), "err", err)
		case originOf(u) != origin:
			t.log.Warn("oauthclient: ignoring the resource_metadata of the challenge: it is not on the server's origin; using the well-known URIs", "server", canonicalURL(server), "resource_metadata", u.Redacted())
		default:
			candidates = append(candidates, u.String())
		}
	}
	if p := strings.TrimSuffix(server.EscapedPath(), "/"); p != "" {
		candidates = append(candidates, origin+"/.well-known/oauth-protected-resource"+p)
	}
	candidates = append(candidates, origin+"/.well-known/oauth-protected-resource")

	var problems []string
	for _, c := range candidates {
		var prm resourceMetadata
		status, err := t.fetchJSON(ctx, c, "protected resource metadata URL", &prm)
		if err != nil {
			if ctx.Err() != nil {
				return nil, wrapAuthErr(ctx.Err(), "fetching the protected resource metadata at %s", c)
			}
			if errors.Is(err, ErrAuthorization) {
				return nil, err
			}
			problems = append(problems, err.Error())
			continue
		}
		if status != http.StatusOK {
			t.log.Debug("oauthclient: no protected resource metadata", "url", c, "status", status)
			continue
		}
		if prm.Resource == "" {
			problems = append(problems, c+" has no resource member")
			continue
		}
		// A resource other than this server means the token would be
		// issued for something else, or the metadata is not this
		// server's: never go on (RFC 9728 §3.3 and §7.3).
		if !resourceAllowed(prm.Resource, server) {
			return nil, authErr(ErrResourceMismatch, "the protected resource metadata at %s is for %q, not for the server %s; refusing to obtain a token for it", c, prm.Resource, canonicalURL(server))
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, authErr(nil, "the protected resource metadata at %s names no authorization server", c)
		}
		d := &discovery{resource: prm.Resource, prmURL: c, prmScopes: prm.ScopesSupported}
		// RFC 9728 §7.6 leaves the choice among several authorization
		// servers to the client: take the first one that answers.
		var asProblems []string
		temporary := true
		for _, issuer := range prm.AuthorizationServers {
			as, err := t.serverMetadata(ctx, issuer, false)
			if err != nil {
				if ctx.Err() != nil || errors.Is(err, ErrRedirect) || errors.Is(err, ErrPrivateAddress) {
					return nil, err
				}
				temporary = temporary && errors.Is(err, ErrTemporary)
				asProblems = append(asProblems, err.Error())
				continue
			}
			d.as = as
			t.log.Debug("oauthclient: discovered", "server", canonicalURL(server), "resource_metadata", c, "issuer", as.Issuer, "metadata", as.source)
			return d, nil
		}
		if temporary {
			return nil, temporaryErr(nil, "no authorization server of %s could be reached: %s", canonicalURL(server), strings.Join(asProblems, "; "))
		}
		return nil, authErr(nil, "no usable authorization server for %s: %s", canonicalURL(server), strings.Join(asProblems, "; "))
	}
	if len(problems) > 0 {
		t.log.Debug("oauthclient: protected resource metadata problems", "server", canonicalURL(server), "problems", problems)
	}

	// No protected resource metadata: a 2025-03-26 server, whose origin is
	// its own authorization server.
	t.log.Info("oauthclient: the server publishes no protected resource metadata; using its origin as the authorization server (2025-03-26)", "server", canonicalURL(server))
	as, err := t.serverMetadata(ctx, origin, true)
	if err != nil {
		return nil, err
	}
	return &discovery{resource: canonicalURL(server), as: as, legacy: true}, nil
}

// asMetadataURLs lists where an issuer's metadata may be, in the order the
// MCP specification gives: RFC 8414 path-inserted, OpenID Connect
// path-inserted, OpenID Connect path-appended; for an issuer without a
// path, RFC 8414 then OpenID Connect at the root.
func asMetadataURLs(issuer *url.URL) []string {
	origin := originOf(issuer)
	p := strings.TrimSuffix(issuer.EscapedPath(), "/")
	if p == "" {
		return []string{origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"}
	}
	return []string{
		origin + "/.well-known/oauth-authorization-server" + p,
		origin + "/.well-known/openid-configuration" + p,
		origin + p + "/.well-known/openid-configuration",
	}
}

// sameIssuer compares issuer identifiers, tolerating a trailing slash
// (RFC 3986 treats both as equivalent and issuers differ in practice).
func sameIssuer(a, b string) bool {
	return strings.TrimSuffix(a, "/") == strings.TrimSuffix(b, "/")
}

// serverMetadata fetches and checks an authorization server's metadata.
// legacy is the 2025-03-26 fallback: the MCP server's origin is probed,
// its metadata's issuer is not checked (that revision had no notion of
// it, and such servers publish issuers with other paths), and without any
// metadata the default endpoints /authorize, /token and /register are
// used.
func (t *Transport) serverMetadata(ctx context.Context, issuer string, legacy bool) (*serverMetadata, error) {
	iu, err := t.checkURL(ctx, issuer, "authorization server")
	if err != nil {
		return nil, err
	}
	var tried []string
	temporary := true // every try failed in a way that may pass
	for _, c := range asMetadataURLs(iu) {
		var m serverMetadata
		status, err := t.fetchJSON(ctx, c, "authorization server metadata URL", &m)
		if err != nil {
			if ctx.Err() != nil {
				return nil, wrapAuthErr(ctx.Err(), "fetching the authorization server metadata at %s", c)
			}
			if errors.Is(err, ErrAuthorization) {
				return nil, err
			}
			temporary = temporary && status == 0 // no answer, not a bad one
			tried = append(tried, err.Error())
			continue
		}
		if status != http.StatusOK {
			temporary = temporary && (status >= 500 || status == http.StatusTooManyRequests)
			tried = append(tried, fmt.Sprintf("%s: HTTP %d", c, status))
			continue
		}
		m.source = c
		// RFC 8414 §3.3: the metadata must name the issuer it was fetched
		// for, or an attacker's metadata could stand in for another
		// server's.
		if !legacy && !sameIssuer(m.Issuer, issuer) {
			return nil, authErr(nil, "the authorization server metadata at %s names the issuer %q, not %q", c, m.Issuer, issuer)
		}
		if m.Issuer == "" {
			m.Issuer = strings.TrimSuffix(issuer, "/")
		}
		if err := t.checkEndpoints(ctx, &m); err != nil {
			return nil, err
		}
		return &m, nil
	}
	if !legacy {
		if temporary {
			return nil, temporaryErr(nil, "the authorization server %s could not be reached (tried %s)", issuer, strings.Join(tried, ", "))
		}
		return nil, authErr(nil, "the authorization server %s publishes no metadata (tried %s)", issuer, strings.Join(tried, ", "))
	}
	origin := originOf(iu)
	t.log.Info("oauthclient: no authorization server metadata; using the default endpoints /authorize, /token and /register (2025-03-26)", "server", origin)
	return &serverMetadata{
		Issuer:                origin,
		AuthorizationEndpoint: origin + "/authorize",
		TokenEndpoint:         origin + "/token",
		RegistrationEndpoint:  origin + "/register",
	}, nil
}

func (t *Transport) checkEndpoints(ctx context.Context, m *serverMetadata) error {
	if m.TokenEndpoint == "" {
		return authErr(nil, "the authorization server metadata at %s has no token_endpoint", m.source)
	}
	check := func(raw, what string) error {
		if raw == "" {
			return nil
		}
		_, err := t.checkURL(ctx, raw, what+" of "+m.Issuer)
		return err
	}
	return errors.Join(
		check(m.AuthorizationEndpoint, "authorization endpoint"),
		check(m.TokenEndpoint, "token endpoint"),
		check(m.RegistrationEndpoint, "registration endpoint"),
	)
}
