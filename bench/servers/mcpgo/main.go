// Command mcpgo is the benchmark's peer server on mcp-go
// (github.com/mark3labs/mcp-go), written the way its documentation shows:
// a tool built with option functions, an untyped handler reading its
// argument with RequireString. One tool, echo (input {"text": string},
// one text block back), as in every server of the suite.
//
//	mcpgo                            serve over stdin and stdout (server.ServeStdio)
//	mcpgo -http 127.0.0.1:18083      Streamable HTTP at /mcp (JSON replies, its default;
//	                                 it has no option to answer with SSE)
//	mcpgo -http ADDR -stateless      no sessions (server.WithStateLess)
//	mcpgo -tools 1000                register 1,000 tools: echo and tool_0001…tool_0999
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func echo(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	text, err := req.RequireString("text")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText(text), nil
}

func tool(name, description string) mcp.Tool {
	return mcp.NewTool(name,
		mcp.WithDescription(description),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo back")),
	)
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (path /mcp) instead of stdio")
	stateless := flag.Bool("stateless", false, "HTTP: serve without sessions")
	tools := flag.Int("tools", 1, "how many tools to register: echo, then tool_0001… (the same echo)")
	flag.Parse()

	s := server.NewMCPServer("bench-mcpgo", "0.1.0", server.WithToolCapabilities(false))
	s.AddTool(tool("echo", "Echo the input text"), echo)
	for i := 1; i < *tools; i++ {
		s.AddTool(tool(fmt.Sprintf("tool_%04d", i), fmt.Sprintf("Filler tool %d: echo the input text", i)), echo)
	}
	if *addr == "" {
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
		return
	}
	var opts []server.StreamableHTTPOption
	if *stateless {
		opts = append(opts, server.WithStateLess(true))
	}
	h := server.NewStreamableHTTPServer(s, opts...)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
