// Command echo is the benchmark server built on mcpgate's library: one
// tool, echo, identical to the peers' (input {"text": string}, one text
// block back).
//
//	echo -stdio                     serve over stdin and stdout (default)
//	echo -http 127.0.0.1:18085      serve Streamable HTTP at /mcp (JSON replies)
//	echo -http 127.0.0.1:18085 -sse answer every request with an SSE stream
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=the text to echo back"`
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (path /mcp) instead of stdio")
	sse := flag.Bool("sse", false, "HTTP: answer every request with an SSE stream instead of JSON")
	flag.Bool("stdio", true, "serve over stdin and stdout (the default without -http)")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-mcpgate", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the input text"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult(in.Text), nil, nil
		})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := s.ServeStdio(ctx, nil); err != nil {
			log.Fatal(err)
		}
		return
	}
	h := mcphttp.NewHandler(s, &mcphttp.Options{StreamResponses: *sse})
	srv := &http.Server{Addr: *addr, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(sctx)
		srv.Shutdown(sctx)
	}()
	log.Printf("listening on http://%s/mcp", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}
