package main

// Replicas of the real binary behind a real HAProxy, round robin with no
// stickiness, so that consecutive requests of one client reach different
// replicas: a session-era session lives through Redis, a 2026-07-28
// client needs nothing shared.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

var (
	fixturesReady = regexp.MustCompile(`conformance fixtures on (http://\S+)/mcp`)
	serveReady    = regexp.MustCompile(`mcpgate is listening on (http://\S+)/mcp`)
)

// replicaProc is one mcpgate process of a cluster.
type replicaProc struct {
	cmd    *exec.Cmd
	addr   string // host:port
	exited chan struct{}

	mu     sync.Mutex
	stderr bytes.Buffer
}

func (r *replicaProc) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stderr.String()
}

// startReplica runs the binary with args, which must listen on a port of
// the kernel's choosing, and waits for ready to name its URL.
func startReplica(t *testing.T, ready *regexp.Regexp, args ...string) *replicaProc {
	t.Helper()
	r := &replicaProc{cmd: exec.Command(binary, args...), exited: make(chan struct{})}
	// Whatever the developer's shell says: a replica shares state only
	// in the Redis its arguments name.
	r.cmd.Env = append(os.Environ(), "MCPGATE_REDIS_URL=", "MCPGATE_REPLICA_ID=")
	errPipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urlc := make(chan string, 1)
	go func() {
		defer close(r.exited)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			r.mu.Lock()
			r.stderr.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
		r.cmd.Wait()
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			t.Logf("replica %s:\n%s", r.addr, r.log())
		}
	})
	select {
	case u := <-urlc:
		r.addr = strings.TrimPrefix(u, "http://")
	case <-r.exited:
		t.Fatalf("mcpgate %s exited before listening:\n%s", strings.Join(args, " "), r.log())
	case <-time.After(waitFor):
		t.Fatalf("mcpgate %s did not start listening:\n%s", strings.Join(args, " "), r.log())
	}
	return r
}

// startCluster starts n replicas (args(i) for the i-th) and HAProxy in
// front of them, and returns the front's MCP endpoint.
func startCluster(t *testing.T, n int, ready *regexp.Regexp, args func(i int) []string) string {
	t.Helper()
	var backends []string
	for i := range n {
		backends = append(backends, startReplica(t, ready, args(i)...).addr)
	}
	// MaxConn: the default needs more descriptors than some machines
	// allow, and this test needs few.
	h := testservice.HAProxy(t, backends, &testservice.HAProxyOptions{MaxConn: 1024})
	return h.URL() + "/mcp"
}

// sessionRecorder notes the session id requests carry and the status of
// each DELETE, so that the test can check the session ended everywhere.
type sessionRecorder struct {
	mu      sync.Mutex
	id      string
	deletes []int
}

func (s *sessionRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if id := req.Header.Get("Mcp-Session-Id"); id != "" {
		s.id = id
	}
	if req.Method == http.MethodDelete && err == nil {
		s.deletes = append(s.deletes, resp.StatusCode)
	}
	return resp, err
}

// logCollector collects log notifications.
type logCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCollector) add(p *mcp.LoggingMessageParams) {
	l.mu.Lock()
	l.msgs = append(l.msgs, fmt.Sprint(p.Data))
	l.mu.Unlock()
}

func (l *logCollector) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.msgs
	l.msgs = nil
	return m
}

// A 2025-11-25 session through HAProxy in front of replicas that share
// Redis: each request may reach another replica, and the session, its
// log level, its progress and its end hold all the same.
func TestSessionLivesAcrossReplicasSharingRedis(t *testing.T) {
	for _, tc := range []struct {
		name     string
		replicas int
	}{
		{"one replica behind HAProxy", 1},
		{"three replicas behind round robin", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redis := testservice.Redis(t)
			front := startCluster(t, tc.replicas, fixturesReady, func(i int) []string {
				return []string{"conformance-server", "--addr", "127.0.0.1:0", "--redis", redis.URL(),
					"--replica-id", fmt.Sprintf("replica-%d", i+1), "--log-level", "debug"}
			})
			sessionAcrossReplicas(t, front)
		})
	}
}

