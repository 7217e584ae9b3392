package config

import "time"

// Config is the whole file, after ${VAR} interpolation and defaults.
type Config struct {
	// Listen is the HTTP address of the gateway's endpoint. Empty means
	// the serve command's --addr (127.0.0.1:8765).
	Listen string `json:"listen,omitempty"`
	// Separator joins a server's name and its tools' and prompts' names:
	// "github" + "_" + "create_issue". Default "_".
	Separator string `json:"separator,omitempty"`
	// MaxConcurrentStarts bounds the command (stdio) servers starting at
	// once, so that a large configuration does not start every process
	// together and time them out on a shared CPU. Default: the number of
	// CPUs, at least 2.
	MaxConcurrentStarts int `json:"maxConcurrentStarts,omitempty"`
	// StartWindow bounds how long the first lists of clients wait, at
	// start, for every server to be listed or to fail. Default 5s.
	StartWindow Duration `json:"startWindow,omitempty"`
	// Builtins enables the built-in tools alongside the upstreams.
	Builtins Builtins `json:"builtins,omitempty"`
	// Servers are the upstreams, by name (the mcpServers map; "servers",
	// VS Code's name for it, is accepted too). A name is 1 to 32 of
	// a-z, 0-9 and '-', starting with a letter.
	Servers map[string]*Server `json:"mcpServers"`
	// Defaults apply to every server that does not set its own.
	Defaults ServerOptions `json:"defaults,omitempty"`
	// Limits bound each caller's tool calls.
	Limits Limits `json:"limits,omitempty"`
	// Audit keeps a log of tool calls in SQLite or Postgres.
	Audit Audit `json:"audit,omitempty"`
	// Tenants partition the gateway among groups of callers (over HTTP,
	// by authenticated principal). Once any is configured, a caller that
	// belongs to none sees nothing.
	Tenants map[string]*Tenant `json:"tenants,omitempty"`
	// ToolSearch configures tool search and how tools are listed.
	ToolSearch ToolSearch `json:"toolSearch,omitempty"`
	// State is where the gateway keeps what it learns as it runs: the
	// pins of tool definitions.
	State State `json:"state,omitempty"`
	// Cluster shares the gateway's state with its other replicas, in
	// Redis, so that any replica behind a load balancer serves any
	// request. A reload does not change it.
	Cluster Cluster `json:"cluster,omitempty"`

	// Warnings are what Parse tolerated but a person may want to know:
	// other clients' keys that mcpgate ignores, VS Code's inputs, unset
	// variables in disabled servers.
	Warnings []*Diagnostic `json:"-"`

	// src remembers where values came from, so that Validate can point at
	// them and Redacted can hide what came from the environment.
	src *source
}

// Builtins are the gateway's own tools.
type Builtins struct {
	// Tasks serves the task store's tools under the name "tasks".
	Tasks bool `json:"tasks,omitempty"`
	// TasksDB is the task store's database: a SQLite file, or a
	// postgres:// URL of a Postgres database that replicas share (""
	// = the default place).
	TasksDB string `json:"tasksDb,omitempty"`
}

