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
	"time"
)

// CommandTransport runs a server as a subprocess and speaks to it over
// its stdin and stdout. What the server writes to stderr goes to Logger,
// line by line: servers log there, so it is not a sign of failure.
type CommandTransport struct {
	Command *exec.Cmd
	// MaxMessageSize is the largest message read from the server; a
	// larger one fails the call it answers (when its id can be read) and
	// the session goes on. Zero means 4 MiB.
	MaxMessageSize int
	// TerminateTimeout is how long Close waits for the server to exit
	// after closing its stdin, and again after SIGTERM, before SIGKILL.
	// Zero means 2 seconds (as the TypeScript SDK).
	TerminateTimeout time.Duration
	// Logger receives the server's stderr at Info level. Nil means
	// slog.Default().
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
	c := &commandConn{
		// os.Pipe files are on the network poller already; a dup would
		// keep the server's stdin open after Close.
		Conn:       NewStdioConn(outR, inW, t.MaxMessageSize),
		cmd:        cmd,
		stdin:      inW,
		stdout:     outR,
		timeout:    timeout,
		exited:     make(chan struct{}),
		stderrDone: make(chan struct{}),
		logger:     logger.With("server", cmdName(cmd)),
	}
	go c.readStderr(errR)
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func cmdName(cmd *exec.Cmd) string {
	if len(cmd.Args) > 0 {
		return strings.Join(cmd.Args, " ")
	}
	return cmd.Path
}

type commandConn struct {
	Conn
	cmd        *exec.Cmd
	stdin      *os.File
	stdout     *os.File
	timeout    time.Duration
	logger     *slog.Logger
	exited     chan struct{}
	waitErr    error
	stderrDone chan struct{}

	mu       sync.Mutex
	lastErrs []string // the last lines of stderr, for the error when it dies
	closed   bool
	once     sync.Once
}

func (c *commandConn) readStderr(r io.ReadCloser) {
	defer close(c.stderrDone)
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		c.logger.Info("mcp: server stderr", "line", line)
		c.mu.Lock()
		c.lastErrs = append(c.lastErrs, line)
		if len(c.lastErrs) > 5 {
			c.lastErrs = c.lastErrs[1:]
		}
		c.mu.Unlock()
	}
}

// ReadMessage returns the next message; when the server's stdout ends it
// says how the process ended, with its last words on stderr.
func (c *commandConn) ReadMessage() ([]byte, error) {
	msg, err := c.Conn.ReadMessage()
	if err == nil || !errors.Is(err, io.EOF) {
		return msg, err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, err
	}
	select {
	case <-c.exited:
	case <-time.After(c.timeout):
		return nil, fmt.Errorf("the server closed its stdout: %w", io.EOF)
	}
	select {
	case <-c.stderrDone:
	case <-time.After(100 * time.Millisecond):
	}
	c.mu.Lock()
	last := strings.Join(c.lastErrs, " | ")
	c.mu.Unlock()
	why := "the server process exited"
	if c.waitErr != nil {
		why += " (" + c.waitErr.Error() + ")"
	}
	if last != "" {
		why += "; its last stderr: " + last
	}
	return nil, fmt.Errorf("%s: %w", why, io.EOF)
}

// Close ends the server as the spec asks: close its stdin, then SIGTERM,
// then SIGKILL, each after TerminateTimeout.
func (c *commandConn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.stdin.Close()
		select {
		case <-c.exited:
		case <-time.After(c.timeout):
			c.logger.Debug("mcp: the server did not exit when its stdin closed; sending SIGTERM")
			terminate(c.cmd)
			select {
			case <-c.exited:
			case <-time.After(c.timeout):
				c.logger.Warn("mcp: the server ignored SIGTERM; killing it")
				kill(c.cmd)
				<-c.exited
			}
		}
		// The process is gone; children that kept its stdout open must
		// not keep our reader waiting.
		c.stdout.Close()
	})
	return nil
}

func (c *commandConn) sizeSetting() string { return "CommandTransport.MaxMessageSize" }
