// Package mcp implements the Model Context Protocol (MCP): its types, a
// [Server] that serves tools, resources and prompts to any number of
// clients, a [Client] that connects to servers, and the stdio transport.
// The HTTP transports, both ends, are in package
// [github.com/mcpgate/mcpgate/mcphttp]; the JSON-RPC 2.0 layer underneath
// is package [github.com/mcpgate/mcpgate/jsonrpc].
//
// To get started, create a [Server] with [NewServer], register what it
// offers, and serve it on a transport; or create a [Client] with
// [NewClient] and [Client.Connect] it to a server through a [Transport].
// The programs under examples/ in the repository do both, and put a server
// behind the gateway.
//
// # Servers
//
// A [Server] holds the registered tools, resources and prompts and serves
// them to every session at once:
//
//	s := mcp.NewServer(&mcp.Implementation{Name: "demo", Version: "1.0.0"}, nil)
//	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello"}, greet)
//	s.AddResource(&mcp.Resource{URI: "demo://readme", Name: "readme"}, readme)
//	s.AddPrompt(&mcp.Prompt{Name: "review"}, review)
//	err := s.ServeStdio(ctx, nil)
//
// Tools are registered with the typed [AddTool] (see Typed tools below) or
// with [Server.AddTool] and a [ToolHandler] that decodes its own
// arguments; resources with [Server.AddResource] and, for a family of URIs,
// [Server.AddResourceTemplate]; prompts with [Server.AddPrompt]. What is
// registered may change while the server runs ([Server.UpdateTools],
// [Server.RemoveTools] and their kin): clients are sent list_changed
// notifications, once per kind for a group of changes held by
// [Server.HoldListChanged]. [Server.ResourceUpdated] tells the clients
// subscribed to a resource that it changed.
//
// [ServerOptions] configure a server; the zero value is a good default.
// Capabilities are declared from what is registered (and from
// [ServerOptions.HasTools] and its kin for a server whose items come
// later); [ServerOptions.Logging] and [ServerOptions.CompletionHandler]
// add logging and completion.
//
// A handler's context is cancelled when the client cancels the request or
// the session ends. Its request ([CallToolRequest], [ReadResourceRequest],
// [GetPromptRequest]) embeds a [Request], through which it reaches the
// client while it runs: [Request.NotifyProgress], [Request.Log],
// [Request.Elicit], [Request.CreateMessage] and [Request.ListRoots], each
// checked against what the client declared ([ErrCapabilityNotSupported]).
//
// Every inbound method, the protocol's and those added with
// [Server.HandleMethod], goes through one chain of [Middleware], functions
// of a [MethodHandler] to a [MethodHandler] given in
// [ServerOptions.Middleware] or [Server.AddMiddleware]. A middleware sees
// the [Request] and the method's result or error: the place for audit
// logs, metrics and policy. [ServerOptions.Filter] hides registered items
// from some callers, such as a gateway's tenants.
//
// Each client connection is a [ServerSession]. [Server.ServeStdio] and
// [Server.ServeConn] run one session on a stream; a transport that frames
// messages itself (as HTTP does) makes sessions with [Server.NewSession]
// and hands each message body to [ServerSession.Handle].
//
// # Typed tools
//
// [AddTool] registers a tool whose handler, a [ToolHandlerFor], takes its
// arguments as a Go value In and returns its structured result as a Go
// value Out:
//
//	type GreetIn struct {
//		Name     string `json:"name" jsonschema:"description=Who to greet"`
//		Language string `json:"language,omitempty" jsonschema:"enum=en,enum=fr,default=en"`
//	}
//	type GreetOut struct {
//		Greeting string `json:"greeting"`
//	}
//	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello"},
//		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (*mcp.CallToolResult, GreetOut, error) {
//			return nil, GreetOut{Greeting: "Hello, " + in.Name}, nil
//		})
//
// Unless [Tool.InputSchema] is set, the input schema (JSON Schema 2020-12)
// is inferred from In, which must be a struct, a map or any; unless
// [Tool.OutputSchema] is set, the output schema is inferred from Out when
// Out is not an interface type, and then Out must be a struct or a map
// (structured content is a JSON object). Use any as Out for a tool with
// no structured result. Struct tags shape the schemas:
//
//   - The json tag names a property, as in encoding/json, and json:"-"
//     leaves the field out. A field without omitempty or omitzero is
//     required. Arguments are decoded by the same names, matched exactly
//     (not case-insensitively), and members the struct does not name are
//     refused: an inferred object schema says additionalProperties false.
//   - The jsonschema tag is a comma-separated list of key=value pairs:
//     description, title, enum (once per value), default, example;
//     minimum, maximum, exclusiveMinimum, exclusiveMaximum and multipleOf
//     for numbers; minLength, maxLength, pattern and format for strings;
//     minItems, maxItems and uniqueItems for arrays. Three bare words may
//     appear too: required (required even with omitempty), nullable, and
//     "-", which leaves the field out of the schema. A comma inside a
//     value is written \\, in the tag (description=Short\\, clear). Text
//     that is not key=value, such as the bare description other SDKs
//     accept, is ignored.
//   - The jsonschema_description tag is a description that needs no
//     escaping; jsonschema_extras adds other keywords as key=value pairs.
//
// Before the handler runs, the arguments are checked against the input
// schema and the top-level defaults filled in; arguments the schema
// refuses never reach the handler, and the model gets an isError result
// naming each fault. Out becomes the result's structuredContent and, when
// the handler returned no content, its JSON text as well. Nested struct
// types are written inline; a recursive type gets $defs.
//
// # Clients
//
// A [Client] connects to servers on behalf of one application; each
// connection is a [ClientSession]:
//
//	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
//	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("my-server")})
//	if err != nil { ... }
//	defer cs.Close()
//	for tool, err := range cs.Tools(ctx) { ... }
//	res, err := cs.CallTool(ctx, "greet", map[string]any{"name": "Ada"})
//
// [CommandTransport] runs a server as a subprocess and speaks to it over
// its stdin and stdout; [github.com/mcpgate/mcpgate/mcphttp.ClientTransport]
// reaches a server's Streamable HTTP endpoint (and falls back to the
// 2024-11-05 HTTP+SSE transport); [ConnTransport] uses a [Conn] the caller
// already has, such as one end of a pipe to an in-process server.
//
// [ClientSession] has a method per request of the protocol
// ([ClientSession.ListTools], [ClientSession.CallTool],
// [ClientSession.ReadResource], [ClientSession.GetPrompt] ...), iterators
// over every page ([ClientSession.Tools] and its kin), and
// [ClientSession.Call] for any other method. A call whose context has no
// deadline is bounded by [ClientOptions.RequestTimeout]; a call that ends
// early sends notifications/cancelled. The server's requests and
// notifications go to the handlers in [ClientOptions], and each request
// handler that is set declares the matching client capability. Progress of
// one call goes to the callback of [WithProgress].
//
// The client chooses the protocol era by itself when
// [ClientOptions.ProtocolVersion] is empty: it probes with server/discover
// and speaks [Version20260728] to a server that answers, and initialize,
// offering [LatestNegotiatedVersion], to one that does not (an error, or
// silence for [ClientOptions.ProbeTimeout]). A [Transport] that names its
// server ([ServerKeyer]) lets the client remember the answer for the next
// connection. Setting [ClientOptions.ProtocolVersion] pins a revision and
// skips the probe; [ClientSession.ProtocolVersion] reports the one in use.
// A bare tool server, which answers tools/list and tools/call but not
// initialize, is detected and spoken to without the lifecycle
// ([ClientOptions.Bare], [ClientSession.Bare]).
//
// # Transports
//
// A transport carries whole JSON-RPC messages; the engine never sees
// bytes on a wire. Servers write through a [MessageWriter] (one method,
// WriteMessage, or a [MessageWriterFunc]); a [Conn] is a [MessageWriter]
// that also reads, the two directions of one stream. [NewStdioConn]
// makes a [Conn] of newline-delimited messages on any reader and writer,
// which is what [Server.ServeStdio] serves and [CommandTransport] connects
// to. Optional interfaces let a transport say more, in the manner of
// net/http: [ContextWriter] for writes that can be cancelled,
// [ReplyWriter] to tell the reply that ends a message body from the
// messages sent before it, [ProtocolVersionSetter] to learn the revision
// once it is negotiated. Stdio is the only transport here; package
// [github.com/mcpgate/mcpgate/mcphttp] serves a [Server] over HTTP and
// connects a [Client] to one.
//
// # Protocol eras
//
// MCP's revisions fall in two eras, and one [Server] serves both at once,
// message by message, on every transport:
//
//   - The session era, [Version20241105] to [Version20251125]
//     ([NegotiatedVersions]): the client sends initialize, the two agree on
//     a revision once ([LatestNegotiatedVersion] is the newest), and
//     everything after belongs to that session. The engine shapes every
//     result for the revision the session negotiated, leaving out what an
//     older client would not understand.
//   - The per-request era, from [Version20260728] ([PerRequestVersions]):
//     there is no initialize and no session. Every request names its
//     revision, the client's capabilities and the client in params._meta
//     ([MetaProtocolVersion], [MetaClientCapabilities], [MetaClientInfo]);
//     server/discover tells a client what the server offers, and
//     subscriptions/listen carries change notifications. Any message
//     whose _meta claims a revision is served this way, even an
//     initialize, even on a session that initialized before.
//
// Handlers are written once for both. A handler that needs the client (an
// answer from the user, a completion from its model, its roots) asks
// through [Request.Elicit], [Request.CreateMessage] or [Request.ListRoots]
// in either era: in a session they are requests to the client, and the
// handler waits for the answer; in a per-request call the engine answers
// the call with the questions (input_required), and runs the handler
// again, from the start, when the client calls again with the answers.
// Handlers that ask must therefore do their side effects after the
// answers are in. [Request.RequireInput] and [InputAs] ask for
// several inputs at once. [Versions] lists every revision spoken, for
// people to read.
//
// # Tasks
//
// A long tool call may run as a task: the client gets a task at once and
// polls it for the result. A tool opts in with [Tool.Execution] (a
// [ToolExecution] whose TaskSupport is [TaskSupportOptional] or
// [TaskSupportRequired]); its handler is the same as for a direct call. A
// 2025-11-25 session asks for a task with params.task and uses tasks/get,
// tasks/result, tasks/list and tasks/cancel; a per-request client that
// declares the [ExtensionTasks] extension gets a task once the call has
// run for [Tool.TaskAfter] (at once by default), and answers the handler's
// questions with tasks/update. [ServerOptions.Tasks] ([TaskOptions]) sets
// how long tasks are kept and how many one caller may run. Tasks live in
// the server's memory, bound to the caller's principal ([WithPrincipal]);
// [TaskIDFrom] tells a handler the task it runs in. On the client,
// [ClientSession.CallToolAsTask] runs a call as a task and waits for its
// result.
//
// # Errors
//
// A tool reports a failure the model should see as an isError result:
// [ErrorResult] makes one, and any error a [ToolHandler] returns becomes
// one carrying its text. Other handlers' errors are JSON-RPC errors: a
// [*jsonrpc.Error] is sent as it is (see [jsonrpc.Errorf]), a resource
// handler returns [ResourceNotFoundError] for a URI it does not know, and
// any other error is sent as an internal error. A panic in a handler
// becomes an internal error too, and the session goes on.
//
// On the client, a JSON-RPC error from the server is a [*CallError],
// which wraps the [*jsonrpc.Error] (errors.As finds either). A call the
// server did not declare support for fails with [ErrNotSupported] before
// anything is sent. When the server exits or the network fails, the
// session ends: calls in flight fail, and [ClientSession.Err] says why
// ([ErrConnectionClosed], with a subprocess's exit status and last lines
// of stderr). After [ClientSession.Close], calls fail with
// [ErrSessionClosed]. An answer over the size limit fails only its own
// call, with a [*MessageTooLargeError], and the session goes on.
package mcp
