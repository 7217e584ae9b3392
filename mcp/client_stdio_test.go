package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the subprocess servers of these tests: with
// MCPGATE_TEST_CHILD set, TestMain runs runChild instead of the tests.
const childEnv = "MCPGATE_TEST_CHILD"

func runChild(mode string) {
	ctx := context.Background()
	switch mode {
	case "server":
		fmt.Fprintln(os.Stderr, "child ready")
		s := featureServer(nil)
		s.AddTool(&Tool{Name: "die", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fatal: out of cheese")
			os.Exit(3)
			return nil, nil
		})
		s.ServeStdio(ctx, nil)
	case "stubborn":
		// Ignores both the end of its stdin and SIGTERM, until killed.
		signal.Ignore(syscall.SIGTERM)
		go featureServer(nil).ServeStdio(ctx, nil)
		time.Sleep(time.Minute)
	case "parent":
		// Starts a grandchild that would outlive it if only it were
		// signalled, then serves.
		gc := childCommand("sleeper")
		gc.Start()
		fmt.Fprintln(os.Stderr, "grandchild", gc.Process.Pid)
		signal.Ignore(syscall.SIGTERM)
		featureServer(nil).ServeStdio(ctx, nil)
		time.Sleep(time.Minute)
	case "exit-on-probe":
		// A session-era server that exits on any request before initialize,
		// as rmcp-based servers do.
		fmt.Fprintln(os.Stderr, "spawned")
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(sc.Bytes(), &m)
			switch m.Method {
			case "initialize":
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"old","version":"1"}}}`+"\n", m.ID)
			case "tools/list":
				fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`+"\n", m.ID)
			case "notifications/initialized":
			default:
				fmt.Fprintln(os.Stderr, "unexpected", m.Method)
				os.Exit(1)
			}
		}
	case "sigterm":
		// Serves until SIGTERM, with its stdin left open by the parent.
		sctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
		defer stop()
		if err := featureServer(nil).ServeStdio(sctx, nil); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "served")
	case "sleeper":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
	default:
		runHostileChild(mode)
	}
	os.Exit(0)
}

type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// childCommand runs this test binary as the subprocess of mode.
func childCommand(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

func childTransport(mode string, logs *logBuffer) *CommandTransport {
	return &CommandTransport{
		Command:          childCommand(mode),
		TerminateTimeout: 200 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(logs, nil)),
	}
}

func TestCommandTransport(t *testing.T) {
	var logs logBuffer
	tr := childTransport("server", &logs)
	tr.TerminateTimeout = 10 * time.Second // a loaded machine is slow to exit; no signal is wanted here
	cs, err := NewClient(nil, nil).Connect(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), "echo", map[string]string{"text": "over a pipe"})
	if err != nil || res.Content[0].(*TextContent).Text != "over a pipe" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	// The server's stderr is logged, not taken for failure.
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "child ready") })
	if err := cs.Close(); err != nil {
		t.Error(err)
	}
	// Closing stdin was enough: the process exited on its own.
	if st := tr.Command.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Errorf("process state after Close: %v", st)
	}
}

// A server that dies mid-call fails that call with how it died.
func TestCommandTransportServerDies(t *testing.T) {
	defer checkGoroutines(t)()
	cs, err := NewClient(nil, nil).Connect(context.Background(), childTransport("server", &logBuffer{}))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(context.Background(), "die", nil)
	if !errors.Is(err, ErrConnectionClosed) || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "out of cheese") {
		t.Fatalf("got %v", err)
	}
	if _, err := cs.CallTool(context.Background(), "echo", map[string]string{"text": "x"}); !errors.Is(err, ErrConnectionClosed) {
		t.Errorf("after death: %v", err)
	}
}

// Close stops the server and everything it started: a server that
// ignores the end of stdin and SIGTERM is killed, and so is what a server
// started (a wrapper's real server, as under npx) even when the server
// itself exits as asked.
func TestCommandTransportKillsStubbornServer(t *testing.T) {
	tests := []struct {
		mode   string
		killed bool // the server itself needs SIGKILL
	}{
		{"stubborn", true},
		{"parent", true},
		// It exits when its stdin closes (or at SIGTERM, on a machine
		// too loaded to exit within TerminateTimeout): its grandchild
		// is the point.
		{"wrapper", false},
	}
	for _, tc := range tests {
		t.Run(tc.mode, func(t *testing.T) {
			var logs logBuffer
			tr := childTransport(tc.mode, &logs)
			cs, err := NewClient(nil, nil).Connect(context.Background(), tr)
			if err != nil {
				t.Fatal(err)
			}
			var grandchild int
			if tc.mode != "stubborn" {
				grandchild = grandchildPid(t, &logs)
			}
			cs.Close()
			st := tr.Command.ProcessState
			switch {
			case st == nil:
				t.Errorf("the server was not reaped by Close")
			case tc.killed && st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL:
				t.Errorf("process state after Close: %v; want killed", st)
			}
			if grandchild > 0 {
				waitGone(t, "grandchild", grandchild)
			}
		})
	}
}

