package openapi

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// SecurityScheme is one of the ways the API takes credentials, as the
// description's components.securitySchemes (or Swagger 2.0's
// securityDefinitions) declares it.
type SecurityScheme struct {
	// Name is the scheme's key in securitySchemes: what a [Tool]'s
	// Security and a [Credentials] map name it by.
	Name string
	// Type is "apiKey", "http", "oauth2", "openIdConnect" or "mutualTLS".
	Type string
	// In and ParamName say where an apiKey goes: the "header", "query"
	// or "cookie" of that name.
	In, ParamName string
	// Scheme is an http scheme's HTTP authentication scheme, in lower
	// case: "bearer", "basic", ...
	Scheme string
	// Flows are an oauth2 scheme's flows.
	Flows []OAuthFlow
}

// OAuthFlow is one of an oauth2 scheme's flows.
type OAuthFlow struct {
	// Kind is "clientCredentials", "authorizationCode", "password" or
	// "implicit".
	Kind             string
	AuthorizationURL string
	TokenURL         string
	RefreshURL       string
	// Scopes are the scopes the flow declares, sorted.
	Scopes []string
}

// SecuritySchemes lists the description's security schemes, sorted by
// name.
func (d *Document) SecuritySchemes() []SecurityScheme {
	if d.t.Components == nil {
		return nil
	}
	var out []SecurityScheme
	for _, name := range slices.Sorted(maps.Keys(d.t.Components.SecuritySchemes)) {
		ref := d.t.Components.SecuritySchemes[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		s := ref.Value
		ss := SecurityScheme{Name: name, Type: s.Type, In: s.In, ParamName: s.Name, Scheme: strings.ToLower(s.Scheme)}
		if f := s.Flows; f != nil {
			for _, k := range []struct {
				kind string
				flow *openapi3.OAuthFlow
			}{{"clientCredentials", f.ClientCredentials}, {"authorizationCode", f.AuthorizationCode}, {"password", f.Password}, {"implicit", f.Implicit}} {
				if k.flow != nil {
					ss.Flows = append(ss.Flows, OAuthFlow{Kind: k.kind, AuthorizationURL: k.flow.AuthorizationURL, TokenURL: k.flow.TokenURL,
						RefreshURL: k.flow.RefreshURL, Scopes: slices.Sorted(maps.Keys(k.flow.Scopes))})
				}
			}
		}
		out = append(out, ss)
	}
	return out
}

// Credentials are values for a description's security schemes, by
// scheme name: an apiKey's key; an http bearer scheme's token; an http
// basic scheme's "user:password"; an oauth2 or openIdConnect scheme's
// access token.
type Credentials map[string]string

// CheckCredentials reports the first value in creds that the
// description cannot take: one for a scheme it does not declare, or for
// a scheme no value can serve (mutualTLS), or a basic scheme's value
// without a colon. The error names schemes, never values.
func (d *Document) CheckCredentials(creds Credentials) error {
	schemes := d.schemesByName()
	for _, name := range slices.Sorted(maps.Keys(creds)) {
		s, ok := schemes[name]
		if !ok {
			var known []string
			for n := range schemes {
				known = append(known, n)
			}
			slices.Sort(known)
			if len(known) == 0 {
				return fmt.Errorf("openapi: the description declares no security scheme, so none named %q", name)
			}
			return fmt.Errorf("openapi: the description declares no security scheme %q (it declares %s)", name, strings.Join(known, ", "))
		}
		if err := s.check(creds[name]); err != nil {
			return err
		}
	}
	return nil
}

func (s *SecurityScheme) check(value string) error {
	switch s.Type {
	case "apiKey":
		if s.ParamName == "" || (s.In != "header" && s.In != "query" && s.In != "cookie") {
			return fmt.Errorf("openapi: security scheme %q is an apiKey without a usable name and location (in %q)", s.Name, s.In)
		}
		if s.In == "cookie" && strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 || r >= 0x7f || r == '"' || r == ';' || r == '\\' }) {
			return fmt.Errorf("openapi: the value for security scheme %q cannot be sent in a cookie (it holds a control character, a quote, a semicolon, a backslash or a non-ASCII letter)", s.Name)
		}
	case "http":
		if s.Scheme == "basic" && !strings.Contains(value, ":") {
			return fmt.Errorf(`openapi: security scheme %q is http basic: give its value as "user:password"`, s.Name)
		}
		if s.Scheme == "" {
			return fmt.Errorf("openapi: security scheme %q is http without a scheme", s.Name)
		}
	case "oauth2", "openIdConnect":
	default:
		return fmt.Errorf("openapi: security scheme %q is %s, which takes no value to send", s.Name, cmp.Or(s.Type, "of no type"))
	}
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("openapi: the value for security scheme %q holds a line break", s.Name)
	}
	return nil
}

