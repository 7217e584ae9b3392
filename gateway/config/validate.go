package config

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcpgate/mcpgate/mcp"
)

// ProtocolVersions are the values protocolVersion takes: "" and "auto"
// (probe the server, then initialize), then the revisions mcpgate
// speaks, newest first (mcp.Versions, the one list of them).
var ProtocolVersions = append([]string{"", "auto"}, mcp.Versions()...)

// Defaults applied by ApplyDefaults.
const (
	DefaultSeparator      = "_"
	DefaultTimeout        = Duration(30 * time.Second)
	DefaultMaxConcurrency = 32
	DefaultHealthInterval = Duration(30 * time.Second)
	DefaultStartTimeout   = Duration(2 * time.Minute)
	// The largest real servers list a few hundred tools in a few MB
	// (ms-365: 344 tools, 3.6 MB); file servers list thousands of
	// resources.
	DefaultMaxListItems = 50000
	DefaultMaxListBytes = 64 << 20
)

var (
	serverName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,31}$`)
	toolName   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	hostName   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$`)
	httpToken  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// Validate checks c and reports every problem at once, each with its place
// in the file when c came from [Parse]. Parse has already called it; a
// gateway that builds or changes a Config in code calls it itself.
func (c *Config) Validate() error {
	if errs := c.validate(); len(errs) > 0 {
		sortDiags(errs)
		return errs
	}
	return nil
}

type checker struct {
	src  *source
	errs Errors
}