// A session-era server that exits on the server/discover probe is started
// again and initialized (and remembered, so the next connection does not
// probe it).
func TestProbeRespawnsServerThatExits(t *testing.T) {
	var logs logBuffer
	tr := childTransport("exit-on-probe", &logs)
	c := NewClient(nil, nil)
	for range 2 {
		cs, err := c.Connect(context.Background(), tr)
		if err != nil {
			t.Fatal(err)
		}
		if v := cs.ProtocolVersion(); v != "2025-06-18" {
			t.Errorf("negotiated %q", v)
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Error(err)
		}
		cs.Close()
	}
	if n := strings.Count(logs.String(), "spawned"); n != 3 {
		t.Errorf("spawned %d times, want 3 (probe, initialize, then initialize without a probe)\n%s", n, logs.String())
	}
}

// An answer over CommandTransport.MaxMessageSize fails its call only, with
// a MessageTooLargeError naming the limit and the option that raises it;
// the next call on the session succeeds.
func TestCommandTransportOversizedAnswerFailsOnlyItsCall(t *testing.T) {
	tr := childTransport("server", &logBuffer{})
	tr.MaxMessageSize = 1024
	cs, err := NewClient(nil, nil).Connect(context.Background(), tr)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	_, err = cs.CallTool(context.Background(), "echo", map[string]string{"text": strings.Repeat("x", 2000)})
	var tooLarge *MessageTooLargeError
	if !errors.Is(err, ErrMessageTooLarge) || !errors.As(err, &tooLarge) || tooLarge.Limit != 1024 ||
		!strings.Contains(err.Error(), "1024-byte limit") || !strings.Contains(err.Error(), "CommandTransport.MaxMessageSize") {
		t.Fatalf("got %v; want a MessageTooLargeError naming the 1024-byte limit and CommandTransport.MaxMessageSize", err)
	}
	res, err := cs.CallTool(context.Background(), "echo", map[string]string{"text": "small"})
	if err != nil || res.Content[0].(*TextContent).Text != "small" {
		t.Fatalf("the next call: %+v %v", res, err)
	}
}

// A crashed server's error says what failed (the error line, not the
// stack frames after it): Node's, as a missing module prints it.
func TestTellingStderrLines(t *testing.T) {
	node := []string{
		"node:internal/modules/cjs/loader:1228",
		"  throw err;",
		"  ^",
		"",
		"Error: Cannot find module 'express'",
		"Require stack:",
		"- /srv/app/server.js",
		"    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)",
		"    at ModuleJob._link (node:internal/modules/esm/module_job:95:21)",
		"    at Object.<anonymous> (/srv/app/server.js:1:17) {",
		"  code: 'MODULE_NOT_FOUND',",
		"}",
		"",
		"Node.js v20.11.0",
	}
	var first string
	for _, l := range node {
		if first == "" && errorLine(l) {
			first = l
		}
	}
	got := strings.Join(telling(first, node), " | ")
	if !strings.HasPrefix(got, "Error: Cannot find module 'express'") || strings.Contains(got, "ModuleJob._link") {
		t.Errorf("telling lines: %q", got)
	}
}

// The command line names the server in every log line of its
// connection: a secret among its arguments must not be in it.
func TestCommandNameInLogsHidesSecretArguments(t *testing.T) {
	for _, args := range [][]string{
		{"npx", "-y", "@neondatabase/mcp-server-neon@0.3.7", "start", "napi_dummy00000000000000000000000000000000000"},
		{"npx", "-y", "some-server", "vT9eZIIJvjiwBS21IDfXlSms"},
		{"npx", "-y", "@stripe/mcp@0.2.5", "--api-key", "sk_test_dummy00000000000000000000"},
	} {
		name := cmdName(exec.Command(args[0], args[1:]...))
		if secret := args[len(args)-1]; strings.Contains(name, secret) {
			t.Errorf("%q shows %q", name, secret)
		}
		if !strings.Contains(name, args[2]) {
			t.Errorf("%q lost the package %q", name, args[2])
		}
	}
}