func (d *Document) schemesByName() map[string]*SecurityScheme {
	m := map[string]*SecurityScheme{}
	for _, s := range d.SecuritySchemes() {
		m[s.Name] = &s
	}
	return m
}

// SchemesFor says which schemes a call of t sends values for, given
// which schemes have one: of the operation's security alternatives
// (t.Security), the first that needs schemes and has a value for each of
// them; none when no alternative is met (the API answers for itself, as
// for an anonymous call). When the description declares no security
// requirement at all for the operation, every scheme that has a value.
// The names are sorted.
func (d *Document) SchemesFor(t *Tool, have []string) []string {
	if t.Security == nil {
		return slices.Sorted(slices.Values(have))
	}
	for _, alt := range t.Security {
		if len(alt) > 0 && !slices.ContainsFunc(alt, func(n string) bool { return !slices.Contains(have, n) }) {
			return alt
		}
	}
	return nil
}

// Authorize sets on req, built by t.BuildRequest, the values in creds of
// the schemes [Document.SchemesFor] chooses, each where its scheme says.
// A value replaces any header, query parameter or cookie of the same
// name that the arguments set. Authorize returns the schemes it applied.
func (d *Document) Authorize(t *Tool, req *http.Request, creds Credentials) ([]string, error) {
	if len(creds) == 0 {
		return nil, nil
	}
	schemes := d.schemesByName()
	use := d.SchemesFor(t, slices.Collect(maps.Keys(creds)))
	for _, name := range use {
		s, ok := schemes[name]
		if !ok {
			return nil, fmt.Errorf("openapi: the description declares no security scheme %q", name)
		}
		if err := s.check(creds[name]); err != nil {
			return nil, err
		}
		s.apply(req, creds[name])
	}
	return use, nil
}

func (s *SecurityScheme) apply(req *http.Request, value string) {
	switch s.Type {
	case "apiKey":
		switch s.In {
		case "header":
			req.Header.Set(s.ParamName, value)
		case "query":
			req.URL.RawQuery = withQueryParam(req.URL.RawQuery, s.ParamName, value)
		case "cookie":
			withCookie(req, s.ParamName, value)
		}
	case "http":
		switch s.Scheme {
		case "basic":
			user, pass, _ := strings.Cut(value, ":")
			req.SetBasicAuth(user, pass)
		case "bearer":
			req.Header.Set("Authorization", "Bearer "+value)
		default:
			req.Header.Set("Authorization", s.Scheme+" "+value)
		}
	default: // oauth2, openIdConnect: an access token
		req.Header.Set("Authorization", "Bearer "+value)
	}
}

// withQueryParam is query with every name=... pair removed and
// name=value added, the other pairs left as they were encoded (a
// parameter's style may have left reserved characters as they are).
func withQueryParam(query, name, value string) string {
	var kept []string
	for pair := range strings.SplitSeq(query, "&") {
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == name {
			continue
		}
		kept = append(kept, pair)
	}
	return strings.Join(append(kept, url.QueryEscape(name)+"="+url.QueryEscape(value)), "&")
}

// withCookie replaces req's cookies of that name with name=value.
func withCookie(req *http.Request, name, value string) {
	others := slices.DeleteFunc(req.Cookies(), func(c *http.Cookie) bool { return c.Name == name })
	req.Header.Del("Cookie")
	for _, c := range others {
		req.AddCookie(c)
	}
	req.AddCookie(&http.Cookie{Name: name, Value: value, Quoted: strings.ContainsAny(value, " ,")})
}
