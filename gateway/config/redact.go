package config

import (
	"maps"
	"slices"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// Redaction is what [Config.Redacted] and messages show in place of a
// secret: the same text as the gateway's log and audit records.
const Redaction = redact.Marker

// Redacted returns a copy of c that is safe to print or log: env and
// header values, bearerToken, clientSecret and the password in
// cluster.redis, builtins.tasksDb, audit.db and state.db are
// [Redaction], and so is every part of a string that
// came from a ${VAR} whose name says it holds a secret (GITHUB_TOKEN,
// API_KEY, DB_PASSWORD) or whose value reads as a token. Other interpolated parts show, as what they are:
// ${SCRATCH}/sandbox is a path. Beyond those guarantees it hides what
// looks like a credential, by the rules of internal/redact: in the
// arguments (redact.Args) the value of a flag such as --api-key, a value
// after -t or -k that reads as a credential, and tokens; and in a
// command, an argument or a URL, passwords, secret-named query
// parameters and well-known key shapes. Warnings are copied as they
// are: they never hold values (their messages hide every interpolated
// part).
func (c *Config) Redacted() *Config {
	r := *c
	r.Listen = c.show(c.Listen)
	r.Builtins.TasksDB = redactURL(c.show(c.Builtins.TasksDB))
	r.Audit.DB = redactURL(c.show(c.Audit.DB))
	r.State.DB = redactURL(c.show(c.State.DB))
	r.Cluster.Redis = redactURL(c.show(c.Cluster.Redis))
	r.Cluster.ReplicaID = c.show(c.Cluster.ReplicaID)
	r.Warnings = slices.Clone(c.Warnings)
	r.Servers = make(map[string]*Server, len(c.Servers))
	for name, s := range c.Servers {
		if s == nil {
			r.Servers[name] = nil
			continue
		}
		t := *s
		t.Command = redact.String(c.show(s.Command))
		t.Args = c.redactArgs(s.Args)
		t.Env = redactValues(s.Env)
		t.Cwd = c.show(s.Cwd)
		t.URL = redactURL(c.show(s.URL))
		t.Headers = redactValues(s.Headers)
		if s.BearerToken != "" {
			t.BearerToken = Redaction
		}
		if s.OAuth != nil {
			o := *s.OAuth
			o.ClientID = c.show(o.ClientID)
			if o.ClientSecret != "" {
				o.ClientSecret = Redaction
			}
			o.Scopes = c.showAll(o.Scopes)
			o.TokenURL = redactURL(c.show(o.TokenURL))
			t.OAuth = &o
		}
		if s.OpenAPI != nil {
			o := *s.OpenAPI
			o.Spec = redactURL(c.show(o.Spec))
			o.BaseURL = redactURL(c.show(o.BaseURL))
			o.SecuritySchemes = redactValues(o.SecuritySchemes)
			t.OpenAPI = &o
		}
		t.Tools = ToolPolicy{
			Allow:        c.showAll(s.Tools.Allow),
			Deny:         c.showAll(s.Tools.Deny),
			Rename:       c.showValues(s.Tools.Rename),
			Descriptions: c.showValues(s.Tools.Descriptions),
		}
		if s.Tools.Meta != nil {
			t.Tools.Meta = make(map[string]map[string]any, len(s.Tools.Meta))
			for k, m := range s.Tools.Meta {
				t.Tools.Meta[k], _ = c.showAny(m).(map[string]any)
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
					rc := &Credentials{Env: redactValues(cr.Env), Headers: redactValues(cr.Headers), SecuritySchemes: redactValues(cr.SecuritySchemes)}
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
		re.URL = redactURL(c.show(e.URL))
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

// show is s as Redacted shows it: where s came from interpolation, its
// plain form (see plainEnv) with what redact.String finds hidden; s
// itself otherwise, as the file has it.
func (c *Config) show(s string) string {
	if c.src != nil {
		if p, ok := c.src.plain[s]; ok {
			return redact.String(p)
		}
	}
	return s
}

func (c *Config) showAll(l []string) []string {
	if l == nil {
		return nil
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = c.show(s)
	}
	return out
}

func (c *Config) showValues(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = c.show(v)
	}
	return out
}

func (c *Config) showAny(v any) any {
	switch v := v.(type) {
	case string:
		return c.show(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = c.showAny(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = c.showAny(e)
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

// redactArgs shows interpolated parts as show does, and hides what
// redact.Args finds: a secret flag's value (--api-key X, --api-key=X),
// a credential after -t or -k, tokens, and what redact.String finds in
// each argument (postgres://u:p@h, GITHUB_TOKEN=..., ghp_...).
func (c *Config) redactArgs(args []string) []string {
	if args == nil {
		return nil
	}
	return redact.Args(c.showAll(args))
}

// redactURL hides a URL's password, the values of query parameters
// named like credentials (?api_key=...) and keys in its path (a Slack
// webhook's).
func redactURL(s string) string { return redact.String(s) }
