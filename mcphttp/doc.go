// Package mcphttp carries MCP over HTTP, both ends: a [Handler] that
// serves an [mcp.Server] and a [ClientTransport] that connects an
// [mcp.Client] to a server. Both speak the Streamable HTTP transport (one
// endpoint taking POST, GET and DELETE, with sessions and resumable SSE
// streams) and the older HTTP+SSE transport of 2024-11-05, and both
// protocol eras (see the mcp package).
//
// # Serving
//
// [NewHandler] returns an http.Handler for a server; mount it on a mux or
// serve it alone:
//
//	h := mcphttp.NewHandler(s, nil) // the endpoint is /mcp
//	srv := &http.Server{Addr: "127.0.0.1:8765", Handler: h}
//	go srv.ListenAndServe()
//	...
//	h.Shutdown(ctx) // ends the streams, which srv.Shutdown would wait on
//	srv.Shutdown(ctx)
//
// Each session-era client gets a session of its own (its Mcp-Session-Id),
// whose answers come back as plain JSON or, when a request sends
// progress, logs or requests of its own first, as an SSE stream that the
// client may resume with Last-Event-ID from the [EventStore]
// ([MemoryEventStore] by default). A 2026-07-28 request stands alone: no
// session, the routing headers (Mcp-Method, Mcp-Name) checked against the
// body. [Options.Stateless] serves session-era clients the same way, for
// replicas behind a load balancer; [Options.LegacySSE] adds the
// 2024-11-05 HTTP+SSE endpoints. [CloseSSEStream] lets a long-running
// handler end its response early; the client resumes to get the result.
//
// [Options] configure a [Handler]; the zero value is a good default for a
// server on a loopback address. It is secure by default: Host and Origin
// are checked against allowlists that start with the loopback names only
// ([Options.AllowedHosts], [Options.AllowedOrigins]: DNS-rebinding
// protection), sessions are bound to the principal that created them
// ([Options.Principal]), idle sessions expire, sessions are bounded in
// all and per caller, and bodies in size. Authentication is HTTP middleware around
// the Handler (see package [github.com/mcpgate/mcpgate/auth]); put
// [Handler.CheckHost] outside it, so that a foreign host is refused
// before credentials are asked for. [Options.Authorize] decides per
// JSON-RPC message, and rejects with a [*StatusError].
//
// # Connecting
//
// [ClientTransport] is an [mcp.Transport] to a server's endpoint:
//
//	c := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1.0.0"}, nil)
//	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: "http://127.0.0.1:8765/mcp"})
//
// Each message is a POST. A broken SSE answer is resumed with GET and
// Last-Event-ID ([ClientTransport.MaxRetries] times in a row with nothing
// new); a 404 for the session makes the client start a fresh one
// ([mcp.ErrSessionNotFound]); Close ends the session with DELETE. A server
// that refuses the first POST with 400, 404 or 405 is spoken to with the
// 2024-11-05 HTTP+SSE transport instead, unless
// [ClientTransport.DisableLegacyFallback]. The [mcp.Client] decides
// which era to speak, by probing with server/discover (see
// [mcp.ClientOptions.ProtocolVersion]).
//
// Credentials go in [ClientTransport.Header] (an API key) or in
// [ClientTransport.HTTPClient], whose RoundTripper may be an OAuth client
// such as [github.com/mcpgate/mcpgate/auth/oauthclient.Transport]. A
// server's answer outside 2xx fails the call with an [*HTTPError]; a
// request that got no answer at all, with a [*RequestError].
package mcphttp