func (v *checker) errorf(pos Pos, hint, format string, args ...any) {
	file := ""
	if v.src != nil {
		file = v.src.file
	}
	v.errs = append(v.errs, &Diagnostic{File: file, Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (c *Config) validate() Errors {
	v := &checker{src: c.src}
	if c.Listen != "" {
		v.listen(c.Listen)
	}
	v.limits(&c.Limits, "limits")
	v.tenants(c)
	v.toolSearch(c)
	switch {
	case strings.ContainsRune(c.State.DB, 0):
		v.errorf(v.src.at("state", "db"), "remove the NUL byte", "state.db: the path holds a NUL byte")
	case c.State.DB != "" && !isDatabaseURL(c.State.DB) && (c.State.DB == c.Audit.DB || c.State.DB == c.Builtins.TasksDB):
		// The gateway watches the state database for other processes'
		// commits: a SQLite file it also writes elsewhere would wake it
		// always. In Postgres it counts pin changes alone, so one
		// database can hold the pins, the audit log and the tasks.
		v.errorf(v.src.at("state", "db"), "give the state database a file of its own, such as state.db beside the others", "state.db is also the audit or task database")
	}
	v.cluster(&c.Cluster)
	if c.MaxConcurrentStarts < 0 {
		v.errorf(v.src.at("maxConcurrentStarts"), "use a positive number, or leave it out for the number of CPUs", "maxConcurrentStarts is negative")
	}
	if c.StartWindow < 0 {
		v.errorf(v.src.at("startWindow"), `use a duration such as "5s", or leave it out for 5s`, "startWindow is negative")
	}
	if c.Audit.Retention < 0 {
		v.errorf(v.src.at("audit", "retention"), `use a duration such as "720h", or leave it out for 30 days`, "audit.retention is negative")
	}
	sep := c.Separator
	if sep != "" && (len(sep) > 2 || strings.Trim(sep, "_-.") != "") {
		v.errorf(v.src.at("separator"), `use one or two of "_", "-" and "."; the default is "_"`, "separator %s is not allowed", v.src.shown(sep))
	}
	if sep == "" {
		sep = DefaultSeparator
	}
	v.options(&c.Defaults, "defaults")
	taken := map[string]bool{}
	for name := range c.Servers {
		taken[name] = true
	}
	for _, name := range slices.Sorted(maps.Keys(c.Servers)) {
		s := c.Servers[name]
		p := []string{"mcpServers", name}
		if !serverName.MatchString(name) {
			v.errorf(v.src.keyAt(p...), fmt.Sprintf("rename it to %q", fixName(name, taken)),
				"server name %q is not 1 to 32 of a-z, 0-9 and '-' starting with a letter", name)
		}
		if name == "tasks" && c.Builtins.Tasks {
			v.errorf(v.src.keyAt(p...), "rename the server, or turn builtins.tasks off", `server name "tasks" is taken by the built-in task tools`)
		}
		if s == nil || v.src.failed(p...) {
			continue // not an object: already reported
		}
		v.server(s, p)
		v.tools(&s.Tools, name, sep, p)
	}
	v.ambiguousNames(c, sep)
	v.instances(c)
	return v.errs
}

// ambiguousNames reports pairs of server names that can publish the same
// name: with separator "-", server "a" with tool "b-c" and server "a-b"
// with tool "c" both publish "a-b-c", and whichever started first would
// take the other's calls. That happens when one name is the other's
// prefix and what follows it, then the separator, starts with the
// separator.
func (v *checker) ambiguousNames(c *Config, sep string) {
	names := slices.Sorted(maps.Keys(c.Servers))
	if c.Builtins.Tasks && c.Servers["tasks"] == nil {
		names = append(names, "tasks")
		slices.Sort(names)
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			rest, ok := strings.CutPrefix(b, a)
			if !ok {
				break // sorted: no later name starts with a either
			}
			if !strings.HasPrefix(rest+sep, sep) {
				continue
			}
			// b+sep starts with a+sep, so b's tool "x" has a twin of a's.
			pub := b + sep + "x"
			v.errorf(v.src.keyAt("mcpServers", b), fmt.Sprintf("rename %q or %q so that neither starts with the other and %q, or choose another separator", a, b, sep),
				"server names %q and %q can publish the same name with separator %q: %q's tool %q and %q's tool \"x\" are both %q",
				a, b, sep, a, pub[len(a)+len(sep):], b, pub)
		}
	}
}

// listen checks the address. Its hint stays on loopback: serve refuses
// any other address without authentication, so suggesting ":8765" would
// trade this error for that one.
func (v *checker) listen(addr string) {
	host, port, err := net.SplitHostPort(addr)
	_, perr := strconv.ParseUint(port, 10, 16)
	if err != nil || perr != nil || host != "" && net.ParseIP(host) == nil && !hostName.MatchString(host) {
		if perr != nil {
			port = addr // a port alone, perhaps
		}
		if _, err := strconv.ParseUint(port, 10, 16); err != nil || v.src.fromEnv(addr) {
			port = "8765"
		}
		v.errorf(v.src.at("listen"), fmt.Sprintf(`write host:port, such as "127.0.0.1:%s" (this machine only); `+
			"another interface needs authentication (serve's --auth-keys, --auth-users or --oauth-issuer)", port),
			"listen %s is not a host and port", v.src.shown(addr))
	}
}

func (v *checker) server(s *Server, p []string) {
	at := func(k string) Pos { return v.src.at(append(p[:len(p):len(p)], k)...) }
	failed := func(k string) bool { return v.src.failed(append(p[:len(p):len(p)], k)...) }
	stdio, remote, rest := s.Command != "", s.URL != "", s.OpenAPI != nil
	switch {
	case stdio && remote:
		v.errorf(at("url"), "a server is a command (stdio) or a url (HTTP): keep one", "both command and url are set")
	case rest && (stdio || remote):
		v.errorf(at("openapi"), "a server is a command (stdio), a url (MCP over HTTP) or an openapi description (a REST API): keep one", "openapi with command or url")
	case !stdio && !remote && !rest && !failed("command") && !failed("url") && !failed("openapi"):
		v.errorf(v.src.keyAt(p...), `add "command" to start it over stdio, "url" to reach it over HTTP, or "openapi" for a REST API`, "server %q has neither command nor url", s.Name)
	}
	if rest {
		v.openAPI(s, append(p[:len(p):len(p)], "openapi"))
	}
	switch s.Type {
	case "":
	case "stdio":
		if remote && !stdio {
			v.errorf(at("type"), `use "http" or "sse" with url, or leave type out`, `type "stdio" needs command, and this server has url`)
		}
	case "http", "streamable-http", "sse":
		if stdio && !remote {
			v.errorf(at("type"), `use "stdio" with command, or leave type out`, "type %q needs url, and this server has command", s.Type)
		}
	default:
		hint := `use "stdio", "http" (Streamable HTTP) or "sse", or leave it out`
		if t, ok := suggest(s.Type, []string{"stdio", "http", "streamable-http", "sse"}); ok {
			hint = fmt.Sprintf("did you mean %q?", t)
		}
		v.errorf(at("type"), hint, "type %s is not a transport", v.src.shown(s.Type))
	}
	if remote {
		v.url(s.URL, at("url"))
	}
	if remote && !stdio {
		for _, f := range []struct {
			k   string
			set bool
		}{{"args", s.Args != nil}, {"env", s.Env != nil}, {"cwd", s.Cwd != ""}} {
			if f.set {
				v.errorf(at(f.k), "it applies to command (stdio) servers only: remove it", "%s with url", f.k)
			}
		}
	}
	if stdio && !remote {
		for _, f := range []struct {
			k   string
			set bool
		}{{"headers", s.Headers != nil}, {"bearerToken", s.BearerToken != ""}, {"oauth", s.OAuth != nil}} {
			if f.set {
				v.errorf(at(f.k), "it applies to url (HTTP) servers only: give a command its credentials in env", "%s with command", f.k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			v.errorf(v.src.keyAt(append(p, "env", k)...), "a variable name has no '=' or NUL", "env name %q is not a variable name", k)
		} else if strings.Contains(s.Env[k], "\x00") {
			v.errorf(v.src.at(append(p, "env", k)...), "remove the NUL byte", "env %q: the value holds a NUL byte", k)
		}
	}
	auth := ""
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		q := append(p[:len(p):len(p)], "headers", k)
		if !httpToken.MatchString(k) {
			v.errorf(v.src.keyAt(q...), "header names are letters, digits and !#$%&'*+-.^_`|~", "header name %q is not valid", k)
		} else if strings.ContainsAny(s.Headers[k], "\r\n\x00") {
			v.errorf(v.src.at(q...), "a header value is one line", "header %q: the value holds a line break or NUL", k)
		}
		if strings.EqualFold(k, "Authorization") {
			auth = k
		}
	}
	if strings.ContainsAny(s.BearerToken, " \t\r\n\x00") {
		v.errorf(at("bearerToken"), "the token is one word: check for a stray space or line break", "bearerToken holds white space")
	}
	credentials := 0
	for _, set := range []bool{auth != "", s.BearerToken != "", s.OAuth != nil} {
		if set {
			credentials++
		}
	}
	if credentials > 1 && (remote || rest) {
		v.errorf(at("bearerToken"), "each sets Authorization: keep one", "more than one of headers.Authorization, bearerToken and oauth")
	}
	if s.OAuth != nil {
		v.oauth(s.OAuth, append(p[:len(p):len(p)], "oauth"))
		for _, e := range []struct{ key, url string }{{"tokenUrl", s.OAuth.TokenURL}, {"authorizationUrl", s.OAuth.AuthorizationURL}} {
			switch {
			case e.url == "":
			case rest:
				v.url(e.url, v.src.at(append(p[:len(p):len(p)], "oauth", e.key)...))
			default:
				v.errorf(v.src.at(append(p[:len(p):len(p)], "oauth", e.key)...), "remove it: an MCP server's authorization server is found by discovery", "oauth.%s is for openapi servers", e.key)
			}
		}
		if s.OAuth.AuthorizationURL != "" && s.OAuth.Grant != "authorization_code" && rest {
			v.errorf(v.src.at(append(p[:len(p):len(p)], "oauth", "authorizationUrl")...), "remove it, or use the authorization_code grant", "oauth.authorizationUrl with the %s grant", v.src.shown(s.OAuth.Grant))
		}
	}
	v.protocol(s, at)
	v.options(&s.ServerOptions, p...)
}

// openAPI checks a REST API upstream's description settings.
func (v *checker) openAPI(s *Server, p []string) {
	o := s.OpenAPI
	at := func(k string) Pos { return v.src.at(append(p[:len(p):len(p)], k)...) }
	if o.Spec == "" && !v.src.failed(append(p[:len(p):len(p)], "spec")...) {
		v.errorf(v.src.keyAt(p...), `add "spec": the description's file path or http(s) URL`, "openapi has no spec")
	}
	if strings.Contains(o.Spec, "://") {
		v.url(o.Spec, at("spec"))
	}
	if o.BaseURL != "" {
		v.url(o.BaseURL, at("baseUrl"))
	}
	for _, k := range []struct {
		key      string
		patterns []string
	}{{"include", o.Include}, {"exclude", o.Exclude}} {
		for _, g := range k.patterns {
			if _, err := path.Match(g, ""); err != nil {
				v.errorf(at(k.key), "a glob such as \"repos/*\" or \"pulls*\" (path.Match syntax)", "%s pattern %q is malformed", k.key, g)
			}
		}
	}
	if o.MaxResponseBytes < 0 {
		v.errorf(at("maxResponseBytes"), "a size in bytes, such as 10485760 (10 MiB, the default)", "maxResponseBytes is negative")
	}
	if s.OAuth != nil && s.OAuth.Grant == "authorization_code" && s.OAuth.ClientID == "" {
		v.errorf(v.src.at(append(p[:len(p)-1:len(p)-1], "oauth")...),
			"a REST API's authorization server registers no client for the gateway: give the clientId (and clientSecret, if it has one) of the OAuth app you made for it", "oauth has no clientId")
	}
	v.schemeValues(o.SecuritySchemes, append(p[:len(p):len(p)], "securitySchemes"))
	if s.Protocol != "" || s.ProtocolVersion != "" {
		v.errorf(v.src.keyAt(p...), "remove protocol and protocolVersion: a REST API speaks HTTP, not MCP", "protocol or protocolVersion with openapi")
	}
	if s.Args != nil || s.Env != nil || s.Cwd != "" {
		v.errorf(v.src.keyAt(p...), "args, env and cwd apply to command (stdio) servers only: remove them", "args, env or cwd with openapi")
	}
}

// protocol checks what the server is said to speak.
func (v *checker) protocol(s *Server, at func(string) Pos) {
	switch s.Protocol {
	case "", "mcp":
	case "bare":
		if s.ProtocolVersion != "" && s.ProtocolVersion != "auto" {
			v.errorf(at("protocolVersion"), "a bare tool server is sent no initialize: remove protocolVersion, or protocol", "protocolVersion with protocol \"bare\"")
		}
	default:
		hint := `use "mcp", or "bare" for a tool server without the MCP lifecycle (it answers tools/list and tools/call, not initialize), or leave it out to detect it`
		if p, ok := suggest(s.Protocol, []string{"mcp", "bare"}); ok {
			hint = fmt.Sprintf("did you mean %q?", p)
		}
		v.errorf(at("protocol"), hint, "protocol %s is not mcp or bare", v.src.shown(s.Protocol))
	}
}

func (v *checker) url(u string, pos Pos) {
	// The URL is not quoted in messages: it may carry a token.
	parsed, err := url.Parse(u)
	switch {
	case err != nil:
		v.errorf(pos, "check for spaces or stray characters; write https://host/path", "url is not a valid URL")
	case parsed.Scheme != "http" && parsed.Scheme != "https":
		v.errorf(pos, "write an absolute URL such as https://example.com/mcp", "url must start with http:// or https://")
	case parsed.Host == "":
		v.errorf(pos, "write an absolute URL such as https://example.com/mcp", "url has no host")
	}
}

// cluster checks the cluster section: a Redis URL that go-redis takes.
// The URL is not quoted in messages: it may carry a password.
func (v *checker) cluster(c *Cluster) {
	if c.Redis != "" {
		u, err := url.Parse(c.Redis)
		switch {
		case err != nil:
			v.errorf(v.src.at("cluster", "redis"), "write redis://host:6379/0", "cluster.redis is not a valid URL")
		case u.Scheme != "redis" && u.Scheme != "rediss":
			v.errorf(v.src.at("cluster", "redis"), "write redis://host:6379/0, or rediss:// for TLS", "cluster.redis must start with redis:// or rediss://")
		case u.Host == "":
			v.errorf(v.src.at("cluster", "redis"), "write redis://host:6379/0", "cluster.redis has no host")
		}
	}
	if strings.ContainsFunc(c.ReplicaID, unicode.IsControl) {
		v.errorf(v.src.at("cluster", "replicaId"), "use letters, digits, '-' and '.', such as the host name", "cluster.replicaId holds a control character")
	}
}

// schemeValues checks values for an openapi description's security
// schemes; whether the description declares them is known only once it
// is loaded.
func (v *checker) schemeValues(m map[string]string, p []string) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		q := append(p[:len(p):len(p)], k)
		switch {
		case k == "":
			v.errorf(v.src.keyAt(q...), "name a scheme of the description's components.securitySchemes", "a security scheme with no name")
		case m[k] == "":
			v.errorf(v.src.at(q...), "give the scheme's key or token, or remove it", "securitySchemes %q is empty", k)
		case strings.ContainsAny(m[k], "\r\n\x00"):
			v.errorf(v.src.at(q...), "a credential is one line", "securitySchemes %q: the value holds a line break or NUL", k)
		}
	}
}

func (v *checker) oauth(o *OAuth, p []string) {
	at := func(k string) Pos { return v.src.at(append(p[:len(p):len(p)], k)...) }
	switch o.Grant {
	case "authorization_code":
	case "client_credentials":
		if o.ClientID == "" && !v.src.failed(append(p, "clientId")...) {
			v.errorf(at("clientId"), "the client_credentials grant needs the client's id and secret", "oauth has no clientId")
		}
		if o.ClientSecret == "" && !v.src.failed(append(p, "clientSecret")...) {
			v.errorf(at("clientSecret"), "the client_credentials grant needs the client's id and secret", "oauth has no clientSecret")
		}
	default:
		if v.src.failed(append(p, "grant")...) {
			break
		}
		hint := `use "client_credentials" (a service account) or "authorization_code" (log in once with mcpgate login SERVER)`
		if g, ok := suggest(o.Grant, []string{"client_credentials", "authorization_code"}); ok && o.Grant != "" {
			hint = fmt.Sprintf("did you mean %q?", g)
		}
		if o.Grant == "" {
			v.errorf(at("grant"), hint, "oauth has no grant")
		} else {
			v.errorf(at("grant"), hint, "oauth grant %s is not supported", v.src.shown(o.Grant))
		}
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n\"\\") {
			v.errorf(v.src.at(append(p, "scopes", strconv.Itoa(i))...), "one scope per list item, without spaces or quotes", "scope %s is not valid", v.src.shown(s))
		}
	}
}

