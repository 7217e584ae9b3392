package mcp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// CommandTransport runs a server as a subprocess and speaks to it over
// its stdin and stdout. What the server writes to stderr goes to Logger,
// line by line: servers log there, so it is not a sign of failure.
//
// On unix the server runs in a process group of its own, which is what
// the transport stops: a wrapper such as npx or uvx and the real server
// it starts end together. The session ends when the server's stdout ends
// or the server process exits, even if a process it started still holds
// stdout open; however it ends, the same stop sequence runs (see
// TerminateTimeout), so that no process of the group outlives it.
type CommandTransport struct {
	Command *exec.Cmd
	// MaxMessageSize is the largest message read from the server; a
	// larger one fails the call it answers (when its id can be read) with
	// a *MessageTooLargeError and the session goes on. Zero means 4 MiB.
	MaxMessageSize int
	// TerminateTimeout is each wait of the stop sequence that ends a
	// session: its stdin is closed, then the process group is sent
	// SIGTERM if anything of it is left after TerminateTimeout, and
	// SIGKILL after TerminateTimeout more. Zero means 2 seconds (as the
	// TypeScript SDK).
	TerminateTimeout time.Duration
	// Logger receives the server's stderr at Info level, and a Warn with
	// the exit status when the server exits other than through Close.
	// Nil means slog.Default().
	Logger *slog.Logger
}

// ServerKey names the server by its command line and directory.
func (t *CommandTransport) ServerKey() string {
	if t.Command == nil {
		return ""
	}
	return "command:" + t.Command.Dir + "\x00" + strings.Join(t.Command.Args, "\x00")
}

// Connect starts the command. A command that has already run (a second
// connection, such as after a server/discover probe the server did not
// survive) is started afresh from a copy, which becomes Command.
func (t *CommandTransport) Connect(ctx context.Context) (Conn, error) {
	if t.Command == nil {
		return nil, errors.New("mcp: CommandTransport has no Command")
	}
	if c := t.Command; c.Process != nil || c.ProcessState != nil {
		t.Command = &exec.Cmd{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir}
	}
	cmd := t.Command
	logger := t.Logger
	if logger == nil {
		logger = slog.Default()
	}
	timeout := t.TerminateTimeout
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	// Pipes of our own rather than Cmd's: Cmd.Wait closes its pipes as
	// soon as the process exits, racing our reads of its last output.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	ownGroup(cmd)
	err = cmd.Start()
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("mcp: starting the server %s: %w", cmd.Path, err)
	}
	stdout, stderr := &pipeReader{f: outR}, &pipeReader{f: errR}
	c := &commandConn{
		// os.Pipe files are on the network poller already; a dup would
		// keep the server's stdin open after Close.
		Conn:        NewStdioConn(stdout, inW, t.MaxMessageSize),
		cmd:         cmd,
		stdin:       inW,
		stdout:      stdout,
		stderr:      stderr,
		timeout:     timeout,
		exited:      make(chan struct{}),
		stdoutEnded: make(chan struct{}),
		stderrDone:  make(chan struct{}),
		logger:      logger.With("server", cmdName(cmd)),
	}
	go c.readStderr()
	go c.watch()
	return c, nil
}

// cmdName is the command line as logs show it: a secret passed as an
// argument (--api-key X, a bare token) is hidden by what it is.
func cmdName(cmd *exec.Cmd) string {
	if len(cmd.Args) > 0 {
		return strings.Join(append([]string{cmd.Args[0]}, redact.Args(cmd.Args[1:])...), " ")
	}
	return cmd.Path
}

type commandConn struct {
	Conn
	cmd         *exec.Cmd
	stdin       *os.File
	stdout      *pipeReader
	stderr      *pipeReader
	timeout     time.Duration
	logger      *slog.Logger
	exited      chan struct{} // closed once the server process is reaped
	waitErr     error         // how it ended; set before exited closes
	stdoutEnded chan struct{} // closed when ReadMessage has met the end
	endOnce     sync.Once
	stderrDone  chan struct{}
	stopOnce    sync.Once

	mu       sync.Mutex
	lastErrs []string // the last lines of stderr, for the error when it dies
	firstErr string   // the first line of stderr that reads as an error
	closed   bool     // Close was called
}

func (c *commandConn) readStderr() {
	defer close(c.stderrDone)
	sc := bufio.NewScanner(c.stderr)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		c.logger.Info("mcp: server stderr", "line", line)
		c.mu.Lock()
		c.lastErrs = append(c.lastErrs, line)
		if len(c.lastErrs) > 40 {
			c.lastErrs = c.lastErrs[1:]
		}
		if c.firstErr == "" && errorLine(line) {
			c.firstErr = line
		}
		c.mu.Unlock()
	}
}

// watch reaps the server process. Its exit ends the session: the pipes
// give what the server wrote and then end, though a process it started
// may hold them open, and the stop sequence runs for what is left of its
// group.
func (c *commandConn) watch() {
	c.waitErr = c.cmd.Wait()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		// Stopping after its stdout ended counts: the server, not we,
		// ended the session.
		c.logger.Warn("mcp: the server exited unexpectedly", "status", exitStatus(c.cmd, c.waitErr))
	}
	close(c.exited)
	c.stdout.serverExited()
	c.stderr.serverExited()
	c.stop()
}

func exitStatus(cmd *exec.Cmd, waitErr error) string {
	if cmd.ProcessState != nil {
		return cmd.ProcessState.String()
	}
	return waitErr.Error()
}

