// Command clusterup runs a cluster of mcpgate replicas on loopback for
// scripts and for tests that cannot import internal packages (the
// interop module): a real redis-server, N replicas of a command line,
// and HAProxy in front of them, round robin with no stickiness, so that
// consecutive requests of one client reach different replicas.
//
//	clusterup -n 3 -- bin/mcpgate conformance-server --addr 127.0.0.1:{port} --redis {redis}
//
// In the command's arguments {port} is the replica's own port (free
// ports, picked here, because HAProxy must know them), {redis} the Redis
// URL, {i} the replica's number from 1, and {dir} a directory the
// replicas share (for a shared SQLite file). -redis=false starts no Redis;
// -postgres starts Postgres too, whose database URL is {postgres}.
//
// Once every replica answers HTTP at -path and HAProxy is up, it writes
// to stderr
//
//	cluster redis redis://127.0.0.1:PORT/0
//	cluster postgres postgres://mcpgate@127.0.0.1:PORT/mcpgate?sslmode=disable
//	cluster replica 1 pid PID http://127.0.0.1:PORT/mcp
//	cluster front http://127.0.0.1:PORT/mcp
//
// the front line last. Each replica's output follows, prefixed with
// "replica N: ". It stops everything on SIGINT or SIGTERM, and at the end
// of its standard input (unless that is /dev/null, as for a background
// job of a script), so that a parent that dies without a word leaves no
// cluster behind. It exits with status 3 when redis-server, haproxy or
// Postgres is not installed (the message says which package to install),
// 1 when the cluster did not come up otherwise, 2 for a usage error.
//
// It is for tests and scripts only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// config is what the command line asks for.
type config struct {
	n        int
	path     string
	redis    bool
	postgres bool
	command  []string
}

// exitMissing is the status of a start that lacked a program.
const exitMissing = 3

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stderr))
}

func run(args []string, stdin *os.File, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "clusterup:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = untilEOF(ctx, stdin)

	c := newCluster(stderr)
	defer c.close()
	if err := c.start(cfg); err != nil {
		fmt.Fprintln(stderr, "clusterup:", err)
		var m *missingError
		if errors.As(err, &m) {
			return exitMissing
		}
		return 1
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "cluster stopping")
	return 0
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("clusterup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: clusterup [-n N] [-path /mcp] [-redis=false] [-postgres] -- COMMAND ARG... ({port} {redis} {postgres} {i} {dir} substituted)")
		fs.PrintDefaults()
	}
	var cfg config
	fs.IntVar(&cfg.n, "n", 3, "how many replicas")
	fs.StringVar(&cfg.path, "path", "/mcp", "the replicas' MCP endpoint, where HTTP must answer before the cluster is up")
	fs.BoolVar(&cfg.redis, "redis", true, "start a redis-server for the replicas ({redis} in the command)")
	fs.BoolVar(&cfg.postgres, "postgres", false, "start Postgres for the replicas ({postgres} in the command: a database URL)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.command = fs.Args()
	switch {
	case len(cfg.command) == 0:
		return cfg, errors.New("no replica command: clusterup [flags] -- COMMAND ARG...")
	case cfg.n < 1 || cfg.n > 32:
		return cfg, fmt.Errorf("-n %d: want 1 to 32 replicas", cfg.n)
	case !strings.HasPrefix(cfg.path, "/"):
		return cfg, fmt.Errorf("-path %q: want a path such as /mcp", cfg.path)
	case !hasPlaceholder(cfg.command, "{port}"):
		return cfg, errors.New("the replica command has no {port}: each replica must listen where HAProxy sends to it")
	case !cfg.redis && hasPlaceholder(cfg.command, "{redis}"):
		return cfg, errors.New("the replica command names {redis} but -redis=false starts none")
	case !cfg.postgres && hasPlaceholder(cfg.command, "{postgres}"):
		return cfg, errors.New("the replica command names {postgres}: add -postgres to start one")
	}
	return cfg, nil
}

func hasPlaceholder(args []string, p string) bool {
	for _, a := range args {
		if strings.Contains(a, p) {
			return true
		}
	}
	return false
}

// expand substitutes the placeholders of one replica's command line.
func expand(args []string, vars map[string]string) []string {
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	r := strings.NewReplacer(pairs...)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// untilEOF returns a context cancelled when stdin ends: the parent that
// holds the other end of the pipe has closed it or died. /dev/null, which
// ends at once, is no such signal.
func untilEOF(ctx context.Context, stdin *os.File) context.Context {
	if stdin == nil || isDevNull(stdin) {
		return ctx
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer cancel()
		io.Copy(io.Discard, stdin)
	}()
	return ctx
}

func isDevNull(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return true // nothing to read from
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}