// Server is one upstream. Command (stdio) and URL (HTTP) are exclusive.
type Server struct {
	// Name is the key in the mcpServers map (set by the loader).
	Name string `json:"-"`

	// stdio: the command, its arguments, extra environment and working
	// directory.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// HTTP: the endpoint and the transport: "http" / "streamable-http"
	// (Streamable HTTP, falling back to SSE), "sse" (the 2024-11-05
	// HTTP+SSE transport only). Type "stdio" is accepted with Command.
	URL     string            `json:"url,omitempty"`
	Type    string            `json:"type,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// BearerToken is sent as Authorization: Bearer on the upstream hop.
	BearerToken string `json:"bearerToken,omitempty"`
	// OAuth gets upstream tokens with the library's OAuth client.
	OAuth *OAuth `json:"oauth,omitempty"`

	// OpenAPI makes a REST API described by OpenAPI the server: each of
	// its operations a tool, called over HTTP with the credentials of
	// Headers or BearerToken.
	OpenAPI *OpenAPI `json:"openapi,omitempty"`

	// Protocol is what the server speaks: "mcp" (MCP; a server that fails
	// initialize fails to start) or "bare" (a bare tool server: it
	// answers tools/list and tools/call but not initialize, so none is
	// sent; a tool's value becomes the result's structured content).
	// Unset, it is MCP, or bare when the server answers initialize with
	// -32601 (Method not found) and then answers tools/list.
	Protocol string `json:"protocol,omitempty"`

	// Disabled servers are kept in the file but not started.
	Disabled bool `json:"disabled,omitempty"`

	ServerOptions

	// Tools shapes what the server's tools look like through the gateway.
	Tools ToolPolicy `json:"tools,omitempty"`
}

// OpenAPI describes a REST API upstream (see package openapi for how
// operations map to tools).
type OpenAPI struct {
	// Spec is the description: a file path (a relative one from the
	// gateway's working directory) or an http(s) URL. OpenAPI 3.0, 3.1
	// or Swagger 2.0, in JSON or YAML.
	Spec string `json:"spec"`
	// BaseURL is where calls go, over the description's first server.
	// Calls never go anywhere else: no argument can change the scheme,
	// host, port or base path.
	BaseURL string `json:"baseUrl,omitempty"`
	// Include keeps only the operations a glob matches (path.Match
	// syntax, on operationId, tool name or tag).
	Include []string `json:"include,omitempty"`
	// Exclude drops the operations a glob matches, after Include.
	Exclude []string `json:"exclude,omitempty"`
	// AllowRemoteRefs lets the description's $refs fetch documents over
	// http(s); a description read from a URL needs it for its own
	// relative $refs.
	AllowRemoteRefs bool `json:"allowRemoteRefs,omitempty"`
	// NoOutputSchema leaves the output schemas out of the listing, to
	// keep a large API's small.
	NoOutputSchema bool `json:"noOutputSchema,omitempty"`
	// MaxResponseBytes bounds an answer's body. Default 10 MiB.
	MaxResponseBytes int `json:"maxResponseBytes,omitempty"`
	// SecuritySchemes are values for the description's security schemes,
	// by scheme name: an apiKey's key (sent in the header, query or
	// cookie the scheme names), an http bearer scheme's token, an http
	// basic scheme's "user:password". Each call sends those of the first
	// of its operation's security alternatives that they all cover.
	SecuritySchemes map[string]string `json:"securitySchemes,omitempty"`
}

// ServerOptions are the per-server knobs that Defaults can set for all.
type ServerOptions struct {
	// Start is "lazy" (on the first request that needs it; the default for
	// stdio) or "eager" (at load; the default for HTTP). The gateway
	// always connects once at load to learn the tools, then a lazy stdio
	// server is stopped until needed.
	Start string `json:"start,omitempty"`
	// IdleTimeout stops a stdio server unused for this long (0 = never).
	IdleTimeout Duration `json:"idleTimeout,omitempty"`
	// Timeout bounds one request to the server. Default 30s.
	Timeout Duration `json:"timeout,omitempty"`
	// StartTimeout bounds connecting to the server and listing what it
	// offers, apart from Timeout: a cold start (npx installing the
	// package) takes longer than a call. Default 2m.
	StartTimeout Duration `json:"startTimeout,omitempty"`
	// MaxConcurrency bounds the requests in flight to the server.
	// Default 32.
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// ProtocolVersion pins the revision spoken to the server ("" or
	// "auto": probe with server/discover, then initialize).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// HealthInterval is how often an idle connection is checked (ping, or
	// discover for 2026-07-28). Default 30s; negative disables.
	HealthInterval Duration `json:"healthInterval,omitempty"`
	// ClientFeatures are what the server may ask of the user's client
	// through the gateway. Unset ones take the defaults' setting, then
	// the gateway's: elicitation on, sampling and roots off.
	ClientFeatures ClientFeatures `json:"clientFeatures,omitempty"`
	// MaxListItems bounds the items of each kind (tools, prompts,
	// resources, templates) read from the server in one listing; past it
	// the listing fails. Default 50000.
	MaxListItems int `json:"maxListItems,omitempty"`
	// MaxListBytes bounds the encoded size of each kind's items in one
	// listing. Default 64 MiB.
	MaxListBytes int `json:"maxListBytes,omitempty"`
	// Required makes the gateway not ready (/readyz 503) while this server
	// is not: for servers without which the gateway is of no use. Others
	// going down leave the gateway ready; their state is in mcpgate
	// status.
	Required bool `json:"required,omitempty"`
	// Pins is what the gateway does when a tool's definition differs from
	// the one it pinned when it first saw the tool: "warn" (publish the
	// change, log and audit it; the default), "block" (keep serving the
	// pinned definition and refuse calls until the change is approved)
	// or "approve" (withhold the tool until the change is approved).
	Pins string `json:"pins,omitempty"`
	// Instances is how many processes (for a URL, upstream sessions) of
	// the server serve its callers: "shared" (one for all), "tenant"
	// (one for each tenant, with its credentials if it has any; needs
	// tenants) or "session" (one for each client session, started by the
	// session's first request to the server and stopped when the session
	// ends, or when unused for idleTimeout, 10m if that is unset; a stdio
	// gateway's client is one session, and a client without sessions,
	// 2026-07-28 or stateless HTTP, gets one for each request). A session
	// server is listed by an instance of its own (a lazy one stops once
	// listed). Write ${MCPGATE_INSTANCE_DIR} (a private directory made
	// for the instance, removed when it stops) or ${MCPGATE_INSTANCE_ID}
	// in args, env or cwd to give each instance its own state. Default
	// "shared".
	Instances string `json:"instances,omitempty"`
	// MaxInstances bounds a session server's running instances; a
	// request that would start one more is refused with -32015. Default
	// 16.
	MaxInstances int `json:"maxInstances,omitempty"`
	// MaxInstancesPerPrincipal bounds a session server's instances for
	// one caller (its sessions together; anonymous callers are one
	// caller); past it the caller is refused with -32015. Default 4.
	MaxInstancesPerPrincipal int `json:"maxInstancesPerPrincipal,omitempty"`
}

// ClientFeatures grant a server the client's features: nil means unset.
type ClientFeatures struct {
	// Sampling lets the server ask the user's model for completions.
	Sampling *bool `json:"sampling,omitempty"`
	// Elicitation lets the server ask the user questions (forms, and
	// https links for URL-mode).
	Elicitation *bool `json:"elicitation,omitempty"`
	// Roots lets the server learn the client's filesystem roots.
	Roots *bool `json:"roots,omitempty"`
}

// Over returns c with each feature c leaves unset taken from d.
func (c ClientFeatures) Over(d ClientFeatures) ClientFeatures {
	pick := func(a, b *bool) *bool {
		if a != nil {
			return a
		}
		return b
	}
	return ClientFeatures{Sampling: pick(c.Sampling, d.Sampling), Elicitation: pick(c.Elicitation, d.Elicitation), Roots: pick(c.Roots, d.Roots)}
}

// Granted reports the features in effect: a set one as set, and by
// default elicitation on, sampling and roots off.
func (c ClientFeatures) Granted() (sampling, elicitation, roots bool) {
	val := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	return val(c.Sampling, false), val(c.Elicitation, true), val(c.Roots, false)
}

// Pin policies ([ServerOptions.Pins]).
const (
	PinsWarn    = "warn"
	PinsBlock   = "block"
	PinsApprove = "approve"
)

// OAuth configures the library's OAuth client for an HTTP upstream.
type OAuth struct {
	// Grant is "client_credentials" or "authorization_code" (tokens
	// obtained once with `mcpgate login SERVER`, refreshed after).
	Grant        string   `json:"grant,omitempty"`
	ClientID     string   `json:"clientId,omitempty"`
	ClientSecret string   `json:"clientSecret,omitempty"`
	Scopes       []string `json:"scopes,omitempty"`
	// TokenURL is the token endpoint of an openapi server, over the one
	// its description declares (an oauth2 scheme's flow for the grant).
	// An MCP server's is found by discovery.
	TokenURL string `json:"tokenUrl,omitempty"`
	// AuthorizationURL is the authorization endpoint of an openapi
	// server's authorization_code grant, over the one its description
	// declares (an oauth2 scheme's authorizationCode flow).
	AuthorizationURL string `json:"authorizationUrl,omitempty"`
	// AllowPrivateNetworks lets the OAuth client reach an authorization
	// server at a private address (RFC 1918 and the like) for a server
	// that is not itself at one, as an internal deployment's names
	// resolve. Loopback and link-local (cloud metadata) stay refused.
	AllowPrivateNetworks bool `json:"allowPrivateNetworks,omitempty"`
}

// ToolPolicy filters and decorates a server's tools.
type ToolPolicy struct {
	// Allow and Deny are glob patterns (path.Match syntax) on the
	// upstream's tool names; a tool is kept when it matches some Allow
	// (or Allow is empty) and no Deny.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Rename maps an upstream name to the name after the prefix.
	Rename map[string]string `json:"rename,omitempty"`
	// Descriptions override upstream descriptions.
	Descriptions map[string]string `json:"descriptions,omitempty"`
	// Meta is published on the tool under _meta["io.mcpgate/tool"]:
	// category, rate limits, scopes, related tools, any JSON object.
	Meta map[string]map[string]any `json:"meta,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("30s",
// "5m") or a number of seconds.
type Duration time.Duration

// D returns the duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// Transport is "stdio" for a command, "sse" for the 2024-11-05 HTTP+SSE
// transport, and "http" for any other URL: the one switch the gateway
// needs, whatever name the file used.
func (s *Server) Transport() string {
	switch {
	case s.Command != "":
		return "stdio"
	case s.Type == "sse":
		return "sse"
	default:
		return "http"
	}
}

// Limits bound each caller's (principal's) tool calls; a call over a
// limit is refused with -32001 and the time to wait.
type Limits struct {
	// Calls is the rate of all of a caller's tool calls together.
	Calls Rate `json:"calls,omitempty"`
	// Tools are rates per published tool name (github_create_issue).
	Tools map[string]Rate `json:"tools,omitempty"`
	// Concurrent bounds a caller's calls in flight (0 = no bound). With
	// a cluster the rates hold across the replicas, but each replica
	// counts the calls in flight on it.
	Concurrent int `json:"concurrent,omitempty"`
	// Sampling is the rate of sampling requests (an upstream asking the
	// user's model for a completion) relayed for one caller, and, apart,
	// for one server. Default: no limit beyond the concurrency bound.
	Sampling Rate `json:"sampling,omitempty"`
	// SubscriptionsPerSession bounds the resources one client session
	// may subscribe to. Default 100.
	SubscriptionsPerSession int `json:"subscriptionsPerSession,omitempty"`
	// InputWindow is how long a call whose upstream asked a 2026-07-28
	// client for input (input_required) waits for the client's answer
	// before it is cancelled upstream. Default 5m. Gateway-wide only:
	// not in a tenant's limits, and a reload does not change it.
	InputWindow Duration `json:"inputWindow,omitempty"`
}

// Rate is a token bucket: PerMinute calls a minute on average, Burst at
// once (default: PerMinute/10, at least 1). Zero PerMinute is no limit.
type Rate struct {
	PerMinute int `json:"perMinute,omitempty"`
	Burst     int `json:"burst,omitempty"`
}

// Audit configures the audit log of tool calls.
type Audit struct {
	// DB is the audit log's database: a SQLite file, or a postgres://
	// URL of a Postgres database that replicas share ("" = no audit
	// log).
	DB string `json:"db,omitempty"`
	// Retention is how long records are kept. Default 30 days.
	Retention Duration `json:"retention,omitempty"`
}

// State configures the gateway's state database.
type State struct {
	// DB is the database of the tool-definition pins, shared with
	// `mcpgate pins`: a SQLite file, or a postgres:// URL of a Postgres
	// database that replicas share. Empty means the default place:
	// $MCPGATE_STATE_DB, else state.db beside the task store's default
	// file. A reload does not change it.
	DB string `json:"db,omitempty"`
}

// Cluster configures the state the gateway shares with its other
// replicas. Without it, the gateway holds its state alone.
type Cluster struct {
	// Redis is the server the replicas share,
	// redis://[user:password@]host:port/db or rediss:// for TLS. Empty
	// means this process holds its state alone. The serve command's
	// --redis and MCPGATE_REDIS_URL come before it.
	Redis string `json:"redis,omitempty"`
	// ReplicaID names this replica in logs and metrics. Default: the
	// host name and the process id, "host-1234". The serve command's
	// --replica-id and MCPGATE_REPLICA_ID come before it.
	ReplicaID string `json:"replicaId,omitempty"`
}

// Tenant is a group of callers with what they may see and how fast.
type Tenant struct {
	// Principals are its members, by principal ID ("apikey:NAME",
	// "basic:USER", "oauth:SUB"); a token whose "tenant" claim names the
	// tenant is a member too.
	Principals []string `json:"principals,omitempty"`
	// Delegates may act for the tenant by naming it in X-Tenant-ID.
	Delegates []string `json:"delegates,omitempty"`
	// Servers are the upstreams whose items it sees (empty = all).
	Servers []string `json:"servers,omitempty"`
	// Tools filters the published tool names it sees and calls (globs).
	Tools ToolFilter `json:"tools,omitempty"`
	// Limits replace the top-level limits for its callers.
	Limits *Limits `json:"limits,omitempty"`
	// Credentials override a server's env, headers or bearer token for
	// this tenant's calls, by server name: the gateway runs a connection
	// (for stdio, a process) of the server of its own for the tenant.
	Credentials map[string]*Credentials `json:"credentials,omitempty"`
	// ToolListing, when set, is how tools/list shows tools to this
	// tenant, over the toolSearch section's choice.
	ToolListing string `json:"toolListing,omitempty"`
	// ClientFeatures, by server name, replace what the server's own
	// clientFeatures grant when it serves this tenant's callers.
	ClientFeatures map[string]*ClientFeatures `json:"clientFeatures,omitempty"`
	// Pins, when set, is this tenant's pin policy for every server, over
	// the servers' own when it is stricter (approve over block over warn).
	Pins string `json:"pins,omitempty"`
}

// Tool listing modes: how tools/list shows a server's tools.
const (
	// ListingFull lists every tool with its full definition.
	ListingFull = "full"
	// ListingMinimal lists names and one-line descriptions; the schema
	// comes on demand (tools/getSchema, or describe_tool).
	ListingMinimal = "minimal"
	// ListingSearch lists only pinned tools and the meta-tools
	// search_tools, describe_tool and call_tool.
	ListingSearch = "search"
)

// ToolSearch configures the gateway's tool search.
type ToolSearch struct {
	// Listing is the mode of every server without its own: full (the
	// default), minimal or search.
	Listing string `json:"listing,omitempty"`
	// Servers sets the mode of single servers.
	Servers map[string]string `json:"servers,omitempty"`
	// Pinned are published tool names (globs) listed in full even where
	// their server is in search mode.
	Pinned []string `json:"pinned,omitempty"`
	// Embeddings, when set, adds dense retrieval from an OpenAI-style
	// /v1/embeddings endpoint, fused with BM25.
	Embeddings *Embeddings `json:"embeddings,omitempty"`
	// Learn says whether search learns from use: a search_tools result
	// followed within 10 minutes by the same caller's successful call of
	// one of its tools raises that tool for the same words in the
	// tenant's later searches. What it learns fades by half each week
	// and is kept in this process's memory only. Default true.
	Learn *bool `json:"learn,omitempty"`
}

// Learns reports whether search learns from use: Learn, true when unset.
func (t *ToolSearch) Learns() bool { return t.Learn == nil || *t.Learn }

// Embeddings name an OpenAI-compatible embeddings endpoint (Ollama, vLLM,
// TEI, OpenAI).
type Embeddings struct {
	URL    string `json:"url"`
	Model  string `json:"model"`
	APIKey string `json:"apiKey,omitempty"`
	// Cache is the SQLite file of vectors; empty means none (vectors are
	// computed again at each start).
	Cache string `json:"cache,omitempty"`
}

// Credentials replace or add to a server's secrets for one tenant.
type Credentials struct {
	Env         map[string]string `json:"env,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	BearerToken string            `json:"bearerToken,omitempty"`
	// SecuritySchemes replace or add to an openapi server's
	// openapi.securitySchemes values, by scheme name.
	SecuritySchemes map[string]string `json:"securitySchemes,omitempty"`
}

// ToolFilter is an allow and a deny list of glob patterns.
type ToolFilter struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}