// ReadMessage returns the next message; when the server's stdout ends it
// says how the process ended, with its last words on stderr, and the
// server is stopped.
func (c *commandConn) ReadMessage() ([]byte, error) {
	msg, err := c.Conn.ReadMessage()
	var tooLarge *jsonrpc.TooLargeError
	if err == nil || errors.As(err, &tooLarge) {
		return msg, err
	}
	c.endOnce.Do(func() { close(c.stdoutEnded) })
	go c.stop()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed || !errors.Is(err, io.EOF) {
		return nil, err
	}
	why, ok := c.howItEnded()
	if !ok {
		return nil, fmt.Errorf("the server closed its stdout: %w", io.EOF)
	}
	return nil, fmt.Errorf("%s: %w", why, io.EOF)
}

// WriteMessage writes a message; when the server's stdin is gone with
// the server, the error says how the process ended, as ReadMessage's.
func (c *commandConn) WriteMessage(msg []byte) error {
	err := c.Conn.WriteMessage(msg)
	if err == nil {
		return nil
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return err
	}
	if why, ok := c.howItEnded(); ok {
		return fmt.Errorf("%s: %w (%w)", why, ErrConnectionClosed, err)
	}
	return err
}

// howItEnded waits (within the stop timeout) for the process to end and
// says how, with its last words on stderr; false if it lives on.
func (c *commandConn) howItEnded() (string, bool) {
	select {
	case <-c.exited:
	case <-time.After(c.timeout):
		return "", false
	}
	select {
	case <-c.stderrDone:
	case <-time.After(100 * time.Millisecond):
	}
	c.mu.Lock()
	last := strings.Join(telling(c.firstErr, c.lastErrs), " | ")
	c.mu.Unlock()
	why := "the server process exited (" + exitStatus(c.cmd, c.waitErr) + ")"
	if last != "" {
		why += "; its last stderr: " + last
	}
	return why, true
}

// Close ends the server as the spec asks (close its stdin, then SIGTERM,
// then SIGKILL, each after TerminateTimeout) and returns once it is gone.
func (c *commandConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	return nil
}

// stop runs the stop sequence once, whatever ended the session: Close,
// the end of stdout, or the server's exit. Every step is for the whole
// process group: a server that exits when its stdin closes may leave
// behind a process it started (npx's wrapper exits, node lives on).
func (c *commandConn) stop() {
	c.stopOnce.Do(func() {
		c.stdin.Close()
		if !c.gone(c.timeout) {
			c.logger.Debug("mcp: the server did not exit when its stdin closed; sending SIGTERM")
			terminate(c.cmd)
			if !c.gone(c.timeout) {
				c.logger.Warn("mcp: the server ignored SIGTERM; killing it")
				kill(c.cmd)
				<-c.exited
				c.gone(c.timeout) // SIGKILL is not refused, but takes a moment
			}
		}
		// The pipes end once drained (see pipeReader); a process that
		// left the group and still writes must not keep them open.
		ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
		defer cancel()
		for _, p := range []struct {
			done <-chan struct{}
			r    *pipeReader
		}{{c.stdoutEnded, c.stdout}, {c.stderrDone, c.stderr}} {
			select {
			case <-p.done:
			case <-ctx.Done():
			}
			p.r.Close()
		}
	})
}

// gone waits at most d for the server process to exit and its process
// group to empty.
func (c *commandConn) gone(d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	select {
	case <-c.exited:
	case <-deadline.C:
		return false
	}
	// Processes other than our child cannot be waited for; look again
	// now and then.
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		reapGroup(c.cmd)
		if !groupAlive(c.cmd) {
			return true
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return false
		}
	}
}

func (c *commandConn) sizeSetting() string { return "CommandTransport.MaxMessageSize" }

// pipeReader is the read end of a pipe from the server. Once the server
// has exited it stops waiting: it returns what the pipe holds and then
// io.EOF, though a process the server started (a daemon, a child it did
// not wait for) may hold the write end open for ever.
type pipeReader struct {
	f      *os.File
	exited atomic.Bool
}

func (r *pipeReader) Read(p []byte) (int, error) {
	if !r.exited.Load() {
		n, err := r.f.Read(p)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return n, err
		}
		// serverExited woke us.
	}
	return readReady(r.f, p)
}

func (r *pipeReader) Close() error { return r.f.Close() }

// serverExited makes reads stop waiting for more, waking one that waits.
func (r *pipeReader) serverExited() {
	r.exited.Store(true)
	wakeReader(r.f)
}

// stackFrame reports whether a stderr line is a frame of a stack trace
// (Node's "    at f (file:1:2)", Python's "  File ...", Go's tabbed
// frames): it says where, not what.
func stackFrame(line string) bool {
	t := strings.TrimLeft(line, " \t")
	return t != line && (strings.HasPrefix(t, "at ") || strings.HasPrefix(t, "File \"") || strings.HasPrefix(line, "\t")) ||
		strings.HasPrefix(t, "node:internal") || strings.HasPrefix(t, "goroutine ")
}

// errorLine reports whether a stderr line says what went wrong.
func errorLine(line string) bool {
	if stackFrame(line) {
		return false
	}
	l := strings.ToLower(line)
	for _, w := range []string{"error", "exception", "fatal", "panic", "traceback", "cannot", "can't", "not found", "failed", "denied", "refused", "no such", "missing", "invalid"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// telling picks the stderr lines that say what happened: the first line
// that reads as an error, and the last lines that are not stack frames,
// three at most.
func telling(first string, lines []string) []string {
	var out []string
	if first != "" {
		out = append(out, first)
	}
	var tail []string
	for i := len(lines) - 1; i >= 0 && len(tail) < 3; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !stackFrame(lines[i]) && lines[i] != first {
			tail = append(tail, lines[i])
		}
	}
	for i := len(tail) - 1; i >= 0 && len(out) < 3; i-- {
		out = append(out, tail[i])
	}
	return out
}
