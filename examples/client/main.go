// Command client connects to an MCP server, lists its tools and calls one:
// the smallest complete client built with package mcp.
//
// The server is a command after "--", started as a subprocess and spoken
// to over its standard input and output, or the URL of a Streamable HTTP
// endpoint. Without either, it starts the typed-server example with go run.
//
//	go run ./examples/client -tool convert_temperature -args '{"value":100,"from":"celsius","to":"fahrenheit"}' -- go run ./examples/typed-server
//	go run ./examples/client -tool count_words -args '{"text":"one two three"}' http://127.0.0.1:8765/mcp
//
// The client chooses the protocol era itself: it asks server/discover and
// speaks 2026-07-28 to a server that answers, and initialize to one that
// does not. -protocol pins a revision instead, such as 2025-11-25.
//
// It prints the server's name and revision, its tools, and the call's
// result (its text, and its structured content when there is some). A
// tool that reports an error makes the client exit with status 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// defaultServer is what the client runs when told nothing: the typed
// server example, built and started by the go command.
var defaultServer = []string{"go", "run", "github.com/mcpgate/mcpgate/examples/typed-server"}

func main() {
	tool := flag.String("tool", "", "the tool to call; none lists the tools only")
	args := flag.String("args", "{}", "the call's arguments, a JSON object")
	protocol := flag.String("protocol", "", "the protocol revision to speak (empty: the client chooses)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: client [flags] [URL | -- COMMAND [ARG...]]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, os.Stdout, flag.Args(), *tool, json.RawMessage(*args), *protocol)
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
	}
	os.Exit(code)
}

// run does the work of main and returns the exit status: 0 on success, 1
// for a tool that reported an error, 2 for anything else.
func run(ctx context.Context, out io.Writer, target []string, tool string, args json.RawMessage, protocol string) (int, error) {
	if !json.Valid(args) || !strings.HasPrefix(strings.TrimSpace(string(args)), "{") {
		return 2, fmt.Errorf("-args %s: give a JSON object, such as '{\"value\": 100}'", args)
	}
	// The client's diagnostics, and what a subprocess server writes to its
	// stderr, go to our stderr.
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	transport, err := transportFor(target, logger)
	if err != nil {
		return 2, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "example-client", Version: "1.0.0"}, &mcp.ClientOptions{
		ProtocolVersion: protocol,
		Logger:          logger,
	})
	cs, err := client.Connect(ctx, transport)
	if err != nil {
		return 2, fmt.Errorf("connecting: %w", err)
	}
	defer cs.Close()

	name := "a server"
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		name = ir.ServerInfo.Name + " " + ir.ServerInfo.Version
	}
	fmt.Fprintf(out, "connected to %s (protocol %s)\n", name, cs.ProtocolVersion())

	fmt.Fprintln(out, "tools:")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for t, err := range cs.Tools(ctx) { // every page
		if err != nil {
			return 2, fmt.Errorf("listing tools: %w", err)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Description)
	}
	tw.Flush()
	if tool == "" {
		return 0, nil
	}

	res, err := cs.CallTool(ctx, tool, args)
	if err != nil {
		// A protocol error (an unknown tool, say) or a failed connection.
		return 2, fmt.Errorf("calling %s: %w", tool, err)
	}
	fmt.Fprintf(out, "%s:\n", tool)
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Fprintf(out, "  text: %s\n", t.Text)
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return 2, fmt.Errorf("the structured content: %w", err)
		}
		fmt.Fprintf(out, "  structured: %s\n", b)
	}
	if res.IsError {
		return 1, errors.New("the tool reported an error")
	}
	return 0, nil
}

// transportFor reaches a URL over Streamable HTTP and runs anything else
// as a command.
func transportFor(target []string, logger *slog.Logger) (mcp.Transport, error) {
	switch {
	case len(target) == 0:
		target = defaultServer
	case strings.HasPrefix(target[0], "http://") || strings.HasPrefix(target[0], "https://"):
		if len(target) > 1 {
			return nil, fmt.Errorf("after the URL %s: unexpected %q", target[0], target[1:])
		}
		return &mcphttp.ClientTransport{Endpoint: target[0], Logger: logger}, nil
	}
	return &mcp.CommandTransport{Command: exec.Command(target[0], target[1:]...), Logger: logger}, nil
}
