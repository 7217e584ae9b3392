package testservice

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// waitFor bounds each wait on a server: for it to answer after a start,
// and to exit after a stop.
const waitFor = 20 * time.Second // a bound on a hang

// logTail is how much of a server's output a failed test shows.
const logTail = 16 << 10

// process is one server program, started and stopped again and again
// with the same arguments. Its output of every run goes to one file,
// whose tail a failed test logs.
type process struct {
	tb    testing.TB
	path  string
	args  []string
	dir   string
	cred  *syscall.Credential // nil: as this process's user
	quit  syscall.Signal      // the signal of a graceful stop
	log   string
	ready func() error // nil once the server answers

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// newProcess prepares the program at path to run in dir; its cleanup
// stops the server with quit and, when the test failed, logs its output.
func newProcess(tb testing.TB, path, dir string, cred *syscall.Credential, quit syscall.Signal) *process {
	p := &process{tb: tb, path: path, dir: dir, cred: cred, quit: quit,
		log: filepath.Join(dir, filepath.Base(path)+".log")}
	tb.Cleanup(func() {
		p.stop(quit)
		if tb.Failed() {
			tb.Logf("testservice: the last output of %s:\n%s", filepath.Base(path), p.output())
		}
	})
	return p
}

// start runs the program and waits until it answers, or it exits, or
// waitFor passes. The cleanup of a test failed by the error logs the
// program's output.
func (p *process) start() error {
	p.mu.Lock()
	if p.cmd != nil {
		p.mu.Unlock()
		return nil
	}
	f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		p.mu.Unlock()
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr(p.cred)
	if err := cmd.Start(); err != nil {
		f.Close()
		p.mu.Unlock()
		return fmt.Errorf("starting %s: %w", p.path, err)
	}
	f.Close() // the child has its own copy
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	go func() {
		cmd.Wait()
		p.mu.Lock()
		if p.cmd == cmd {
			p.cmd = nil
		}
		p.mu.Unlock()
		close(done)
	}()
	return p.waitReady(done)
}

func (p *process) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(waitFor)
	for {
		err := p.ready()
		if err == nil {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("%s exited before it answered (%v)", filepath.Base(p.path), err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop(syscall.SIGKILL)
			return fmt.Errorf("%s did not answer within %v (%v)", filepath.Base(p.path), waitFor, err)
		}
	}
}

// stop sends sig and waits for the program to exit, killing it when it
// has not within waitFor. A program that is not running is left alone.
func (p *process) stop(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
		return
	case <-time.After(waitFor):
	}
	p.tb.Logf("testservice: %s did not exit within %v of %v; killing it", filepath.Base(p.path), waitFor, sig)
	cmd.Process.Kill()
	<-done
}

// pid is the running program's process id, 0 when it is not running.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// output is the tail of everything the program wrote.
func (p *process) output() string {
	f, err := os.Open(p.log)
	if err != nil {
		return "(no output: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > logTail {
		f.Seek(-logTail, io.SeekEnd)
	}
	b, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return "(reading the output: " + err.Error() + ")"
	}
	return string(b)
}

// startOnFreePort starts a server whose arguments name its port, which
// args returns for a port from [freePort]. A port that another process
// took meanwhile makes the server exit; it is tried again on another, a
// few times.
func startOnFreePort(tb testing.TB, p *process, args func(port int) []string) int {
	tb.Helper()
	var err error
	for range 3 {
		port := freePort(tb)
		p.args = args(port)
		if err = p.start(); err == nil {
			return port
		}
	}
	tb.Fatalf("testservice: %v, 3 times on 3 ports", err)
	return 0
}