func sessionAcrossReplicas(t *testing.T, front string) {
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var got logCollector
	rec := &sessionRecorder{}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{
		ProtocolVersion:       mcp.LatestNegotiatedVersion,
		LoggingMessageHandler: func(_ context.Context, _ *mcp.ClientSession, p *mcp.LoggingMessageParams) { got.add(p) },
	}).Connect(ctx, &mcphttp.ClientTransport{Endpoint: front, HTTPClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatalf("connect through %s: %v", front, err)
	}
	defer cs.Close()
	if v := cs.ProtocolVersion(); v != mcp.LatestNegotiatedVersion {
		t.Fatalf("negotiated %s, want %s", v, mcp.LatestNegotiatedVersion)
	}

	for range 3 { // a round of the replicas
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		if !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "test_tool_with_progress" }) {
			t.Fatalf("tools/list lacks test_tool_with_progress: %d tools", len(res.Tools))
		}
	}

	var progress []float64
	var mu sync.Mutex
	res, err := cs.CallTool(mcp.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
		mu.Lock()
		progress = append(progress, p.Progress)
		mu.Unlock()
	}), "test_tool_with_progress", nil)
	if err != nil || res.IsError {
		t.Fatalf("test_tool_with_progress: %v %+v", err, res)
	}
	mu.Lock()
	if !slices.Equal(progress, []float64{0, 50, 100}) {
		t.Errorf("progress %v, want [0 50 100]", progress)
	}
	mu.Unlock()

	// The level set through one replica governs the tool's log messages
	// on another. A progress callback makes the call's answer wait for
	// the notifications queued before it, log messages included.
	for _, step := range []struct {
		level mcp.LoggingLevel
		want  int
	}{
		{"warning", 0}, // the tool logs at info
		{"info", 3},
		{"error", 0},
	} {
		if err := cs.SetLoggingLevel(ctx, step.level); err != nil {
			t.Fatalf("logging/setLevel %s: %v", step.level, err)
		}
		res, err := cs.CallTool(mcp.WithProgress(ctx, func(*mcp.ProgressNotificationParams) {}), "test_tool_with_logging", nil)
		if err != nil || res.IsError {
			t.Fatalf("test_tool_with_logging at %s: %v %+v", step.level, err, res)
		}
		if msgs := got.take(); len(msgs) != step.want {
			t.Errorf("at level %s the tool's info messages reached the client %d times, want %d: %q", step.level, len(msgs), step.want, msgs)
		}
	}

	rec.mu.Lock()
	id := rec.id
	rec.mu.Unlock()
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	rec.mu.Lock()
	deletes := slices.Clone(rec.deletes)
	rec.mu.Unlock()
	if len(deletes) != 1 || deletes[0] >= 300 {
		t.Errorf("DELETE answered %v, want one 2xx", deletes)
	}
	// Once deleted through one replica, the session is gone on every
	// one: the DELETE is answered after each running replica dropped its
	// copy, so a round of the replicas right after it gets three 404s.
	for i := range 3 {
		if got := postWithSession(t, ctx, front, id); got != http.StatusNotFound {
			t.Fatalf("request %d after the DELETE: status %d, want 404", i, got)
		}
	}
}

