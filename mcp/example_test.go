package mcp_test

import (
	"context"
	"fmt"

	"github.com/mcpgate/mcpgate/mcp"
)

type GreetIn struct {
	Name string `json:"name" jsonschema:"description=Who to greet"`
}

type GreetOut struct {
	Greeting string `json:"greeting"`
}

// A typed tool: the input and output schemas come from GreetIn and
// GreetOut, and arguments are validated before the handler runs.
func ExampleAddTool() {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Say hello to someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in GreetIn) (*mcp.CallToolResult, GreetOut, error) {
			return nil, GreetOut{Greeting: "Hello, " + in.Name + "!"}, nil
		})

	// Drive one session by hand; a transport such as ServeStdio does this.
	print := mcp.MessageWriterFunc(func(msg []byte) error { fmt.Println(string(msg)); return nil })
	ss := s.NewSession(print, nil)
	ctx := context.Background()
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`), print)
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), print)
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`), print)
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{}}}`), print)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"greeter","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"greeting\":\"Hello, Ada!\"}"}],"structuredContent":{"greeting":"Hello, Ada!"}}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Invalid arguments for tool \"greet\": missing property 'name'"}],"isError":true}}
}

// Middleware sees every method, with its result or error: here, a simple
// audit line per tool call.
func ExampleMiddleware() {
	audit := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, req *mcp.Request) (any, error) {
			res, err := next(ctx, req)
			if req.Method == "tools/call" {
				fmt.Printf("audit: %s %s err=%v\n", req.Method, req.RawParams, err)
			}
			return res, err
		}
	}
	s := mcp.NewServer(nil, &mcp.ServerOptions{Middleware: []mcp.Middleware{audit}, HasTools: true})
	quiet := mcp.MessageWriterFunc(func([]byte) error { return nil })
	ss := s.NewSession(quiet, nil)
	ctx := context.Background()
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`), quiet)
	ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"missing"}}`), quiet)
	// Output:
	// audit: tools/call {"name":"missing"} err=jsonrpc error -32602: Invalid params: unknown tool "missing"; call tools/list to see the available tools
}
