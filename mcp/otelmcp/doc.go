// Package otelmcp instruments MCP clients and servers built on package
// mcp with OpenTelemetry, by the semantic conventions for MCP: a span
// per request, the trace context carried from client to server, and
// the operation-duration histograms. Package mcp does not import
// OpenTelemetry; a program that does not import this package links
// none of it.
//
// # Servers
//
// Add [ServerMiddleware] to [mcp.ServerOptions.Middleware]. Each
// request and notification gets a server span named
// "{mcp.method.name} {target}" (target is the tool's or prompt's name;
// a method without one is named alone), with mcp.method.name,
// mcp.session.id, mcp.protocol.version, jsonrpc.request.id,
// gen_ai.tool.name, gen_ai.prompt.name and mcp.resource.uri as they
// apply. The span continues the trace context in params._meta
// (traceparent, tracestate and baggage, as SEP-414 documents), so it
// works on every transport, stdio included. Over HTTP, wrap the handler
// in [HTTPHandler] so that a caller that sends only the W3C headers is
// continued too.
//
// # Clients
//
// Add [ClientMiddleware] to [mcp.ClientOptions.Middleware]. Each
// request gets a client span, a child of the span in the call's
// context, and carries the span's context in params._meta. Over HTTP,
// [Transport] sends it as W3C headers as well.
//
// # Errors
//
// A JSON-RPC error sets error.type and rpc.response.status_code to its
// code; a tools/call result with isError sets error.type to
// "tool_error"; a call whose deadline passed is "timeout", one
// cancelled "cancelled", and any other failure "_OTHER". Each sets the
// span's status to Error.
//
// # Metrics
//
// mcp.server.operation.duration and mcp.client.operation.duration are
// recorded in seconds, with the buckets the conventions recommend and
// only attributes of bounded cardinality (no ids, no URIs).
//
// # Arguments
//
// Arguments are never recorded unless [Options.RecordArguments] is set:
// a function of the caller's that returns the arguments redacted.
package otelmcp
