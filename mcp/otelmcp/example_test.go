package otelmcp_test

import (
	"net/http"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcp/otelmcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// A server and a client instrumented with the global providers, which
// a program sets up once (otel.SetTracerProvider and the like).
func Example() {
	s := mcp.NewServer(&mcp.Implementation{Name: "server", Version: "1"}, &mcp.ServerOptions{
		Middleware: []mcp.Middleware{otelmcp.ServerMiddleware(nil)},
	})
	// Over HTTP the W3C headers are read too.
	mux := http.NewServeMux()
	mux.Handle("/mcp", otelmcp.HTTPHandler(mcphttp.NewHandler(s, nil), nil))

	c := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "1"}, &mcp.ClientOptions{
		Middleware: []mcp.ClientMiddleware{otelmcp.ClientMiddleware(nil)},
	})
	_ = &mcphttp.ClientTransport{
		Endpoint:   "http://127.0.0.1:8765/mcp",
		HTTPClient: &http.Client{Transport: otelmcp.Transport(nil, nil)},
	}
	_ = c
	// Output:
}
