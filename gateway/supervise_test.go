package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// stuckEnv, set, makes the test binary serve runStuck's server over
// stdio (see TestMain).
const stuckEnv = "MCPGATE_TEST_STUCK"

// runStuck serves over stdio a server that can be made to stop
// answering: on a call of freeze it stops reading anything (a server
// stuck in a loop or a deadlock), ignoring SIGTERM; a call of job, which
// runs only as a task, it never answers. It first starts a child in its
// process group, as npx starts node, which ignores SIGTERM too.
func runStuck() {
	child := exec.Command(os.Args[0])
	child.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, stuckEnv+"=") })
	child.Env = append(child.Env, hostileEnv+"=sleeper")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "could not start the child:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "stuck server pid %d child %d\n", os.Getpid(), child.Process.Pid)
	tool := func(name string, extra map[string]any) map[string]any {
		t := map[string]any{"name": name, "inputSchema": map[string]any{"type": "object"}}
		maps.Copy(t, extra)
		return t
	}
	tools := []any{tool("freeze", nil), tool("pid", nil), tool("job", map[string]any{"execution": map[string]any{"taskSupport": "required"}})}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct{ Name string }
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || m.ID == nil || m.Method == "" {
			continue // notifications, answers
		}
		var result any = map[string]any{}
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-11-25", "serverInfo": map[string]any{"name": "stuck", "version": "1"},
				"capabilities": map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}}}
		case "tools/list":
			result = map[string]any{"tools": tools}
		case "tools/call":
			switch m.Params.Name {
			case "freeze":
				fmt.Fprintln(os.Stderr, "freezing")
				signal.Ignore(syscall.SIGTERM)
				time.Sleep(time.Hour)
			case "job":
				fmt.Fprintln(os.Stderr, "job waiting")
				continue
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": strconv.Itoa(os.Getpid())}}}
		}
		out.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}

// gone reports whether pid has exited (or waits to be reaped).
func gone(pid int) bool { return syscall.Kill(pid, 0) != nil || isZombie(pid) }

