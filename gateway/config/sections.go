package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// config decodes the document. Other programs' top-level keys (Claude
// Desktop keeps its preferences in the same file) are warnings, but a
// near miss of one of ours is an error: a misspelt mcpServers would
// otherwise leave a gateway silently serving nothing.
func (d *decoder) config(doc *yaml.Node) *Config {
	c := &Config{}
	if len(doc.Content) == 0 {
		d.warnf(Pos{}, `add "mcpServers"`, "the file is empty: no servers")
		return c
	}
	root := d.node(doc.Content[0])
	if root.Kind != yaml.MappingNode && !isNull(root) {
		d.errorf(npos(root), `write {"mcpServers": {"name": {"command": "..."}}}`, "the file must hold an object, not %s", kindName(root))
		return c
	}
	seen := "" // mcpServers or servers, whichever came first
	servers := func(v *yaml.Node, p []string) {
		if seen != "" {
			d.errorf(d.src.keyAt(p...), "they mean the same: keep one", "both %q and %q are set", seen, p[0])
			return
		}
		seen = p[0]
		d.src.key["mcpServers"] = d.src.keyAt(p...)
		d.servers(c, v)
	}
	ours := []field{
		{"mcpServers", servers},
		{"servers", servers}, // VS Code's name
		{"listen", func(v *yaml.Node, p []string) { c.Listen = d.str(v, p) }},
		{"separator", func(v *yaml.Node, p []string) { c.Separator = d.str(v, p) }},
		{"startWindow", func(v *yaml.Node, p []string) { c.StartWindow = d.duration(v, p) }},
		{"maxConcurrentStarts", func(v *yaml.Node, p []string) { c.MaxConcurrentStarts = d.integer(v, p) }},
		{"builtins", func(v *yaml.Node, p []string) {
			d.fields(v, p, []field{
				{"tasks", func(v *yaml.Node, p []string) { c.Builtins.Tasks = d.boolean(v, p) }},
				{"tasksDb", func(v *yaml.Node, p []string) { c.Builtins.TasksDB = d.str(v, p) }},
			}, nil)
		}},
		{"defaults", func(v *yaml.Node, p []string) { d.fields(v, p, d.optionFields(&c.Defaults), nil) }},
		{"limits", func(v *yaml.Node, p []string) { d.limits(&c.Limits, v, p) }},
		{"tenants", func(v *yaml.Node, p []string) { d.tenants(c, v, p) }},
		{"audit", func(v *yaml.Node, p []string) {
			d.fields(v, p, []field{
				{"db", func(v *yaml.Node, p []string) { c.Audit.DB = d.str(v, p) }},
				{"retention", func(v *yaml.Node, p []string) { c.Audit.Retention = d.duration(v, p) }},
			}, nil)
		}},
		{"toolSearch", func(v *yaml.Node, p []string) { d.toolSearch(&c.ToolSearch, v, p) }},
		{"state", func(v *yaml.Node, p []string) {
			d.fields(v, p, []field{
				{"db", func(v *yaml.Node, p []string) { c.State.DB = d.str(v, p) }},
			}, nil)
		}},
		{"cluster", func(v *yaml.Node, p []string) {
			d.fields(v, p, []field{
				{"redis", func(v *yaml.Node, p []string) { c.Cluster.Redis = d.str(v, p) }},
				{"replicaId", func(v *yaml.Node, p []string) { c.Cluster.ReplicaID = d.str(v, p) }},
			}, nil)
		}},
		{"$schema", func(*yaml.Node, []string) {}},
	}
	d.fields(root, nil, ours, func(e pair, _ []string) bool {
		if e.key == "inputs" {
			d.warnf(npos(e.k), "mcpgate does not prompt: set environment variables and write ${NAME}",
				"VS Code's inputs are ignored")
			return true
		}
		if strings.HasPrefix(e.key, "x-") {
			return true // a place for YAML anchors, as in Compose files
		}
		if _, near := suggest(e.key, []string{"mcpServers", "servers", "listen", "separator", "builtins", "defaults", "limits", "audit", "tenants", "toolSearch", "state", "cluster", "startWindow", "maxConcurrentStarts"}); near {
			return false
		}
		d.warnf(npos(e.k), "mcpgate reads mcpServers (or servers), listen, separator, startWindow, maxConcurrentStarts, builtins, defaults, limits, audit, tenants, toolSearch, state and cluster",
			"key %q ignored", e.key)
		return true
	})
	if len(c.Servers) == 0 && !c.Builtins.Tasks && !d.src.failed("mcpServers") {
		d.warnf(d.src.keyAt("mcpServers"), `add servers under "mcpServers", or set builtins.tasks`, "no servers and no built-in tools: the gateway will serve nothing")
	}
	return c
}

