package interop

import (
	"testing"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// ourHTTPTransport is our client's Streamable HTTP transport.
func ourHTTPTransport(t *testing.T, url string) mcp.Transport {
	return &mcphttp.ClientTransport{Endpoint: url, Logger: testLogger(t)}
}
