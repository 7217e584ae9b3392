// Package httpmeta holds what package mcp and its HTTP transport, package
// mcphttp, share beyond the public API: whether a message claims the
// 2026-07-28 revision in params._meta ([PerRequestClaim]), the values of
// the MCP headers (Mcp-Name, Mcp-Param-*: [EncodeValue], [DecodeValue])
// and the x-mcp-header annotations behind them ([ParamHeader]), the
// headers a client call asks its transport to send ([CallHeaders]), and
// the lookups the HTTP transport makes on a server before it runs a
// 2026-07-28 request ([Server]).
//
// None of it is protocol a library user needs: it lives here so that mcp
// does not export plumbing that only mcphttp calls.
package httpmeta
