package mcp

// Servers that misbehave as processes: they close stdout and live on,
// leave a process holding stdout when they exit, die under a wrapper, or
// flood stdout with garbage. Each runs as a real subprocess (this test
// binary, see runChild).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/slogthrottle"
)

// floodLines is how many garbage lines or notifications the flooding
// children write.
const floodLines = 20000

// runHostileChild runs the children of this file; it reports whether
// mode is one of them.
func runHostileChild(mode string) bool {
	switch mode {
	case "close-stdout":
		// Closes stdout when called, and stays until killed.
		signal.Ignore(syscall.SIGTERM)
		rawChild(func(string, string) { os.Stdout.Close() })
		time.Sleep(time.Minute)
	case "fork-and-exit":
		// Leaves a process holding its stdout and stderr, and exits
		// without answering.
		rawChild(func(string, string) {
			gc := childCommand("sleeper")
			gc.Stdout, gc.Stderr = os.Stdout, os.Stderr
			if err := gc.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Fprintln(os.Stderr, "grandchild", gc.Process.Pid)
			os.Exit(0)
		})
	case "wrapper":
		// Starts a grandchild that ignores SIGTERM and exits when its
		// stdin ends, as npx's wrapper does, leaving the grandchild.
		gc := childCommand("sleeper")
		gc.Start()
		fmt.Fprintln(os.Stderr, "grandchild", gc.Process.Pid)
		featureServer(nil).ServeStdio(context.Background(), nil)
	case "garbage":
		// Answers each call after floodLines lines of garbage.
		rawChild(func(_, id string) {
			w := bufio.NewWriter(os.Stdout)
			for i := range floodLines {
				fmt.Fprintf(w, "garbage line %d\n", i)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", id)
			w.Flush()
		})
	case "log-flood":
		// Sends floodLines log notifications before answering each call.
		rawChild(func(_, id string) {
			w := bufio.NewWriter(os.Stdout)
			for i := range floodLines {
				fmt.Fprintf(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":%d}}`+"\n", i)
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"ok"}]}}`+"\n", id)
			w.Flush()
		})
	default:
		return false
	}
	return true
}

// rawChild answers initialize, and each tools/call with call(name, id).
func rawChild(call func(name, id string)) {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch m.Method {
		case "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`+"\n", m.ID)
		case "tools/call":
			call(m.Params.Name, string(m.ID))
		}
	}
}

// connectChild connects to the child of mode with a client that gives
// calls no deadline of their own, so that a hang shows as one.
func connectChild(t *testing.T, mode string, logs *logBuffer, opts *ClientOptions) (*ClientSession, *CommandTransport) {
	t.Helper()
	tr := childTransport(mode, logs)
	o := ClientOptions{ProtocolVersion: LatestNegotiatedVersion, RequestTimeout: -1}
	if opts != nil {
		o = *opts
	}
	cs, err := NewClient(nil, &o).Connect(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, tr
}

// callBounded calls tool and fails the test if the call hangs.
func callBounded(t *testing.T, cs *ClientSession, tool string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(context.Background(), tool, nil)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(waitFor):
		t.Fatalf("the call of %s hung", tool)
		return nil
	}
}

// grandchildPid reads the pid a child logged on stderr as "grandchild N".
func grandchildPid(t *testing.T, logs *logBuffer) int {
	t.Helper()
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "grandchild ") })
	s := logs.String()
	s = s[strings.Index(s, "grandchild ")+len("grandchild "):]
	pid, err := strconv.Atoi(strings.TrimRight(strings.Fields(s)[0], `"`))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// waitGone fails the test unless process pid ends (or is left a zombie,
// which init may take seconds to reap) within waitFor.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the %s (pid %d) is still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A server that closes its stdout but keeps running ends the session, and
// is stopped (it ignores the end of stdin and SIGTERM, so killed).
func TestServerThatClosesStdoutIsStopped(t *testing.T) {
	var logs logBuffer
	cs, tr := connectChild(t, "close-stdout", &logs, nil)
	if err := callBounded(t, cs, "close"); !errors.Is(err, ErrConnectionClosed) || !strings.Contains(err.Error(), "closed its stdout") {
		t.Errorf("the call: %v; want the connection closed", err)
	}
	waitGone(t, "server", tr.Command.Process.Pid)
}