func (d *decoder) servers(c *Config, v *yaml.Node) {
	es := d.mapping(v, []string{"mcpServers"})
	if es == nil {
		return
	}
	c.Servers = make(map[string]*Server, len(es))
	for _, e := range es {
		s := d.server(e.v, d.entry([]string{"mcpServers"}, e))
		s.Name = e.key
		c.Servers[e.key] = s
	}
}

// otherClientKeys are keys of other clients' server entries that mcpgate
// does without: tolerated, with a word on what is lost.
var otherClientKeys = map[string]string{
	"envFile":       "VS Code's envFile is not read: copy its variables into env",
	"dev":           "VS Code's dev settings do not apply to mcpgate",
	"autoApprove":   "Cline's autoApprove does not apply: the client calling mcpgate asks for approval",
	"alwaysAllow":   "Roo's alwaysAllow does not apply: the client calling mcpgate asks for approval",
	"transportType": "Cline's transportType is ignored: mcpgate uses type, or sees command or url",
	"description":   "the description is for people reading the file",
}

// renamedKeys are other clients' names for our keys.
var renamedKeys = map[string]string{
	"serverUrl":        "url", // Windsurf
	"httpUrl":          "url", // Gemini CLI
	"workingDirectory": "cwd",
}

func (d *decoder) server(v *yaml.Node, p []string) *Server {
	s := &Server{}
	n := d.node(v)
	defer func(soft bool) { d.soft = soft }(d.soft)
	if dis := d.keyValue(n, "disabled"); dis != nil && dis.Value == "true" {
		d.soft = true
	}
	fs := []field{
		{"command", func(v *yaml.Node, p []string) { s.Command = d.str(v, p) }},
		{"args", func(v *yaml.Node, p []string) { s.Args = d.strList(v, p) }},
		{"env", func(v *yaml.Node, p []string) { s.Env = d.strMap(v, p) }},
		{"cwd", func(v *yaml.Node, p []string) { s.Cwd = d.str(v, p) }},
		{"url", func(v *yaml.Node, p []string) { s.URL = d.str(v, p) }},
		{"type", func(v *yaml.Node, p []string) { s.Type = d.str(v, p) }},
		{"headers", func(v *yaml.Node, p []string) { s.Headers = d.strMap(v, p) }},
		{"bearerToken", func(v *yaml.Node, p []string) { s.BearerToken = d.str(v, p) }},
		{"oauth", func(v *yaml.Node, p []string) { s.OAuth = d.oauth(v, p) }},
		{"openapi", func(v *yaml.Node, p []string) { s.OpenAPI = d.openAPI(v, p) }},
		{"protocol", func(v *yaml.Node, p []string) { s.Protocol = d.str(v, p) }},
		{"disabled", func(v *yaml.Node, p []string) { s.Disabled = d.boolean(v, p) }},
		{"tools", func(v *yaml.Node, p []string) { d.tools(&s.Tools, v, p) }},
	}
	fs = append(fs, d.optionFields(&s.ServerOptions)...)
	d.fields(n, p, fs, func(e pair, q []string) bool {
		if why, ok := otherClientKeys[e.key]; ok {
			d.warnf(npos(e.k), why, "key %q ignored", e.key)
			return true
		}
		if ours, ok := renamedKeys[e.key]; ok {
			d.src.bad[pathKey(append(p[:len(p):len(p)], ours))] = true
			d.errorf(npos(e.k), fmt.Sprintf("mcpgate calls it %q: rename the key", ours), "unknown key %q", e.key)
			return true
		}
		return false
	})
	return s
}

func (d *decoder) openAPI(v *yaml.Node, p []string) *OpenAPI {
	o := &OpenAPI{}
	d.fields(d.node(v), p, []field{
		{"spec", func(v *yaml.Node, p []string) { o.Spec = d.str(v, p) }},
		{"baseUrl", func(v *yaml.Node, p []string) { o.BaseURL = d.str(v, p) }},
		{"include", func(v *yaml.Node, p []string) { o.Include = d.strList(v, p) }},
		{"exclude", func(v *yaml.Node, p []string) { o.Exclude = d.strList(v, p) }},
		{"allowRemoteRefs", func(v *yaml.Node, p []string) { o.AllowRemoteRefs = d.boolean(v, p) }},
		{"noOutputSchema", func(v *yaml.Node, p []string) { o.NoOutputSchema = d.boolean(v, p) }},
		{"maxResponseBytes", func(v *yaml.Node, p []string) { o.MaxResponseBytes = d.integer(v, p) }},
		{"securitySchemes", func(v *yaml.Node, p []string) { o.SecuritySchemes = d.strMap(v, p) }},
	}, nil)
	return o
}

// keyValue is the value of key in mapping m, aliases followed, or nil.
func (d *decoder) keyValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return d.node(m.Content[i+1])
		}
	}
	return nil
}

