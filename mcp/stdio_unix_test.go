//go:build unix

package mcp

import (
	"bufio"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
	`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n"

// readReplies reads the answers to childInit's two requests.
func readReplies(t *testing.T, r *bufio.Reader) {
	t.Helper()
	for _, id := range []string{`"id":1`, `"id":2`} {
		line, err := r.ReadString('\n')
		if err != nil || !strings.Contains(line, id) {
			t.Fatalf("reply %q, %v; want %s", line, err, id)
		}
	}
}

// Stdin is read with blocking reads: ServeStdio still returns when its
// context ends while the client keeps stdin open and silent.
func TestServeStdioStopsWithStdinOpen(t *testing.T) {
	cmd := childCommand("sigterm")
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	var stderr logBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte(childInit))
	readReplies(t, bufio.NewReader(stdout))
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(stderr.String(), "served") {
			t.Fatalf("exit: %v; stderr %q", err, stderr.String())
		}
	case <-time.After(waitFor):
		cmd.Process.Kill()
		t.Fatalf("ServeStdio did not return after SIGTERM; stderr %q", stderr.String())
	}
}

// Stdin and stdout on one socket share their non-blocking flag; serving
// still works (stdin then goes on the poller too).
func TestServeStdioOneSocket(t *testing.T) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine := os.NewFile(uintptr(fds[0]), "client")
	theirs := os.NewFile(uintptr(fds[1]), "server")
	defer mine.Close()
	cmd := childCommand("sigterm")
	cmd.Stdin, cmd.Stdout = theirs, theirs
	var stderr logBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	theirs.Close()
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	mine.SetDeadline(time.Now().Add(waitFor))
	mine.Write([]byte(childInit))
	readReplies(t, bufio.NewReader(mine))
	if s := stderr.String(); s != "" {
		t.Errorf("stderr: %q", s)
	}
}