func (v *checker) options(o *ServerOptions, p ...string) {
	at := func(k string) Pos { return v.src.at(append(p[:len(p):len(p)], k)...) }
	if o.Start != "" && o.Start != "lazy" && o.Start != "eager" {
		v.errorf(at("start"), `use "lazy" (start on first use) or "eager" (start at load)`, "start %s is not lazy or eager", v.src.shown(o.Start))
	}
	if !slices.Contains(ProtocolVersions, o.ProtocolVersion) {
		v.errorf(at("protocolVersion"), "use "+strings.Join(ProtocolVersions[2:], ", ")+`, or "auto" to negotiate`,
			"protocolVersion %s is not a revision mcpgate speaks", v.src.shown(o.ProtocolVersion))
	}
	if o.StartTimeout < 0 {
		v.errorf(at("startTimeout"), "use a positive duration, or leave it out for the default of 2m", "startTimeout is negative")
	}
	if o.Timeout < 0 {
		v.errorf(at("timeout"), "use a positive duration, or leave it out for the default of 30s", "timeout is negative")
	}
	if o.IdleTimeout < 0 {
		v.errorf(at("idleTimeout"), "use a positive duration, or leave it out (0) to never stop the server", "idleTimeout is negative")
	}
	if o.MaxConcurrency < 0 {
		v.errorf(at("maxConcurrency"), "use a positive number, or leave it out for the default of 32", "maxConcurrency is negative")
	}
	if o.MaxListItems < 0 {
		v.errorf(at("maxListItems"), "use a positive number, or leave it out for the default of 50000", "maxListItems is negative")
	}
	if o.MaxListBytes < 0 {
		v.errorf(at("maxListBytes"), "use a positive number of bytes, or leave it out for the default of 64 MiB", "maxListBytes is negative")
	}
	v.pins(o.Pins, at("pins"))
	v.instanceOptions(o, at)
}

