package httpmeta

import "github.com/mcpgate/mcpgate/jsonrpc"

// Server is what the HTTP transport asks of an mcp.Server before it runs
// a 2026-07-28 request, so that a refusal gets its HTTP status (404 for a
// method the server lacks, 400 for the rest) instead of 200.
type Server interface {
	// CheckPerRequest validates a 2026-07-28 request before it runs: the
	// _meta keys the revision requires, the revision itself, and that the
	// method exists in this era. The engine checks again when the
	// request runs.
	CheckPerRequest(method string, params []byte) *jsonrpc.Error
	// ParamHeaders returns the x-mcp-header annotations of a tool's
	// input schema; nil when the tool is unknown or has none.
	ParamHeaders(tool string) []ParamHeader
}

// A ServerTaker is a MessageWriter that wants its server's [Server]: an
// mcp.Server's NewSession hands it over to the writer it is given, before
// the session reads any message. The interface is internal, so no writer
// outside this module can ask for it.
type ServerTaker interface {
	TakeServer(Server)
}
