package config

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// secretFlag matches command-line flags whose value is likely a
// credential (--api-key, --access-token, --password ...).
var secretFlag = regexp.MustCompile(`(?i)^--?[a-z0-9_-]*(key|token|secret|passw|credential)[a-z0-9_-]*$`)

// Redacted returns a copy of c that is safe to print or log: env and
// header values, bearerToken and clientSecret are Redaction, and so is
// every part of a string that came from ${VAR} interpolation. Beyond
// those guarantees it hides what looks like a credential: the value of
// an argument such as --api-key, and passwords and secret-looking query
// parameters in URLs. Warnings are copied as they are: they never hold
// values.
func (c *Config) Redacted() *Config {
	r := *c
	r.Listen = c.hide(c.Listen)
	r.Builtins.TasksDB = c.hide(c.Builtins.TasksDB)
	r.Warnings = slices.Clone(c.Warnings)
	r.Servers = make(map[string]*Server, len(c.Servers))
	for name, s := range c.Servers {
		if s == nil {
			r.Servers[name] = nil
			continue
		}
		t := *s
		t.Command = c.hide(s.Command)
		t.Args = c.redactArgs(s.Args)
		t.Env = redactValues(s.Env)
		t.Cwd = c.hide(s.Cwd)
		t.URL = redactURL(c.hide(s.URL))
		t.Headers = redactValues(s.Headers)
		if s.BearerToken != "" {
			t.BearerToken = Redaction
		}
		if s.OAuth != nil {
			o := *s.OAuth
			o.ClientID = c.hide(o.ClientID)
			if o.ClientSecret != "" {
				o.ClientSecret = Redaction
			}
			o.Scopes = c.hideAll(o.Scopes)
			t.OAuth = &o
		}
		t.Tools = ToolPolicy{
			Allow:        c.hideAll(s.Tools.Allow),
			Deny:         c.hideAll(s.Tools.Deny),
			Rename:       c.hideValues(s.Tools.Rename),
			Descriptions: c.hideValues(s.Tools.Descriptions),
		}
		if s.Tools.Meta != nil {
			t.Tools.Meta = make(map[string]map[string]any, len(s.Tools.Meta))
			for k, m := range s.Tools.Meta {
				t.Tools.Meta[k], _ = c.hideAny(m).(map[string]any)
			}
		}
		r.Servers[name] = &t
	}
	if c.Tenants != nil {
		r.Tenants = make(map[string]*Tenant, len(c.Tenants))
		for name, t := range c.Tenants {
			tc := *t
			if t.Credentials != nil {
				tc.Credentials = make(map[string]*Credentials, len(t.Credentials))
				for s, cr := range t.Credentials {
					rc := &Credentials{Env: redactValues(cr.Env), Headers: redactValues(cr.Headers)}
					if cr.BearerToken != "" {
						rc.BearerToken = Redaction
					}
					tc.Credentials[s] = rc
				}
			}
			r.Tenants[name] = &tc
		}
	}
	if e := c.ToolSearch.Embeddings; e != nil {
		re := *e
		re.URL = redactURL(c.hide(e.URL))
		if e.APIKey != "" {
			re.APIKey = Redaction
		}
		r.ToolSearch.Embeddings = &re
	}
	return &r
}

// hide replaces the interpolated parts of s.
func (c *Config) hide(s string) string {
	if c.src != nil {
		if r, ok := c.src.interp[s]; ok {
			return r
		}
	}
	return s
}

func (c *Config) hideAll(l []string) []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = c.hide(s)
	}
	return out
}

func (c *Config) hideValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = c.hide(v)
	}
	return out
}

func (c *Config) hideAny(v any) any {
	switch v := v.(type) {
	case string:
		return c.hide(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = c.hideAny(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = c.hideAny(e)
		}
		return out
	}
	return v
}

func redactValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k := range m {
		out[k] = Redaction
	}
	return out
}

// redactArgs hides interpolated parts, the value after or in a secret
// flag (--api-key X, --api-key=X), and URL passwords (postgres://u:p@h).
func (c *Config) redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, a := range args {
		a = c.hide(a)
		if flag, _, ok := strings.Cut(a, "="); ok && secretFlag.MatchString(flag) {
			a = flag + "=" + Redaction
		} else if i > 0 && secretFlag.MatchString(args[i-1]) {
			a = Redaction
		} else if strings.Contains(a, "://") {
			a = redactURL(a)
		}
		out[i] = a
	}
	return out
}

// redactURL hides a URL's password and the values of query parameters
// named like credentials (?api_key=...).
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return s
	}
	changed := false
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), placeholder)
		changed = true
	}
	if q := u.Query(); len(q) > 0 {
		for k := range q {
			if secretFlag.MatchString("--" + k) {
				q.Set(k, placeholder)
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	if !changed {
		return s
	}
	// URL encoding would escape the brackets of Redaction.
	return strings.ReplaceAll(u.String(), placeholder, Redaction)
}

const placeholder = "mcpgate-redacted-c0ffee"