// postWithSession sends a ping in session id and returns the status.
func postWithSession(t *testing.T, ctx context.Context, front, id string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, front, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", mcp.LatestNegotiatedVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST with session %s: %v", id, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Three plain `serve` replicas, none told of Redis, behind round robin:
// a 2026-07-28 client carries everything in each request and works; a
// session-era client's second request reaches a replica that never saw
// its session, which is what --redis is for.
func TestPerRequestClientNeedsNoRedisBehindRoundRobin(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasks.db") // one task store for all
	front := startCluster(t, 3, serveReady, func(int) []string {
		return []string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn"}
	})
	for _, tc := range []struct {
		name    string
		version string // offered; "" is the client's default, both eras
		works   bool
	}{
		{"2026-07-28 works", "", true},
		{"2025-11-25 loses its session", mcp.LatestNegotiatedVersion, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			err := perRequestTasks(ctx, front, tc.version)
			switch {
			case tc.works && err != nil:
				t.Fatal(err)
			case !tc.works && err == nil:
				t.Fatal("a session-era client worked through round robin without Redis: are the requests reaching one replica only?")
			case !tc.works && !strings.Contains(err.Error(), "session not found"):
				t.Fatalf("want a session-not-found error, got %v", err)
			}
		})
	}
}

// perRequestTasks creates a task, then reads it back and lists it, each
// request through whichever replica HAProxy picks.
func perRequestTasks(ctx context.Context, front, version string) error {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: version}).
		Connect(ctx, &mcphttp.ClientTransport{Endpoint: front})
	if err != nil {
		return err
	}
	defer cs.Close()
	if version == "" && cs.ProtocolVersion() != mcp.Version20260728 {
		return fmt.Errorf("the default client negotiated %s, want %s", cs.ProtocolVersion(), mcp.Version20260728)
	}
	var id string
	for i := range 3 { // a round of the replicas
		res, err := cs.CallTool(ctx, "create_task", map[string]any{"title": fmt.Sprintf("cluster task %d", i)})
		if err != nil {
			return fmt.Errorf("create_task: %w", err)
		}
		if res.IsError {
			return fmt.Errorf("create_task failed: %+v", res.Content)
		}
		task, _ := res.StructuredContent.(map[string]any)
		id, _ = task["id"].(string)
	}
	if id == "" {
		return errors.New("create_task returned no id")
	}
	for range 3 {
		res, err := cs.CallTool(ctx, "get_task", map[string]any{"id": id})
		if err != nil || res.IsError {
			return fmt.Errorf("get_task %s: %v %+v", id, err, res)
		}
	}
	return nil
}

// Redis unreachable at start is a clear error, never a replica that
// serves without the state it was told to share.
func TestConformanceServerRefusesUnreachableRedis(t *testing.T) {
	dead := "redis://127.0.0.1:" + freeTCPPort(t) + "/0"
	for _, tc := range []struct {
		name, url, want string
	}{
		{"nothing listens", dead, "does not answer"},
		{"not a Redis URL", "http://127.0.0.1/", "want redis://host:port/db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			out, err := exec.CommandContext(ctx, binary, "conformance-server", "--addr", "127.0.0.1:0", "--redis", tc.url).CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("conformance-server with Redis at %s: %v, want a failed exit\n%s", tc.url, err, out)
			}
			if !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "conformance fixtures on") {
				t.Errorf("output %q: want %q and no listening", out, tc.want)
			}
		})
	}
}

// freeTCPPort is a loopback port that nothing listened on a moment ago.
func freeTCPPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// The conformance fixtures' list-change triggers act on every replica of
// conformance-server --redis, as a change of configuration would: after
// the trigger answers, a tools/list reaching any replica agrees.
func TestFixtureListChangesReachEveryReplica(t *testing.T) {
	redis := testservice.Redis(t)
	front := startCluster(t, 3, fixturesReady, func(i int) []string {
		return []string{"conformance-server", "--addr", "127.0.0.1:0", "--redis", redis.URL(), "--log-level", "warn"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20260728}).
		Connect(ctx, &mcphttp.ClientTransport{Endpoint: front})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, want := range []bool{true, false, true} {
		if res, err := cs.CallTool(ctx, "test_trigger_tool_change", nil); err != nil || res.IsError {
			t.Fatalf("test_trigger_tool_change: %v %+v", err, res)
		}
		for range 3 { // a round of the replicas
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "test_dynamic_tool" }); got != want {
				t.Fatalf("after the trigger, a replica lists test_dynamic_tool: %v, want %v", got, want)
			}
		}
	}
}
