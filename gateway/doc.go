// Package gateway puts many MCP servers behind one: each configured
// upstream (a command over stdio, a URL over Streamable HTTP or HTTP+SSE)
// is supervised by the library's client, and its tools, prompts and
// resources are published, prefixed with the server's name, by one library
// server that any transport can serve, in either protocol era.
//
// # Embedding
//
// The mcpgate command is one user of this package; a program can embed the
// gateway the same way. Read a configuration with package
// [github.com/mcpgate/mcpgate/gateway/config], build the gateway with
// [New], connect the upstreams with [Gateway.Start], and serve
// [Gateway.Server] on any transport:
//
//	cfg, err := config.Parse([]byte(`{"mcpServers": {"files": {"command": "files-server"}}}`), "gateway.json", os.LookupEnv)
//	g, err := gateway.New(cfg, nil)
//	g.Start(ctx)
//	defer g.Close()
//	http.Serve(ln, mcphttp.NewHandler(g.Server(), nil)) // or g.Server().ServeStdio(ctx, nil)
//
// The tool "read" of the server "files" is then published as "files_read"
// (the separator is configurable). [Gateway.Start] returns at once; a
// client's first lists wait, up to [Options.StartWindow], for every
// upstream to be listed or to fail. [Options] configure the rest (logger,
// limits, audit, metrics, built-in servers run in the process, where pins
// and OAuth tokens are kept); the zero value is a good default.
//
// # Running
//
// [Gateway.Reload] applies a new configuration without dropping sessions:
// upstreams added are started, those removed stopped, those changed
// restarted, the rest untouched. [Gateway.Status] reports each upstream's
// state ([UpstreamStatus]) and [Gateway.Retry] restarts one that failed.
// [Gateway.OpsHandler] serves metrics, health and readiness and the admin
// API, for a listener of its own, behind [AdminAuth].
//
// Each upstream is supervised by failure class: a stdio server that stops
// answering is killed and started again, a failed HTTP connection is
// retried where that cannot run a request twice, a server that limits its
// rate is left alone for the time it asked, and one that refuses the
// gateway's credentials is not tried again until its settings change, an
// operator retries it or a person signs in again. A stateful server may
// run one instance per tenant or per session
// ([config.ServerOptions.Instances]).
//
// # What clients see
//
// Every request passes one policy point before any handler runs: its
// method must have a rule, and what it names (a tool, prompt or resource)
// is resolved through the caller's view. Over HTTP,
// [Gateway.TenantMiddleware] and [PrincipalWithTenant] bind each caller to
// a tenant, which decides the servers and tools it sees and its [Limits];
// over stdio, [WithTenant] names the tenant of the one local user.
//
// Tool definitions are pinned (package
// [github.com/mcpgate/mcpgate/gateway/pins]): a definition that changes
// upstream is published, held or withheld by the server's pin policy until
// an operator approves it ([Gateway.ApprovePins]). Tool search indexes
// every published tool: clients that know the [ExtensionToolSearch]
// extension call [MethodDiscover] and its kin, and standard clients may be
// given three meta-tools ([MetaSearchTools] ...) instead of the whole
// list. An [Audit] log records every request that reaches an upstream.
//
// What an upstream asks of the client (sampling, elicitation, roots) is
// relayed to the downstream client whose call it serves, if the operator
// granted that server the feature: as a request on the call's stream to a
// session-era client, and as input_required to a 2026-07-28 client, whose
// next request brings the answer back to the waiting upstream (within
// [Options.InputWindow]).
package gateway
