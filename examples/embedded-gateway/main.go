// Command embedded-gateway runs the mcpgate gateway inside a program of its
// own: it puts an MCP server (by default the typed-server example) behind
// one Streamable HTTP endpoint on 127.0.0.1, as "mcpgate serve --config"
// does, but with the configuration written in code.
//
//	go run ./examples/embedded-gateway -addr 127.0.0.1:8765
//	go run ./examples/embedded-gateway -- /path/to/any/stdio/server --its-flags
//
// It prints the endpoint's URL on standard output once it listens, logs to
// standard error, and stops on SIGINT or SIGTERM. Each tool of the server
// is published under the server's name (-name, default "typed"), so the
// typed server's convert_temperature is typed_convert_temperature:
//
//	go run ./examples/client -tool typed_convert_temperature -args '{"value":100,"from":"celsius"}' http://127.0.0.1:8765/mcp
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpgate/mcpgate/gateway"
	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// defaultServer is the upstream when the command line names none: the
// typed server example, built and started by the go command.
var defaultServer = []string{"go", "run", "github.com/mcpgate/mcpgate/examples/typed-server"}

func main() {
	addr := flag.String("addr", "127.0.0.1:8765", "the address to listen on (port 0: any free port)")
	name := flag.String("name", "typed", "the upstream's name, which prefixes its tools")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: embedded-gateway [flags] [-- COMMAND [ARG...]]\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	upstream := flag.Args()
	if len(upstream) == 0 {
		upstream = defaultServer
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, *name, upstream); err != nil {
		fmt.Fprintln(os.Stderr, "embedded-gateway:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr, name string, upstream []string) error {
	// The configuration is the file format's, so it is checked and given
	// its defaults exactly as a file would be; building it as JSON keeps
	// the command's arguments from needing any quoting.
	file, err := json.Marshal(map[string]any{
		"mcpServers": map[string]any{
			name: map[string]any{"command": upstream[0], "args": upstream[1:]},
		},
	})
	if err != nil {
		return err
	}
	cfg, err := config.Parse(file, "embedded.json", os.LookupEnv)
	if err != nil {
		return err // a config.Errors, each with what to do about it
	}

	// With no Options.Pins and no state.db in the configuration, the
	// tool-definition pins are kept in memory for the life of the process.
	g, err := gateway.New(cfg, &gateway.Options{
		Logger:  slog.Default(),
		Version: "1.0.0",
		Server:  mcp.ServerOptions{Instructions: "Tools of the " + name + " server, through an embedded gateway."},
	})
	if err != nil {
		return err
	}
	defer g.Close() // stops the upstream's process
	g.Start(ctx)    // connects in the background; first lists wait for it

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := mcphttp.NewHandler(g.Server(), &mcphttp.Options{Logger: slog.Default()})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on http://%s/mcp\n", ln.Addr())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// The Handler first, so that its open streams end and srv.Shutdown
	// does not wait for them.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	herr := h.Shutdown(sctx)
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if herr != nil {
		slog.Warn("embedded-gateway: shutdown", "error", herr)
	}
	return nil
}
