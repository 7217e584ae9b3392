// Package mcphttp serves an mcp.Server over HTTP: the Streamable HTTP
// transport (one endpoint taking POST, GET and DELETE, with sessions,
// resumable SSE streams and a stateless mode) and the older HTTP+SSE
// transport of 2024-11-05 clients.
//
// It is secure by default: Host and Origin are checked against allowlists
// that start with the loopback names only (DNS-rebinding protection),
// sessions are bound to the principal that created them, and idle
// sessions expire.
package mcphttp
