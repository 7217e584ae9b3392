// Command echo is the benchmark server built on mcpgate's library: one
// tool, echo, identical to the peers' (input {"text": string}, one text
// block back).
package main

import (
	"context"
	"flag"
	"log"
	"os/signal"
	"syscall"

	"github.com/mcpgate/mcpgate/mcp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=the text to echo back"`
}

func main() {
	stdio := flag.Bool("stdio", true, "serve over stdin and stdout")
	flag.Parse()
	if !*stdio {
		log.Fatal("only -stdio is available")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-mcpgate", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the input text"},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult(in.Text), nil, nil
		})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := s.ServeStdio(ctx, nil); err != nil {
		log.Fatal(err)
	}
}
