package main

import (
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcpgate/mcpgate/auth"
)

// authFlags configure inbound authentication of the HTTP server.
type authFlags struct {
	users, keys      string
	issuer, resource string
	jwksURL          string
	scopes           []string
	scopesSupported  []string
	methodScopes     []string
	allowAnonymous   bool
}

func (a *authFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&a.users, "auth-users", envOr("MCPGATE_AUTH_USERS", ""), "file of Basic users, name:bcrypt-hash per line, made with \"mcpgate auth hash-password\" (env MCPGATE_AUTH_USERS)")
	fl.StringVar(&a.keys, "auth-keys", envOr("MCPGATE_AUTH_KEYS", ""), "file of API keys, name:sha256:hex per line, made with \"mcpgate auth new-key\" (env MCPGATE_AUTH_KEYS)")
	fl.StringVar(&a.issuer, "oauth-issuer", envOr("MCPGATE_OAUTH_ISSUER", ""), "accept OAuth access tokens (JWT) from this authorization server (env MCPGATE_OAUTH_ISSUER)")
	fl.StringVar(&a.resource, "oauth-resource", envOr("MCPGATE_OAUTH_RESOURCE", ""), "this server's public URL, which tokens must name as audience (default http://ADDR/mcp)")
	fl.StringVar(&a.jwksURL, "oauth-jwks-url", "", "where the issuer's keys are (default: jwks_uri from the issuer's metadata)")
	fl.StringSliceVar(&a.scopes, "oauth-scope", nil, "scope every token must carry (repeatable)")
	fl.StringSliceVar(&a.scopesSupported, "oauth-scopes-supported", nil, "scopes advertised in the protected-resource metadata (default: the required ones and those of --scope-for)")
	fl.StringArrayVar(&a.methodScopes, "scope-for", nil, "METHOD=SCOPE: an OAuth scope needed for an MCP method, or for one tool as tools/call:NAME=SCOPE (repeatable)")
	fl.BoolVar(&a.allowAnonymous, "allow-anonymous", false, "serve a non-loopback address without authentication (only behind a proxy that authenticates)")
}

func (a *authFlags) enabled() bool { return a.users != "" || a.keys != "" || a.issuer != "" }

// build returns the middleware for the flags, or nil when no method is
// configured. Serving beyond loopback without one is refused unless
// --allow-anonymous says a proxy in front takes care of it.
func (a *authFlags) build(flagAddr, addr string) (*auth.Middleware, error) {
	if a.issuer == "" && (len(a.methodScopes) > 0 || len(a.scopes) > 0 || a.jwksURL != "" || a.resource != "") {
		return nil, fmt.Errorf("--oauth-scope, --scope-for, --oauth-jwks-url and --oauth-resource need --oauth-issuer")
	}
	if !a.enabled() {
		if !a.allowAnonymous && !loopbackAddr(addr) {
			addr = flagAddr
			return nil, fmt.Errorf("--addr %s is reachable from other machines, and no authentication is set: use --auth-keys, --auth-users or --oauth-issuer (or --allow-anonymous behind an authenticating proxy)", addr)
		}
		return nil, nil
	}
	var cfg auth.Config
	var err error
	if a.users != "" {
		if cfg.Basic, err = auth.LoadBasicUsers(a.users); err != nil {
			return nil, fmt.Errorf("--auth-users: %w", err)
		}
	}
	if a.keys != "" {
		if cfg.APIKeys, err = auth.LoadAPIKeys(a.keys); err != nil {
			return nil, fmt.Errorf("--auth-keys: %w", err)
		}
	}
	cfg.MethodScopes = map[string][]string{}
	for _, ms := range a.methodScopes {
		method, scope, ok := strings.Cut(ms, "=")
		if !ok || method == "" || scope == "" {
			return nil, fmt.Errorf("--scope-for %q: want METHOD=SCOPE, such as tools/call:delete_task=tasks:admin", ms)
		}
		cfg.MethodScopes[method] = append(cfg.MethodScopes[method], scope)
	}
	if a.issuer != "" {
		resource := a.resource
		if resource == "" {
			resource = "http://" + addr + "/mcp"
		}
		supported := a.scopesSupported
		if len(supported) == 0 {
			supported = append(supported, a.scopes...)
			for _, ss := range cfg.MethodScopes {
				for _, s := range ss {
					if !slices.Contains(supported, s) {
						supported = append(supported, s)
					}
				}
			}
		}
		cfg.OAuth, err = auth.NewOAuth(auth.OAuthConfig{
			Issuer:          a.issuer,
			Resource:        resource,
			JWKSURL:         a.jwksURL,
			RequiredScopes:  a.scopes,
			ScopesSupported: supported,
		})
		if err != nil {
			return nil, err
		}
	}
	cfg.Logger = slog.Default()
	return auth.New(cfg)
}

// loopbackAddr reports whether a listen address only accepts connections
// from this machine.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