func (v *checker) pins(policy string, pos Pos) {
	if policy != "" && policy != PinsWarn && policy != PinsBlock && policy != PinsApprove {
		v.errorf(pos, `use "warn" (publish changes and log them), "block" (serve the pinned definition until approved) or "approve" (withhold changed tools until approved)`,
			"pins %s is not warn, block or approve", v.src.shown(policy))
	}
}

func (v *checker) tools(t *ToolPolicy, server, sep string, p []string) {
	p = append(p[:len(p):len(p)], "tools")
	for _, list := range []struct {
		key  string
		pats []string
	}{{"allow", t.Allow}, {"deny", t.Deny}} {
		for i, pat := range list.pats {
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				v.errorf(v.src.at(append(p, list.key, strconv.Itoa(i))...), `globs use * ? and [a-z]; escape a literal one with \`,
					"%s[%d] %s is not a valid pattern", list.key, i, v.src.shown(pat))
			}
		}
	}
	targets := map[string]string{}
	for _, from := range slices.Sorted(maps.Keys(t.Rename)) {
		to := t.Rename[from]
		pos := v.src.at(append(p, "rename", from)...)
		final := server + sep + to
		switch {
		case !toolName.MatchString(to):
			v.errorf(pos, "tool names are 1 to 128 of A-Z, a-z, 0-9, '_', '-' and '.'", "rename %q: %s is not a valid tool name", from, v.src.shown(to))
		case len(final) > 128:
			v.errorf(pos, fmt.Sprintf("shorten it to %d characters or fewer", 128-len(server)-len(sep)),
				"rename %q: with the prefix %q the tool's name is %d characters, over 128", from, server+sep, len(final))
		case targets[to] != "":
			v.errorf(pos, "give each tool its own name", "rename %q: %q is also the new name of %q", from, to, targets[to])
		}
		targets[to] = from
	}
	for k := range t.Descriptions {
		if k == "" {
			v.errorf(v.src.keyAt(append(p, "descriptions", k)...), "name the upstream tool", "descriptions has an empty tool name")
		}
	}
}

// ApplyDefaults fills what the file left unset: the separator, and in
// each server first the file's defaults, then the built-in ones. Start
// defaults to lazy for a command and eager for a URL.
func (c *Config) ApplyDefaults() {
	if c.Separator == "" {
		c.Separator = DefaultSeparator
	}
	for name, s := range c.Servers {
		if s == nil {
			continue
		}
		s.Name = name
		o, d := &s.ServerOptions, c.Defaults
		start := "eager" // a remote server costs nothing to keep connected
		if s.Command != "" {
			start = "lazy"
		}
		o.Start = cmp.Or(o.Start, d.Start, start)
		o.IdleTimeout = cmp.Or(o.IdleTimeout, d.IdleTimeout)
		o.Timeout = cmp.Or(o.Timeout, d.Timeout, DefaultTimeout)
		o.StartTimeout = cmp.Or(o.StartTimeout, d.StartTimeout, DefaultStartTimeout)
		o.MaxConcurrency = cmp.Or(o.MaxConcurrency, d.MaxConcurrency, DefaultMaxConcurrency)
		o.ProtocolVersion = cmp.Or(o.ProtocolVersion, d.ProtocolVersion)
		o.HealthInterval = cmp.Or(o.HealthInterval, d.HealthInterval, DefaultHealthInterval)
		o.ClientFeatures = o.ClientFeatures.Over(d.ClientFeatures)
		o.MaxListItems = cmp.Or(o.MaxListItems, d.MaxListItems, DefaultMaxListItems)
		o.MaxListBytes = cmp.Or(o.MaxListBytes, d.MaxListBytes, DefaultMaxListBytes)
		o.Pins = cmp.Or(o.Pins, d.Pins, PinsWarn)
		o.Required = o.Required || d.Required
		o.Instances = cmp.Or(o.Instances, d.Instances)
		o.MaxInstances = cmp.Or(o.MaxInstances, d.MaxInstances)
		o.MaxInstancesPerPrincipal = cmp.Or(o.MaxInstancesPerPrincipal, d.MaxInstancesPerPrincipal)
	}
}

func (v *checker) limits(l *Limits, at ...string) {
	check := func(r Rate, p ...string) {
		if r.PerMinute < 0 {
			v.errorf(v.src.at(append(p, "perMinute")...), "use a positive number of calls a minute, or leave it out for no limit", "perMinute is negative")
		}
		if r.Burst < 0 {
			v.errorf(v.src.at(append(p, "burst")...), "use a positive number, or leave it out for a tenth of perMinute", "burst is negative")
		}
	}
	check(l.Calls, append(at, "calls")...)
	check(l.Sampling, append(at, "sampling")...)
	if l.SubscriptionsPerSession < 0 {
		v.errorf(v.src.at(append(at, "subscriptionsPerSession")...), "use a positive number, or leave it out for 100", "subscriptionsPerSession is negative")
	}
	for name, r := range l.Tools {
		check(r, append(at, "tools", name)...)
	}
	if l.Concurrent < 0 {
		v.errorf(v.src.at(append(at, "concurrent")...), "use a positive number, or leave it out for no bound", "concurrent is negative")
	}
	switch {
	case l.InputWindow < 0:
		v.errorf(v.src.at(append(at, "inputWindow")...), "use a positive duration such as 5m, or leave it out for 5m", "inputWindow is negative")
	case l.InputWindow > 0 && at[0] == "tenants":
		v.errorf(v.src.at(append(at, "inputWindow")...), "set it in the top-level limits section; it applies to the whole gateway", "inputWindow is not a tenant's limit")
	}
}

func (v *checker) toolSearch(c *Config) {
	ts := &c.ToolSearch
	v.listing(ts.Listing, "toolSearch", "listing")
	for s, mode := range ts.Servers {
		if _, ok := c.Servers[s]; !ok && !(s == "tasks" && c.Builtins.Tasks) {
			v.errorf(v.src.keyAt("toolSearch", "servers", s), "name a server of mcpServers", "toolSearch.servers names %q, which is not configured", s)
		}
		v.listing(mode, "toolSearch", "servers", s)
	}
	for i, g := range ts.Pinned {
		if _, err := path.Match(g, ""); err != nil {
			v.errorf(v.src.at("toolSearch", "pinned", strconv.Itoa(i)), "a glob uses *, ? and [...] as in path.Match", "bad tool pattern %q", g)
		}
	}
	if e := ts.Embeddings; e != nil {
		if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.errorf(v.src.at("toolSearch", "embeddings", "url"), "the endpoint's base URL, such as http://127.0.0.1:11434/v1", "embeddings url %s is not an http(s) URL", v.src.shown(e.URL))
		}
		if e.Model == "" {
			v.errorf(v.src.at("toolSearch", "embeddings"), "name the embedding model, such as nomic-embed-text", "embeddings has no model")
		}
	}
}

func (v *checker) listing(mode string, p ...string) {
	switch mode {
	case "", ListingFull, ListingMinimal, ListingSearch:
	default:
		v.errorf(v.src.at(p...), `use "full", "minimal" or "search"`, "tool listing %s is not full, minimal or search", v.src.shown(mode))
	}
}

func (v *checker) tenants(c *Config) {
	for name, t := range c.Tenants {
		v.listing(t.ToolListing, "tenants", name, "toolListing")
		if !serverName.MatchString(name) {
			v.errorf(v.src.keyAt("tenants", name), "use 1 to 32 of a-z, 0-9 and '-', starting with a letter", "tenant name %q is not allowed", name)
		}
		for _, s := range t.Servers {
			if _, ok := c.Servers[s]; !ok && !(s == "tasks" && c.Builtins.Tasks) {
				v.errorf(v.src.at("tenants", name, "servers"), "name a server of mcpServers", "tenant %s names the server %q, which is not configured", name, s)
			}
		}
		for _, g := range append(append([]string(nil), t.Tools.Allow...), t.Tools.Deny...) {
			if _, err := path.Match(g, ""); err != nil {
				v.errorf(v.src.at("tenants", name, "tools"), "a glob uses *, ? and [...] as in path.Match", "tenant %s: bad tool pattern %q", name, g)
			}
		}
		if t.Limits != nil {
			v.limits(t.Limits, "tenants", name, "limits")
		}
		v.pins(t.Pins, v.src.at("tenants", name, "pins"))
		for s := range t.ClientFeatures {
			if _, ok := c.Servers[s]; !ok {
				v.errorf(v.src.keyAt("tenants", name, "clientFeatures", s), "name a server of mcpServers", "tenant %s sets clientFeatures for %q, which is not configured", name, s)
			}
		}
		for s, cr := range t.Credentials {
			srv := c.Servers[s]
			switch {
			case srv == nil:
				v.errorf(v.src.keyAt("tenants", name, "credentials", s), "name a server of mcpServers", "tenant %s has credentials for %q, which is not configured", name, s)
			case srv.Command != "" && (len(cr.Headers) > 0 || cr.BearerToken != ""):
				v.errorf(v.src.keyAt("tenants", name, "credentials", s), "a command server takes env; headers and bearerToken are for URL servers", "tenant %s: headers or bearerToken for the command server %q", name, s)
			case srv.Command == "" && len(cr.Env) > 0:
				v.errorf(v.src.keyAt("tenants", name, "credentials", s), "a URL or openapi server takes headers or bearerToken; env is for command servers", "tenant %s: env for the server %q, which is not a command", name, s)
			case srv.OpenAPI == nil && cr.SecuritySchemes != nil:
				v.errorf(v.src.keyAt("tenants", name, "credentials", s, "securitySchemes"), "securitySchemes are values for an openapi server's security schemes", "tenant %s: securitySchemes for %q, which is not an openapi server", name, s)
			}
			v.schemeValues(cr.SecuritySchemes, []string{"tenants", name, "credentials", s, "securitySchemes"})
		}
	}
}

// isDatabaseURL reports whether a database setting names a Postgres
// server rather than a SQLite file (the stores choose by this scheme).
func isDatabaseURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}