func (d *decoder) optionFields(o *ServerOptions) []field {
	return []field{
		{"start", func(v *yaml.Node, p []string) { o.Start = d.str(v, p) }},
		{"idleTimeout", func(v *yaml.Node, p []string) { o.IdleTimeout = d.duration(v, p) }},
		{"timeout", func(v *yaml.Node, p []string) { o.Timeout = d.duration(v, p) }},
		{"startTimeout", func(v *yaml.Node, p []string) { o.StartTimeout = d.duration(v, p) }},
		{"maxConcurrency", func(v *yaml.Node, p []string) { o.MaxConcurrency = d.integer(v, p) }},
		{"protocolVersion", func(v *yaml.Node, p []string) { o.ProtocolVersion = d.str(v, p) }},
		{"healthInterval", func(v *yaml.Node, p []string) { o.HealthInterval = d.duration(v, p) }},
		{"clientFeatures", func(v *yaml.Node, p []string) { o.ClientFeatures = d.clientFeatures(v, p) }},
		{"maxListItems", func(v *yaml.Node, p []string) { o.MaxListItems = d.integer(v, p) }},
		{"maxListBytes", func(v *yaml.Node, p []string) { o.MaxListBytes = d.integer(v, p) }},
		{"pins", func(v *yaml.Node, p []string) { o.Pins = d.str(v, p) }},
		{"required", func(v *yaml.Node, p []string) { o.Required = d.boolean(v, p) }},
		{"instances", func(v *yaml.Node, p []string) { o.Instances = d.str(v, p) }},
		{"maxInstances", func(v *yaml.Node, p []string) { o.MaxInstances = d.integer(v, p) }},
		{"maxInstancesPerPrincipal", func(v *yaml.Node, p []string) { o.MaxInstancesPerPrincipal = d.integer(v, p) }},
	}
}

func (d *decoder) clientFeatures(v *yaml.Node, p []string) ClientFeatures {
	var c ClientFeatures
	flag := func(b **bool) func(*yaml.Node, []string) {
		return func(v *yaml.Node, p []string) {
			x := d.boolean(v, p)
			*b = &x
		}
	}
	d.fields(v, p, []field{
		{"sampling", flag(&c.Sampling)},
		{"elicitation", flag(&c.Elicitation)},
		{"roots", flag(&c.Roots)},
	}, nil)
	return c
}

func (d *decoder) oauth(v *yaml.Node, p []string) *OAuth {
	if isNull(d.node(v)) {
		return nil
	}
	o := &OAuth{}
	d.fields(v, p, []field{
		{"grant", func(v *yaml.Node, p []string) { o.Grant = d.str(v, p) }},
		{"clientId", func(v *yaml.Node, p []string) { o.ClientID = d.str(v, p) }},
		{"clientSecret", func(v *yaml.Node, p []string) { o.ClientSecret = d.str(v, p) }},
		{"scopes", func(v *yaml.Node, p []string) { o.Scopes = d.strList(v, p) }},
		{"tokenUrl", func(v *yaml.Node, p []string) { o.TokenURL = d.str(v, p) }},
		{"authorizationUrl", func(v *yaml.Node, p []string) { o.AuthorizationURL = d.str(v, p) }},
		{"allowPrivateNetworks", func(v *yaml.Node, p []string) { o.AllowPrivateNetworks = d.boolean(v, p) }},
	}, nil)
	return o
}

func (d *decoder) tools(t *ToolPolicy, v *yaml.Node, p []string) {
	d.fields(v, p, []field{
		{"allow", func(v *yaml.Node, p []string) { t.Allow = d.strList(v, p) }},
		{"deny", func(v *yaml.Node, p []string) { t.Deny = d.strList(v, p) }},
		{"rename", func(v *yaml.Node, p []string) { t.Rename = d.strMap(v, p) }},
		{"descriptions", func(v *yaml.Node, p []string) { t.Descriptions = d.strMap(v, p) }},
		{"meta", func(v *yaml.Node, p []string) {
			for _, e := range d.mapping(v, p) {
				q := d.entry(p, e)
				m, ok := d.value(e.v, q).(map[string]any)
				if !ok {
					d.fail(q, d.node(e.v), `write an object: {"category": "search"}`, "%s must be an object", label(q))
					continue
				}
				if t.Meta == nil {
					t.Meta = map[string]map[string]any{}
				}
				t.Meta[e.key] = m
			}
		}},
	}, nil)
}