// A server that exits leaving a process that holds its stdout open ends
// the session at once: the call in flight fails with the connection
// closed, and the process left behind is killed.
func TestServerExitEndsSessionThoughStdoutIsHeld(t *testing.T) {
	var logs logBuffer
	cs, _ := connectChild(t, "fork-and-exit", &logs, nil)
	err := callBounded(t, cs, "fork")
	if !errors.Is(err, ErrConnectionClosed) || !strings.Contains(err.Error(), "exit status 0") {
		t.Errorf("the call: %v; want the connection closed, with the exit status", err)
	}
	select {
	case <-cs.Done():
	case <-time.After(waitFor):
		t.Fatal("the session did not end")
	}
	waitGone(t, "grandchild", grandchildPid(t, &logs))
	if !strings.Contains(logs.String(), `level=WARN msg="mcp: the server exited unexpectedly"`) {
		t.Errorf("no warning of the exit in the log:\n%s", logs.String())
	}
}

// Killing the server, when it is a wrapper of the real server (npm exec),
// kills the real server too, and says so in the log.
func TestKilledWrapperTakesItsChildren(t *testing.T) {
	var logs logBuffer
	cs, tr := connectChild(t, "parent", &logs, nil)
	gc := grandchildPid(t, &logs)
	if err := tr.Command.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-cs.Done():
	case <-time.After(waitFor):
		t.Fatal("the session did not end")
	}
	if err := cs.Err(); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("session error %v", err)
	}
	waitGone(t, "grandchild", gc)
	if !strings.Contains(logs.String(), `level=WARN msg="mcp: the server exited unexpectedly"`) || !strings.Contains(logs.String(), "status=\"signal: killed\"") {
		t.Errorf("no warning of the exit, with its status, in the log:\n%s", logs.String())
	}
}

// A flood of garbage lines or notifications from the server costs a few
// log lines when the client's logger is throttled, and a summary says how
// many were left out.
func TestFloodsAreThrottledInTheLog(t *testing.T) {
	tests := []struct {
		mode    string
		message string // the message logged per line of the flood
		dropped int    // how many lines of the flood are logged as dropped
		atLeast bool   // dropped is a lower bound
	}{
		{"garbage", "mcp: dropped a malformed message from the server", floodLines, false},
		// The handler may have taken the first notification before the
		// queue filled.
		{"log-flood", "mcp: dropped a notification: its handlers are too far behind", floodLines - maxQueuedNotifications - 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			var clientLog logBuffer
			const limit = 5
			th := slogthrottle.New(slog.NewTextHandler(&clientLog, nil), &slogthrottle.Options{Limit: limit})
			release := make(chan struct{})
			cs, _ := connectChild(t, tc.mode, &logBuffer{}, &ClientOptions{
				ProtocolVersion: LatestNegotiatedVersion,
				RequestTimeout:  -1,
				Logger:          slog.New(th),
				// Blocks until the call has returned, so that the
				// notifications pile up.
				LoggingMessageHandler: func(context.Context, *ClientSession, *LoggingMessageParams) { <-release },
			})
			err := callBounded(t, cs, "flood")
			close(release)
			if err != nil {
				t.Fatal(err)
			}
			if err := th.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			out := clientLog.String()
			logged := strings.Count(out, `msg="`+tc.message+`"`)
			suppressed := -1
			if i := strings.Index(out, `message="`+tc.message+`" count=`); i >= 0 {
				fmt.Sscan(out[i+len(`message="`+tc.message+`" count=`):], &suppressed)
			}
			total := logged + suppressed
			if logged != limit || total < tc.dropped || !tc.atLeast && total != tc.dropped || total > floodLines {
				t.Errorf("%d lines of %q logged and %d suppressed, want %d logged and %d in all; the log:\n%s", logged, tc.message, suppressed, limit, tc.dropped, truncateString(out, 4000))
			}
		})
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err) || runtime.GOOS != "linux"
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) == 0 || f[0] != "Z"
}
