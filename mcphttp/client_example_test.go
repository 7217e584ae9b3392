package mcphttp_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type GreetArgs struct {
	Name string `json:"name"`
}

// A client of a server's Streamable HTTP endpoint; the same code talks to
// a 2024-11-05 HTTP+SSE server, to which the transport falls back.
func ExampleClientTransport() {
	// A server to talk to; usually it runs elsewhere.
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "greet", Description: "Say hello"},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetArgs) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult("Hello, " + in.Name + "!"), nil, nil
		})
	h := mcphttp.NewHandler(server, nil)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Shutdown(context.Background())

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, "greet", GreetArgs{Name: "Ada"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: Hello, Ada!
}