// Issue 21: a stdio server that stops answering (a call times out, and
// a ping after it too) is killed, its process group with it, and started
// again; a call still waiting on it fails at once with the timeout's
// code and says why. The waiting call here is a task of the upstream's,
// which no timeout bounds: without the kill it would wait for ever.
func TestHungStdioServerIsKilledAndRestarted(t *testing.T) {
	var logs logBuffer
	stuck := &configServer{Name: "stuck", Command: os.Args[0], Env: map[string]string{stuckEnv: "1"},
		ServerOptions: config.ServerOptions{ProtocolVersion: "2025-11-25", Start: "eager", Timeout: config.Duration(time.Second)}}
	g, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, stuck)
	m := regexp.MustCompile(`stuck server pid (\d+) child (\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no pids in the log:\n%s", logs.String())
	}
	pid, _ := strconv.Atoi(m[1])
	child, _ := strconv.Atoi(m[2])

	ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
	defer cancel()
	waiting := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, "stuck_job", nil)
		waiting <- err
	}()
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "job waiting") }, "the job to run")
	if _, err := cs.CallTool(ctx, "stuck_freeze", nil); rpcCode(err) != CodeUpstreamTimeout {
		t.Fatalf("the call that froze the server: %v, want code %d", err, CodeUpstreamTimeout)
	}
	err := <-waiting
	if rpcCode(err) != CodeUpstreamTimeout || !strings.Contains(err.Error(), "stopped answering") {
		t.Fatalf("the call waiting on the frozen server: %v, want code %d saying it stopped answering", err, CodeUpstreamTimeout)
	}
	waitUntil(t, func() bool { return gone(pid) && gone(child) }, "the server %d and its child %d to be killed", pid, child)
	waitUntil(t, func() bool { st := stateOf(g, "stuck"); return st.State == StateReady && st.Restarts == 1 }, "the server to be started again")
	if got := callText(t, cs, "stuck_pid", nil); got == strconv.Itoa(pid) {
		t.Errorf("the frozen process %s answered after the restart", got)
	}
}

// Issue 21: a server that is slow on one call but answers a ping is not
// killed: the call times out, the server stays.
func TestSlowServerThatAnswersIsKept(t *testing.T) {
	var logs logBuffer
	alpha := stdioServer("alpha")
	alpha.Start = "eager"
	alpha.Timeout = config.Duration(500 * time.Millisecond)
	g, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, alpha)
	pid := callText(t, cs, "alpha_pid", nil)
	if _, err := cs.CallTool(context.Background(), "alpha_slow", nil); rpcCode(err) != CodeUpstreamTimeout {
		t.Fatalf("the slow call: %v, want code %d", err, CodeUpstreamTimeout)
	}
	waitUntil(t, func() bool { return strings.Contains(logs.String(), "answers a ping; keeping it") }, "the server to be checked")
	if st := stateOf(g, "alpha"); st.Restarts != 0 || st.State != StateReady {
		t.Errorf("the slow server after the check: %+v", st)
	}
	if got := callText(t, cs, "alpha_pid", nil); got != pid {
		t.Errorf("another process (%s, was %s) answers: the slow server was restarted", got, pid)
	}
}

// flaky serves over HTTP a server whose tools' first calls each lose
// their connection after the request was read, before any answer, and
// counts the calls of each tool that reached it.
type flaky struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string]int
}

func newFlaky(t *testing.T) *flaky {
	f := &flaky{calls: map[string]int{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "shop", Version: "1"}, nil)
	for _, tool := range []*mcp.Tool{
		{Name: "lookup", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		{Name: "stock", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		{Name: "charge"},
	} {
		mcp.AddTool(s, tool, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return mcp.TextResult(tool.Name + " done"), nil, nil
		})
	}
	h := mcphttp.NewHandler(s, nil)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string
				Params struct{ Name string }
			}
			json.Unmarshal(body, &msg)
			if msg.Method == "tools/call" {
				f.mu.Lock()
				f.calls[msg.Params.Name]++
				first := f.calls[msg.Params.Name] == 1
				f.mu.Unlock()
				if first {
					if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
						conn.Close()
					}
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Shutdown(ctx)
		f.srv.Close()
	})
	return f
}

func (f *flaky) count(tool string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[tool]
}

// Issue 21: a call whose connection fails before an answer, after the
// request may have reached the server, is sent again when the tool says
// it is safe to run twice (idempotent or read-only), and then succeeds;
// another is not, and its error says it may have run.
func TestDroppedConnectionResendsOnlySafeCalls(t *testing.T) {
	tests := []struct {
		tool     string
		wantErr  int64 // 0: the call succeeds
		wantRuns int   // the calls that reached the server
	}{
		{"lookup", 0, 2},
		{"stock", 0, 2},
		{"charge", CodeUpstreamFailed, 1},
	}
	var logs logBuffer
	f := newFlaky(t)
	shop := &configServer{Name: "shop", URL: f.srv.URL + "/mcp", Type: "http", ServerOptions: config.ServerOptions{HealthInterval: config.Duration(time.Hour)}}
	_, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, shop)
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
			defer cancel()
			res, err := cs.CallTool(ctx, "shop_"+tt.tool, nil)
			switch {
			case tt.wantErr == 0 && (err != nil || res.IsError):
				t.Errorf("got %+v %v, want the call to succeed", res, err)
			case tt.wantErr != 0 && (rpcCode(err) != tt.wantErr || !strings.Contains(err.Error(), "may have reached the server")):
				t.Errorf("got %v, want code %d saying the call may have run", err, tt.wantErr)
			}
			if n := f.count(tt.tool); n != tt.wantRuns {
				t.Errorf("the server got %d calls, want %d", n, tt.wantRuns)
			}
		})
	}
}

// Issue 21: an upstream that refuses the gateway's credentials is
// auth-failed, its error saying what the operator must do, and is not
// tried again (the upstream counts the requests) until an operator
// retries it.
func TestRefusedCredentialsAreAuthFailedUntilRetried(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		bearer  string
		headers map[string]string
		want    string
	}{
		{"a bearer token refused", http.StatusUnauthorized, "stale-token", nil, "check the server's headers and bearerToken"},
		{"an API key forbidden", http.StatusForbidden, "", map[string]string{"X-Api-Key": "k-123"}, "check the server's headers and bearerToken"},
		{"no credentials configured", http.StatusUnauthorized, "", nil, "none are configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs logBuffer
			var hits atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.WriteHeader(tt.status)
			}))
			t.Cleanup(srv.Close)
			locked := &configServer{Name: "locked", URL: srv.URL + "/mcp", Type: "http", BearerToken: tt.bearer, Headers: tt.headers}
			g := runGateway(t, &logs, locked)
			waitUntil(t, func() bool { return stateOf(g, "locked").State == StateAuthFailed }, "locked to be auth-failed")
			if e := stateOf(g, "locked").Error; !strings.Contains(e, tt.want) || !strings.Contains(e, "mcpgate status --retry locked") || strings.Contains(e, "k-123") {
				t.Errorf("the status's error %q does not say what to do (%q, and how to retry), or holds the key", e, tt.want)
			}
			n := hits.Load()
			time.Sleep(1500 * time.Millisecond) // longer than the first backoffs: a retry would show
			if hits.Load() != n {
				t.Fatalf("the refusing upstream was tried again by itself: %d requests, then %d", n, hits.Load())
			}
			if !g.Retry("locked") {
				t.Fatal("Retry does not know locked")
			}
			waitUntil(t, func() bool { return hits.Load() > n }, "a request after the retry")
			waitUntil(t, func() bool { return stateOf(g, "locked").State == StateAuthFailed }, "locked to be auth-failed again")
		})
	}
}

// Issue 21: an upstream that answers a call with 429 and a Retry-After
// is left alone for that long: the call fails with CodeRateLimited and
// data.retryAfterMs, the next call within the window fails the same way
// without reaching the upstream, and the upstream is not down for it.
func TestRateLimitedUpstreamIsLeftAloneAsAsked(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
	}{
		{"seconds", "60"},
		{"an HTTP date", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			var calls atomic.Int32
			h := mcphttp.NewHandler(testUpstream("busy"), nil)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPost {
					body, _ := io.ReadAll(r.Body)
					r.Body = io.NopCloser(bytes.NewReader(body))
					if bytes.Contains(body, []byte(`"tools/call"`)) && calls.Add(1) == 1 {
						w.Header().Set("Retry-After", tt.retryAfter)
						http.Error(w, "slow down", http.StatusTooManyRequests)
						return
					}
				}
				h.ServeHTTP(w, r)
			}))
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				h.Shutdown(ctx)
				srv.Close()
			})
			busy := &configServer{Name: "busy", URL: srv.URL + "/mcp", Type: "http", ServerOptions: config.ServerOptions{HealthInterval: config.Duration(time.Hour)}}
			g, cs := startGateway(t, &logs, &mcp.ClientOptions{ProtocolVersion: "2025-11-25"}, busy)
			for i := range 2 {
				_, err := cs.CallTool(context.Background(), "busy_echo", map[string]string{"text": "x"})
				var e *jsonrpc.Error
				if !errors.As(err, &e) || e.Code != CodeRateLimited {
					t.Fatalf("call %d: %v, want code %d", i, err, CodeRateLimited)
				}
				var data struct{ RetryAfterMs int64 }
				json.Unmarshal(e.Data, &data)
				if data.RetryAfterMs < 50_000 {
					t.Errorf("call %d: retryAfterMs %d, want about the minute or hour asked (%s)", i, data.RetryAfterMs, e.Data)
				}
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("the upstream got %d calls, want 1: the second came within the window it asked for", n)
			}
			if st := stateOf(g, "busy"); st.State != StateReady {
				t.Errorf("the rate-limited upstream is %s (%s), want ready", st.State, st.Error)
			}
		})
	}
}
