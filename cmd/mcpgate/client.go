package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpgate/mcpgate/mcp"
)

// The client commands (tools, resources, prompts, ping) talk to any MCP
// server: one at an http(s) URL, or one started as a subprocess from the
// command after "--", as desktop clients start stdio servers.

// targetHelp explains TARGET with the command's own usage (path is
// "mcpgate tools call", ops its operands such as NAME).
func targetHelp(path string, ops []string) string {
	o, own := "", "this command's flags (such as --json)"
	if len(ops) > 0 {
		o = " " + strings.Join(ops, " ")
		own = "this command's " + strings.Join(ops, " and ") + " and flags (such as --json)"
	}
	return fmt.Sprintf(`The server (TARGET) is either
  - an http(s) URL, given first:
      %[1]s http://127.0.0.1:8765/mcp%[2]s
  - or a command after "--", started as a subprocess that speaks MCP on its
    standard input and output:
      %[1]s%[2]s -- mcpgate serve --stdio
Everything after "--" belongs to the server command, so put
%[3]s before it.
A server command's stderr is shown only with --log-level debug, and its
last lines when it fails.`, path, o, own)
}

// clientFlags are the flags every client command has.
type clientFlags struct {
	headers         []string
	apiKey          string
	timeout         time.Duration
	protocolVersion string
	env             []string
	oauth           bool
	json            bool
	bare            bool
}

func (f *clientFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&f.json, "json", false, "print the result as JSON (lists: every page merged), for scripts")
	fl.DurationVar(&f.timeout, "timeout", 60*time.Second, "how long each request may take (0: no limit)")
	fl.StringVar(&f.protocolVersion, "protocol-version", "auto", "protocol revision: auto (the stateless "+mcp.Version20260728+" when the server answers server/discover, else the newest it negotiates through initialize), or one of "+strings.Join(mcp.Versions(), ", "))
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "HTTP header 'Name: value' sent with every request (repeatable; URL targets)")
	fl.StringVar(&f.apiKey, "api-key", "", "send 'Authorization: Bearer KEY' (env MCPGATE_API_KEY; URL targets)")
	fl.BoolVar(&f.bare, "bare", false, "the server is a bare tool server: it answers tools/list and tools/call but not initialize, so skip the MCP handshake (one that answers initialize with -32601 is recognised without this flag)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "KEY=VALUE added to the environment of a server command (repeatable; command targets)")
	registerOAuthFlag(fl, &f.oauth)
}

// target is where the server is: a URL, or a command to start.
type target struct {
	url     string
	command []string
}

func (t target) String() string {
	if t.url != "" {
		return t.url
	}
	return shortCommand(t.command)
}