// limits decodes the limits section.
func (d *decoder) limits(l *Limits, v *yaml.Node, p []string) {
	rate := func(r *Rate) func(*yaml.Node, []string) {
		return func(v *yaml.Node, p []string) {
			d.fields(v, p, []field{
				{"perMinute", func(v *yaml.Node, p []string) { r.PerMinute = d.integer(v, p) }},
				{"burst", func(v *yaml.Node, p []string) { r.Burst = d.integer(v, p) }},
			}, nil)
		}
	}
	d.fields(v, p, []field{
		{"calls", rate(&l.Calls)},
		{"sampling", rate(&l.Sampling)},
		{"subscriptionsPerSession", func(v *yaml.Node, p []string) { l.SubscriptionsPerSession = d.integer(v, p) }},
		{"concurrent", func(v *yaml.Node, p []string) { l.Concurrent = d.integer(v, p) }},
		{"inputWindow", func(v *yaml.Node, p []string) { l.InputWindow = d.duration(v, p) }},
		{"tools", func(v *yaml.Node, p []string) {
			es := d.mapping(v, p)
			if es == nil {
				return
			}
			l.Tools = make(map[string]Rate, len(es))
			for _, e := range es {
				var r Rate
				rate(&r)(e.v, d.entry(p, e))
				l.Tools[e.key] = r
			}
		}},
	}, nil)
}

// tenants decodes the tenants section.
func (d *decoder) tenants(c *Config, v *yaml.Node, p []string) {
	es := d.mapping(v, p)
	if es == nil {
		return
	}
	c.Tenants = make(map[string]*Tenant, len(es))
	for _, e := range es {
		t := &Tenant{}
		q := d.entry(p, e)
		d.fields(e.v, q, []field{
			{"principals", func(v *yaml.Node, p []string) { t.Principals = d.strList(v, p) }},
			{"delegates", func(v *yaml.Node, p []string) { t.Delegates = d.strList(v, p) }},
			{"servers", func(v *yaml.Node, p []string) { t.Servers = d.strList(v, p) }},
			{"tools", func(v *yaml.Node, p []string) {
				d.fields(v, p, []field{
					{"allow", func(v *yaml.Node, p []string) { t.Tools.Allow = d.strList(v, p) }},
					{"deny", func(v *yaml.Node, p []string) { t.Tools.Deny = d.strList(v, p) }},
				}, nil)
			}},
			{"toolListing", func(v *yaml.Node, p []string) { t.ToolListing = d.str(v, p) }},
			{"pins", func(v *yaml.Node, p []string) { t.Pins = d.str(v, p) }},
			{"clientFeatures", func(v *yaml.Node, p []string) {
				es := d.mapping(v, p)
				if es == nil {
					return
				}
				t.ClientFeatures = make(map[string]*ClientFeatures, len(es))
				for _, e := range es {
					cf := d.clientFeatures(e.v, d.entry(p, e))
					t.ClientFeatures[e.key] = &cf
				}
			}},
			{"limits", func(v *yaml.Node, p []string) {
				t.Limits = &Limits{}
				d.limits(t.Limits, v, p)
			}},
			{"credentials", func(v *yaml.Node, p []string) {
				es := d.mapping(v, p)
				if es == nil {
					return
				}
				t.Credentials = make(map[string]*Credentials, len(es))
				for _, e := range es {
					c := &Credentials{}
					d.fields(e.v, d.entry(p, e), []field{
						{"env", func(v *yaml.Node, p []string) { c.Env = d.strMap(v, p) }},
						{"headers", func(v *yaml.Node, p []string) { c.Headers = d.strMap(v, p) }},
						{"bearerToken", func(v *yaml.Node, p []string) { c.BearerToken = d.str(v, p) }},
						{"securitySchemes", func(v *yaml.Node, p []string) { c.SecuritySchemes = d.strMap(v, p) }},
					}, nil)
					t.Credentials[e.key] = c
				}
			}},
		}, nil)
		c.Tenants[e.key] = t
	}
}

func (d *decoder) toolSearch(ts *ToolSearch, v *yaml.Node, p []string) {
	d.fields(v, p, []field{
		{"listing", func(v *yaml.Node, p []string) { ts.Listing = d.str(v, p) }},
		{"servers", func(v *yaml.Node, p []string) { ts.Servers = d.strMap(v, p) }},
		{"pinned", func(v *yaml.Node, p []string) { ts.Pinned = d.strList(v, p) }},
		{"learn", func(v *yaml.Node, p []string) {
			x := d.boolean(v, p)
			ts.Learn = &x
		}},
		{"embeddings", func(v *yaml.Node, p []string) {
			e := &Embeddings{}
			d.fields(v, p, []field{
				{"url", func(v *yaml.Node, p []string) { e.URL = d.str(v, p) }},
				{"model", func(v *yaml.Node, p []string) { e.Model = d.str(v, p) }},
				{"apiKey", func(v *yaml.Node, p []string) { e.APIKey = d.str(v, p) }},
				{"cache", func(v *yaml.Node, p []string) { e.Cache = d.str(v, p) }},
			}, nil)
			ts.Embeddings = e
		}},
	}, nil)
}
