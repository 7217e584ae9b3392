package interop

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tailBuffer keeps the last bytes a process wrote, for waiting on a line
// (the URL a server prints) and for failure messages.
type tailBuffer struct {
	mu      sync.Mutex
	buf     []byte
	changed chan struct{}
}

const tailMax = 64 << 10

func newTailBuffer() *tailBuffer { return &tailBuffer{changed: make(chan struct{})} }

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailMax {
		b.buf = b.buf[len(b.buf)-tailMax:]
	}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// waitFor waits until re matches what was written, or the process ends,
// or the timeout passes.
func (b *tailBuffer) waitFor(re *regexp.Regexp, exited <-chan struct{}, timeout time.Duration) ([]string, error) {
	deadline := time.After(timeout)
	for {
		b.mu.Lock()
		m := re.FindStringSubmatch(string(b.buf))
		changed := b.changed
		b.mu.Unlock()
		if m != nil {
			return m, nil
		}
		select {
		case <-changed:
		case <-exited:
			return nil, fmt.Errorf("the process exited before printing %q; its output: %s", re, b.String())
		case <-deadline:
			return nil, fmt.Errorf("no %q after %v; output so far: %s", re, timeout, b.String())
		}
	}
}

// proc is a server we started: it runs in its own process group, so that
// stop ends node and anything it spawned.
type proc struct {
	cmd    *exec.Cmd
	out    *tailBuffer // stdout and stderr together
	exited chan struct{}
}

func startProc(name string, args []string, extraEnv []string) (*proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), extraEnv...)
	out := newTailBuffer()
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stop sends SIGTERM to the group, then SIGKILL after 3 seconds.
func (p *proc) stop() {
	pgid := p.cmd.Process.Pid
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(3 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.exited
	}
}

// startHTTPServer starts a server that prints its URL and returns the URL
// (the first submatch of re).
func startHTTPServer(t testing.TB, name string, args []string, extraEnv []string, re *regexp.Regexp) (*proc, string) {
	t.Helper()
	p, err := startProc(name, args, extraEnv)
	if err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(p.stop)
	m, err := p.out.waitFor(re, p.exited, 20*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p, m[1]
}

// freePort finds a loopback port for a server that cannot be told to pick
// one itself (server-everything reads PORT). Another process could take it
// in between; the caller retries on "in use".
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// testLogger sends a client's diagnostics and a subprocess server's stderr
// to t.Log, which go test shows only for a failed test; it goes quiet once
// the test has ended (late stderr lines would otherwise panic t.Log).
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

// logWriter is an io.Writer for a subprocess's stderr that goes to t.Log.
func logWriter(t testing.TB) io.Writer {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return w
}