// shortCommand renders a command line for messages, cut when long.
func shortCommand(argv []string) string {
	s := strings.Join(argv, " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

// parseTarget splits the positional arguments of a command that takes the
// operands named in ops (NAME, URI) into its target and those operands.
func parseTarget(cmd *cobra.Command, args []string, ops ...string) (target, []string, error) {
	usage := cmd.CommandPath() + " " + usageOperands(ops)
	dash := cmd.ArgsLenAtDash()
	if dash >= 0 {
		before, after := args[:dash], args[dash:]
		if len(after) == 0 {
			return target{}, nil, fmt.Errorf("no server command after \"--\"; usage: %s", usage)
		}
		if len(before) == len(ops)+1 && isURL(before[0]) {
			return target{}, nil, fmt.Errorf("give either a URL or a command after \"--\", not both; usage: %s", usage)
		}
		if len(before) != len(ops) {
			if len(ops) > 0 && len(before) < len(ops) {
				return target{}, nil, fmt.Errorf("%s goes before \"--\" (everything after it is the server command); usage: %s", strings.Join(ops, " and "), usage)
			}
			return target{}, nil, fmt.Errorf("unexpected arguments before \"--\": %q; usage: %s", before, usage)
		}
		return target{command: after}, before, nil
	}
	if len(args) == 0 {
		return target{}, nil, fmt.Errorf("no TARGET: give a server URL or a server command after \"--\"; usage: %s", usage)
	}
	if !isURL(args[0]) {
		if strings.Contains(args[0], "://") {
			return target{}, nil, fmt.Errorf("TARGET %q: only http and https URLs are supported", args[0])
		}
		if schemeless(args[0]) {
			return target{}, nil, fmt.Errorf("TARGET %q is not a URL: did you mean http://%s? (%s http://%s)", args[0], args[0], cmd.CommandPath(), strings.Join(args, " "))
		}
		return target{}, nil, fmt.Errorf("TARGET %q is not an http(s) URL; to start a server command, put it after \"--\": %s -- %s", args[0], cmd.CommandPath(), strings.Join(args, " "))
	}
	if len(args) != len(ops)+1 {
		if len(args) < len(ops)+1 {
			return target{}, nil, fmt.Errorf("missing %s; usage: %s", strings.Join(ops[len(args)-1:], " and "), usage)
		}
		return target{}, nil, fmt.Errorf("unexpected arguments %q; usage: %s", args[len(ops)+1:], usage)
	}
	return target{url: args[0]}, args[1:], nil
}

func usageOperands(ops []string) string {
	o := strings.Join(ops, " ")
	if o == "" {
		return "{URL | -- COMMAND [ARG...]}"
	}
	return fmt.Sprintf("{URL %s | %s -- COMMAND [ARG...]}", o, o)
}

// hostName matches a DNS name of two labels or more, such as
// mcp.example.com.
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$`)

// schemeless reports whether s reads as a URL without its scheme
// (127.0.0.1:8765/mcp, localhost:8765, mcp.example.com/mcp) rather than
// a command (server.py, ./server, npx).
func schemeless(s string) bool {
	if strings.ContainsAny(s, " \t") {
		return false
	}
	u, err := url.Parse("http://" + s)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	if u.Port() != "" || host == "localhost" || net.ParseIP(host) != nil {
		return true
	}
	return hostName.MatchString(host) && u.Path != ""
}

func isURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// clientConn is one session with a server, with what is needed to explain
// its failures.
type clientConn struct {
	f       *clientFlags
	t       target
	cmd     *exec.Cmd   // command targets
	tail    *stderrTail // command targets: the server's last stderr lines
	cs      *mcp.ClientSession
	closed  bool
	release func() // URL targets: what the transport holds
}

// withSession connects to the target, runs do and closes the session,
// turning failures into messages that say what to do. Interrupts end the
// session cleanly, the server command included.
func (f *clientFlags) withSession(cmd *cobra.Command, t target, do func(ctx context.Context, c *clientConn) error) error {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := &clientConn{f: f, t: t}
	if err := c.connect(ctx); err != nil {
		return c.explain(err, true)
	}
	err := do(ctx, c)
	c.close()
	if err != nil {
		var pe *plainError
		if errors.As(err, &pe) {
			return err
		}
		return c.explain(err, false)
	}
	return nil
}

func (f *clientFlags) check(t target) error {
	if f.protocolVersion != "auto" && !slices.Contains(mcp.Versions(), f.protocolVersion) {
		return fmt.Errorf("--protocol-version %q: use auto or one of %s", f.protocolVersion, strings.Join(mcp.Versions(), ", "))
	}
	if f.bare && f.protocolVersion != "auto" {
		return errors.New("--bare speaks no protocol revision: drop --protocol-version")
	}
	if t.url != "" {
		if len(f.env) > 0 {
			return errors.New("--env applies to a server command after \"--\"; for a URL, use --header")
		}
		h, err := f.httpHeaders()
		if err == nil && f.oauth && h.Get("Authorization") != "" {
			err = errors.New("--oauth gets its own token: drop --api-key and the Authorization --header")
		}
		return err
	}
	if len(f.headers) > 0 || f.apiKey != "" || f.oauth {
		return errors.New("--header, --api-key and --oauth apply to URL targets; a server command gets settings with --env KEY=VALUE")
	}
	for _, kv := range f.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("--env %q: want KEY=VALUE", kv)
		}
	}
	return nil
}

func (c *clientConn) connect(ctx context.Context) error {
	f := c.f
	rt := f.timeout
	if rt <= 0 {
		rt = -1 // no limit
	}
	logger := slog.Default()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpgate", Title: "mcpgate CLI", Version: buildVersion()},
		&mcp.ClientOptions{ProtocolVersion: strings.TrimPrefix(f.protocolVersion, "auto"), RequestTimeout: rt, Logger: logger, Bare: bareMode(f.bare), Middleware: clientTracing()})
	var tr mcp.Transport
	if c.t.url != "" {
		var err error
		if tr, c.release, err = f.httpTransport(c.t.url); err != nil {
			return err
		}
	} else {
		c.cmd = exec.Command(c.t.command[0], c.t.command[1:]...)
		if len(f.env) > 0 {
			c.cmd.Env = append(os.Environ(), f.env...)
		}
		c.tail = &stderrTail{}
		tr = &mcp.CommandTransport{Command: c.cmd, Logger: slog.New(&serverLogHandler{inner: logger.Handler(), tail: c.tail})}
	}
	cctx := ctx
	if f.timeout > 0 {
		limit := f.timeout
		if f.oauth {
			limit = max(limit, oauthSignInTime) // a person may have to sign in
		}
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cs, err := client.Connect(cctx, tr)
	if err != nil {
		return err
	}
	c.cs = cs
	si := cs.InitializeResult().ServerInfo
	slog.Debug("connected", "server", si.Name, "version", si.Version, "protocol", cs.ProtocolVersion())
	return nil
}

// close ends the session; for a command target it waits for the server
// process to exit.
func (c *clientConn) close() {
	if c.cs != nil && !c.closed {
		c.closed = true
		c.cs.Close()
	}
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

// callCtx bounds one call by --timeout.
func (c *clientConn) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.f.timeout > 0 {
		return context.WithTimeout(ctx, c.f.timeout)
	}
	return context.WithCancel(ctx)
}

// plainError is a failure the command has explained already (a tool that
// reported an error, an unknown tool): it is printed as it is.
type plainError struct{ msg string }

func (e *plainError) Error() string { return e.msg }

func plainErrorf(format string, args ...any) error {
	return &plainError{fmt.Sprintf(format, args...)}
}

// explain turns an error from the client into a message for a person.
// The session is closed first, so a server command has exited.
func (c *clientConn) explain(err error, connecting bool) error {
	c.close()
	var ce *mcp.CallError
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("interrupted")
	case errors.Is(err, context.DeadlineExceeded):
		if connecting {
			return fmt.Errorf("%s did not answer within %v (--timeout)%s", c.t, c.f.timeout, c.stderrHint())
		}
		return fmt.Errorf("no answer from %s within %v: the request timed out (raise --timeout)", c.t, c.f.timeout)
	case errors.Is(err, mcp.ErrNotSupported):
		return errors.New(strings.TrimPrefix(stripMCP(err.Error()), "the server does not support this: "))
	case errors.As(err, &ce):
		return fmt.Errorf("the server answered %s with error %d: %s", ce.Method, ce.Err.Code, ce.Err.Message)
	}
	if c.t.url != "" {
		if e := explainHTTP(err, c.t.url, c.f); e != nil {
			return e
		}
		return fmt.Errorf("%s: %s", c.t.url, stripMCP(err.Error()))
	}
	return c.explainCommand(err, connecting)
}

func (c *clientConn) explainCommand(err error, connecting bool) error {
	name := shortCommand(c.t.command)
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot start the server: %q not found (is it installed and on your PATH?)", c.t.command[0])
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("cannot start the server: %q is not executable", c.t.command[0])
	}
	if c.cmd != nil && c.cmd.ProcessState != nil &&
		(errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)) {
		when := "during the call"
		if connecting {
			when = "before completing the MCP handshake"
		}
		msg := fmt.Sprintf("the server command \"%s\" exited (%s) %s", name, c.cmd.ProcessState, when)
		if lines := c.tail.last(); len(lines) > 0 {
			msg += "; its last lines on stderr:\n  " + strings.Join(lines, "\n  ")
		} else {
			msg += " and wrote nothing on stderr; does it speak MCP over stdio (some servers need an argument such as \"stdio\")?"
		}
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", name, stripMCP(err.Error()))
}

// stderrHint adds a command target's last stderr lines to a message.
func (c *clientConn) stderrHint() string {
	if c.tail == nil {
		return ""
	}
	if lines := c.tail.last(); len(lines) > 0 {
		return "; its last lines on stderr:\n  " + strings.Join(lines, "\n  ")
	}
	return ""
}

// libPrefix matches the package prefixes the libraries put at each level
// of a message.
var libPrefix = regexp.MustCompile(`(^|: )(mcp|mcphttp): `)

// stripMCP removes the "mcp: " and "mcphttp: " prefixes of a message.
func stripMCP(s string) string { return libPrefix.ReplaceAllString(s, "$1") }

// explainNet explains the network errors every transport shares.
func explainNet(err error, u string) error {
	var dns *net.DNSError
	var rec tls.RecordHeaderError
	var cert *tls.CertificateVerificationError
	switch {
	case errors.As(err, &rec):
		return fmt.Errorf("cannot connect to %s: the server does not speak TLS; use http:// instead of https://", u)
	case errors.As(err, &cert):
		return fmt.Errorf("cannot connect to %s: its TLS certificate is not trusted: %v", u, cert.Err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot connect to %s: connection refused; is the server running?", u)
	case errors.As(err, &dns):
		return fmt.Errorf("cannot connect to %s: host %q not found", u, dns.Name)
	case errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%s closed the connection (connection reset); is it an MCP server, and is the scheme (http or https) right?", u)
	}
	return nil
}

// stderrTail keeps the last lines a server command wrote on stderr.
type stderrTail struct {
	mu    sync.Mutex
	lines []string
}

const stderrTailLines = 10

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > stderrTailLines {
		t.lines = t.lines[1:]
	}
}

func (t *stderrTail) last() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.lines)
}

// serverLogHandler keeps a server command's stderr lines, which
// mcp.CommandTransport logs at Info, and logs them at Debug: servers
// write banners and progress there, noise unless one is debugging.
type serverLogHandler struct {
	inner slog.Handler
	tail  *stderrTail
}

const serverStderrMsg = "mcp: server stderr"

func (h *serverLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l == slog.LevelInfo || h.inner.Enabled(ctx, l)
}

func (h *serverLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == serverStderrMsg {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "line" {
				h.tail.add(a.Value.String())
			}
			return true
		})
		r.Level = slog.LevelDebug
	}
	if !h.inner.Enabled(ctx, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

func (h *serverLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &serverLogHandler{inner: h.inner.WithAttrs(as), tail: h.tail}
}

func (h *serverLogHandler) WithGroup(name string) slog.Handler {
	return &serverLogHandler{inner: h.inner.WithGroup(name), tail: h.tail}
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// parseHeader reads a --header value, "Name: value".
func parseHeader(h string) (name, value string, err error) {
	name, value, ok := strings.Cut(h, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || !headerName.MatchString(name) {
		return "", "", fmt.Errorf("--header %q: want 'Name: value', such as 'Authorization: Bearer KEY'", h)
	}
	if strings.ContainsAny(value, "\r\n") {
		return "", "", fmt.Errorf("--header %q: the value must be on one line", name)
	}
	return name, value, nil
}

// clientCommand describes one client command; newClientLeaf builds it.
type clientCommand struct {
	name    string   // "list", "call", ...
	ops     []string // operands besides TARGET: "NAME", "URI"
	short   string
	long    string
	example string
	flags   func(fl *pflag.FlagSet)
	// prepare checks the command's own input (--args) before connecting.
	prepare func(cmd *cobra.Command) error
	run     func(ctx context.Context, cmd *cobra.Command, c *clientConn, ops []string) error
}

func newClientLeaf(d clientCommand) *cobra.Command {
	f := &clientFlags{}
	cmd := &cobra.Command{
		Use:     d.name + " " + usageOperands(d.ops),
		Short:   d.short,
		Long:    d.long + "\n\n" + targetHelp("mcpgate "+d.name, d.ops),
		Example: d.example,
		// newClientGroup renders the TARGET paragraph again with the
		// group's name in the command path.
		Annotations: map[string]string{annotClientLong: d.long, annotClientOps: strings.Join(d.ops, " ")},
		RunE: func(cmd *cobra.Command, args []string) error {
			t, ops, err := parseTarget(cmd, args, d.ops...)
			if err != nil {
				return err
			}
			if f.apiKey == "" && t.url != "" && !f.oauth {
				f.apiKey = os.Getenv("MCPGATE_API_KEY")
			}
			if err := f.check(t); err != nil {
				return err
			}
			if d.prepare != nil {
				if err := d.prepare(cmd); err != nil {
					return err
				}
			}
			return withTelemetry(cmd.Context(), func() error {
				return f.withSession(cmd, t, func(ctx context.Context, c *clientConn) error {
					return d.run(ctx, cmd, c, ops)
				})
			})
		},
	}
	f.register(cmd.Flags())
	if d.flags != nil {
		d.flags(cmd.Flags())
	}
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\n(a server command and its flags go after \"--\": %s %s)", err, cmd.CommandPath(), usageOperands(d.ops))
	})
	return cmd
}

// newClientGroup is a parent such as "tools": it only holds subcommands.
func newClientGroup(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q; see %s --help", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(subs...)
	for _, sub := range subs {
		if long, ok := sub.Annotations[annotClientLong]; ok {
			sub.Long = long + "\n\n" + targetHelp("mcpgate "+use+" "+sub.Name(), strings.Fields(sub.Annotations[annotClientOps]))
		}
	}
	return cmd
}

// Annotations of a client command: its description and operands, from
// which newClientGroup renders its help.
const (
	annotClientLong = "mcpgate/client-long"
	annotClientOps  = "mcpgate/client-ops"
)

// newClientCmds returns the client commands for the root command.
func newClientCmds() []*cobra.Command {
	return []*cobra.Command{newToolsCmd(), newResourcesCmd(), newPromptsCmd(), newPingCmd()}
}

// bareMode is the client's treatment of bare tool servers: detected,
// unless --bare says the server is one.
func bareMode(bare bool) mcp.BareMode {
	if bare {
		return mcp.BareAlways
	}
	return mcp.BareDetect
}
