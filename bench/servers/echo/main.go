// Command echo is the benchmark server built on mcpgate's library: one
// tool, echo, identical to the peers' (input {"text": string}, one text
// block back).
//
//	echo -stdio                     serve over stdin and stdout (default)
//	echo -http 127.0.0.1:18085      serve Streamable HTTP at /mcp (JSON replies);
//	                                2026-07-28 requests are served on the same endpoint
//	echo -http 127.0.0.1:18085 -sse answer every request with an SSE stream
//	echo -tools 1000                register 1,000 tools: echo and tool_0001…tool_0999
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=the text to echo back"`
}

func echo(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return mcp.TextResult(in.Text), nil, nil
}

func main() {
	addr := flag.String("http", "", "serve Streamable HTTP on this address (path /mcp) instead of stdio")
	sse := flag.Bool("sse", false, "HTTP: answer every request with an SSE stream instead of JSON")
	tools := flag.Int("tools", 1, "how many tools to register: echo, then tool_0001… (the same echo)")
	flag.Bool("stdio", true, "serve over stdin and stdout (the default without -http)")
	flag.Parse()
	// BENCH_CPUPROFILE=PREFIX writes a CPU profile of this process to
	// PREFIX.PID, to see where a phase's time goes.
	if p := os.Getenv("BENCH_CPUPROFILE"); p != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", p, os.Getpid()))
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-mcpgate", Version: "0.1.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the input text"}, echo)
	for i := 1; i < *tools; i++ {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool_%04d", i), Description: fmt.Sprintf("Filler tool %d: echo the input text", i)}, echo)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if *addr == "" {
		if err := s.ServeStdio(ctx, nil); err != nil {
			log.Fatal(err)
		}
		return
	}
	// The driver opens thousands of anonymous sessions from one address.
	h := mcphttp.NewHandler(s, &mcphttp.Options{StreamResponses: *sse, MaxSessionsPerPrincipal: 1 << 20})
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
