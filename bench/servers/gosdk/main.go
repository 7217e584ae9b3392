// Command gosdk is the benchmark's peer server on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), written the way its
// documentation shows: a typed tool handler registered with mcp.AddTool,
// the input schema inferred from the struct. One tool, echo (input
// {"text": string}, one text block back), as in every server of the suite.
//
//	gosdk                            serve over stdin and stdout
//	gosdk -http 127.0.0.1:18081      Streamable HTTP at /mcp (SSE replies, the SDK's default)
//	gosdk -http ADDR -json           JSON replies (StreamableHTTPOptions.JSONResponse)
//	gosdk -http ADDR -stateless      no sessions (StreamableHTTPOptions.Stateless): the
//	                                 mode in which the SDK serves 2026-07-28 requests
//	gosdk -tools 1000                register 1,000 tools: echo and tool_0001…tool_0999
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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo back"`
}

func echo(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (path /mcp) instead of stdio")
	jsonReplies := flag.Bool("json", false, "HTTP: answer with application/json instead of SSE")
	stateless := flag.Bool("stateless", false, "HTTP: serve without sessions")
	tools := flag.Int("tools", 1, "how many tools to register: echo, then tool_0001… (the same echo)")
	flag.Parse()

	s := mcp.NewServer(&mcp.Implementation{Name: "bench-gosdk", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the input text"}, echo)
	for i := 1; i < *tools; i++ {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: fmt.Sprintf("Filler tool %d: echo the input text", i)}, echo)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: *jsonReplies, Stateless: *stateless})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
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
