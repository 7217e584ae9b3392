package cluster_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/cluster"
	"github.com/mcpgate/mcpgate/conformance"
	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

const hangBound = 20 * time.Second // a bound on a hang

// replica is one server process's worth: its own mcp.Server and handler,
// its own connection to the shared Redis.
type replica struct {
	c  *cluster.Cluster
	h  *mcphttp.Handler
	ts *httptest.Server
}

// replicas starts n replicas of the conformance fixtures server sharing
// redis, behind a real HAProxy in round robin without stickiness.
func replicas(t *testing.T, redisURL string, n int) ([]*replica, string) {
	return replicasTB(t, redisURL, n, nil)
}

// replicasTB is replicas with each replica's options set by opts.
func replicasTB(t testing.TB, redisURL string, n int, opts func(*mcphttp.Options)) ([]*replica, string) {
	t.Helper()
	var rs []*replica
	var backends []string
	for range n {
		c, err := cluster.Open(context.Background(), cluster.Options{URL: redisURL})
		if err != nil {
			t.Fatal(err)
		}
		o := &mcphttp.Options{Cluster: c, KeepAlive: time.Second}
		if opts != nil {
			opts(o)
		}
		h := mcphttp.NewHandler(conformance.NewServer(), o)
		ts := httptest.NewServer(h)
		r := &replica{c: c, h: h, ts: ts}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h.Shutdown(ctx)
			ts.Close()
			c.Close()
		})
		rs = append(rs, r)
		backends = append(backends, strings.TrimPrefix(ts.URL, "http://"))
	}
	lb := testservice.HAProxy(t, backends, nil)
	return rs, lb.URL() + "/mcp"
}

// TestSessionAcrossReplicas follows one session-era client through a
// round-robin load balancer in front of three replicas: every request
// may land on another replica, and the session behaves as with one.
func TestSessionAcrossReplicas(t *testing.T) {
	redis := testservice.Redis(t)
	rs, url := replicas(t, redis.URL(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangBound)
	defer cancel()

	var mu sync.Mutex
	var progress, logs int
	cs := connectAnswering(ctx, t, url, &mu, &logs)
	for range 6 {
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) == 0 {
			t.Fatalf("tools/list: %v, %v", res, err)
		}
	}
	pctx := mcp.WithProgress(ctx, func(*mcp.ProgressNotificationParams) {
		mu.Lock()
		progress++
		mu.Unlock()
	})
	text := func(name string, args any) string {
		t.Helper()
		res, err := cs.CallTool(pctx, name, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError || len(res.Content) == 0 {
			t.Fatalf("%s: %+v", name, res)
		}
		tc, _ := res.Content[0].(*mcp.TextContent)
		if tc == nil {
			t.Fatalf("%s: %+v", name, res.Content[0])
		}
		return tc.Text
	}
	for range 3 {
		text("test_tool_with_progress", nil)
	}
	if err := cs.SetLoggingLevel(ctx, "debug"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		text("test_tool_with_logging", nil)
	}
	for i := range 3 {
		if got := text("test_elicitation", map[string]any{"message": "who are you?"}); !strings.Contains(got, "ada@example.com") {
			t.Fatalf("elicitation %d: the answer did not reach the call: %q", i, got)
		}
	}
	for range 3 {
		if got := text("test_reconnection", nil); !strings.Contains(got, "completed") {
			t.Fatalf("reconnection: %q", got)
		}
	}
	mu.Lock()
	if progress < 3 || logs < 3 {
		t.Errorf("progress notifications %d, log messages %d: want at least 3 of each", progress, logs)
	}
	mu.Unlock()
	for i, r := range rs {
		if r.h.SessionCount() == 0 {
			t.Errorf("replica %d served none of the session's requests: the load balancer is not spreading them", i)
		}
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(hangBound)
	for {
		records, err := rs[0].c.SessionCount(ctx)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, r := range rs {
			total += r.h.SessionCount()
		}
		if records == 0 && total == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after DELETE %d records and %d copies remain", records, total)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = http.StatusOK

// TestTaskAcrossReplicas creates a task through one replica and polls it,
// answers its question and fetches its result through whichever replicas
// the load balancer picks: each request about the task is handed to the
// replica that runs it.
func TestTaskAcrossReplicas(t *testing.T) {
	redis := testservice.Redis(t)
	rs, url := replicas(t, redis.URL(), 3)
	for _, version := range []string{mcp.Version20251125, mcp.Version20260728} {
		t.Run(version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*hangBound)
			defer cancel()
			c := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{
				ProtocolVersion: version,
				ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
			})
			cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			for i := range 3 {
				res, err := cs.CallToolAsTask(ctx, &mcp.CallToolParams{Name: "test_tool_with_task"}, &mcp.TaskCallOptions{PollInterval: 50 * time.Millisecond})
				if err != nil {
					t.Fatalf("task %d: %v", i, err)
				}
				if res.IsError {
					t.Fatalf("task %d: %+v", i, res)
				}
			}
		})
	}
	_ = rs
}

// TestListChangedReachesEverySession opens sessions spread over three
// replicas, each with its GET stream held by one of them, and changes
// the tool list on one replica: every session hears of it once.
func TestListChangedReachesEverySession(t *testing.T) {
	redis := testservice.Redis(t)
	rs, url := replicas(t, redis.URL(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangBound)
	defer cancel()
	const sessions = 12
	var mu sync.Mutex
	heard := make([]int, sessions)
	var css []*mcp.ClientSession
	for i := range sessions {
		c := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{
			ProtocolVersion: mcp.Version20251125,
			ToolListChangedHandler: func(context.Context, *mcp.ClientSession) {
				mu.Lock()
				heard[i]++
				mu.Unlock()
			},
		})
		cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		css = append(css, cs)
	}
	// Every GET stream held somewhere before the change.
	for deadline := time.Now().Add(hangBound); ; {
		keys, err := rs[0].c.Redis().Keys(ctx, "mcpgate:hold:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) == sessions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d GET streams held", len(keys), sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := css[0].CallTool(ctx, "test_trigger_tool_change", nil); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(hangBound); ; {
		mu.Lock()
		missing := 0
		for _, n := range heard {
			if n == 0 {
				missing++
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sessions never heard of the change", missing, sessions)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A round trip on every session: a duplicate sent with the first
	// would have arrived by now.
	for _, cs := range css {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, n := range heard {
		if n != 1 {
			t.Errorf("session %d heard of the change %d times, want once", i, n)
		}
	}
}

// TestRedisRestartedWithoutData stops the shared Redis under a session
// that every replica holds a copy of, and starts it again empty (no
// persistence): calls go on while it is down, new sessions are refused
// with 503, and once it is back the replicas save their sessions again,
// so that a replica that never held the session can load it.
func TestRedisRestartedWithoutData(t *testing.T) {
	rd := testservice.Redis(t)
	rs, url := replicas(t, rd.URL(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*hangBound)
	defer cancel()
	connect := func() (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
		return c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true, MaxRetries: 1})
	}
	cs, err := connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 6 {
		if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
			t.Fatal(err)
		}
	}
	rd.Stop()
	for i := range 6 {
		if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
			t.Fatalf("call %d while Redis is down, on a session every replica holds: %v", i, err)
		}
	}
	_, err = connect()
	var he *mcphttp.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable {
		t.Fatalf("a new session while Redis is down: %v, want a 503", err)
	}
	rd.Start()
	for deadline := time.Now().Add(hangBound); ; {
		n, err := rs[0].c.SessionCount(ctx)
		if err == nil && n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replicas did not save their session again after Redis came back (%d records, %v)", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := cs.CallTool(ctx, "test_simple_text", nil); err != nil {
		t.Fatal(err)
	}
	cs2, err := connect()
	if err != nil {
		t.Fatalf("a new session after Redis came back: %v", err)
	}
	cs2.Close()
}

// TestRouteRunsCallsOnOneReplica routes every tools/call of a session to
// one replica (as the gateway does for a server with an upstream process
// per session): wherever the POST lands, the call runs there, with its
// progress, logs, elicitation and resumption as if it ran where it
// landed, and the context values the carrier saves arrive with it.
func TestRouteRunsCallsOnOneReplica(t *testing.T) {
	rd := testservice.Redis(t)
	var home atomic.Value // the tag of the replica that runs the calls
	home.Store("")
	var mu sync.Mutex
	ranOn := map[string]int{}
	type carried struct{}
	rs, url := replicasTB(t, rd.URL(), 3, func(o *mcphttp.Options) {
		c := o.Cluster
		o.Route = func(ctx context.Context, _ string, msg *jsonrpc.Message) string {
			if msg.Method == "tools/call" {
				return home.Load().(string)
			}
			return ""
		}
		o.CarryContext = &mcphttp.ContextCarrier{
			Save: func(ctx context.Context) ([]byte, error) { return []byte(`"from ` + c.Tag() + `"`), nil },
			Restore: func(ctx context.Context, saved []byte) context.Context {
				mu.Lock()
				ranOn[c.Tag()]++
				mu.Unlock()
				return context.WithValue(ctx, carried{}, string(saved))
			},
		}
	})
	home.Store(rs[0].c.Tag())
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangBound)
	defer cancel()
	var progress, logs int
	cs := connectAnswering(ctx, t, url, &mu, &logs)
	defer cs.Close()
	pctx := mcp.WithProgress(ctx, func(*mcp.ProgressNotificationParams) {
		mu.Lock()
		progress++
		mu.Unlock()
	})
	if err := cs.SetLoggingLevel(ctx, "debug"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		for _, name := range []string{"test_simple_text", "test_tool_with_progress", "test_tool_with_logging", "test_elicitation", "test_reconnection"} {
			res, err := cs.CallTool(pctx, name, map[string]any{"message": "who?"})
			if err != nil || res.IsError {
				t.Fatalf("round %d, %s: %v %+v", i, name, err, res)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if progress < 3 || logs < 3 {
		t.Errorf("progress notifications %d, log messages %d: want at least 3 of each", progress, logs)
	}
	if len(ranOn) != 1 || ranOn[rs[0].c.Tag()] == 0 {
		t.Errorf("calls handed over ran on %v, want only on the home replica %s", ranOn, rs[0].c.Tag())
	}
}

// TestTaskPolledAndCancelledThroughOtherReplicas creates a long task
// through one replica, then polls and cancels it through whichever
// replicas the load balancer picks: each answer comes from the replica
// running the task.
func TestTaskPolledAndCancelledThroughOtherReplicas(t *testing.T) {
	rd := testservice.Redis(t)
	_, url := replicas(t, rd.URL(), 3)
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var created struct {
		Task struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := cs.Call(ctx, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 30, "label": "long"}, "task": map[string]any{"ttl": 60000}}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Task.TaskID
	if id == "" || created.Task.Status != "working" {
		t.Fatalf("created %+v", created)
	}
	type task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	for i := range 4 {
		var got task
		if err := cs.Call(ctx, "tasks/get", map[string]any{"taskId": id}, &got); err != nil {
			t.Fatalf("poll %d: %v", i, err)
		}
		if got.Status != "working" {
			t.Fatalf("poll %d: %+v, want working", i, got)
		}
	}
	var cancelled task
	if err := cs.Call(ctx, "tasks/cancel", map[string]any{"taskId": id}, &cancelled); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		var got task
		if err := cs.Call(ctx, "tasks/get", map[string]any{"taskId": id}, &got); err != nil {
			t.Fatalf("poll %d after cancel: %v", i, err)
		}
		if got.Status != "cancelled" {
			t.Fatalf("poll %d after cancel: %+v, want cancelled", i, got)
		}
	}
}

// connectAnswering connects a 2025-11-25 client through url that answers
// every elicitation as Ada and counts the log messages it gets in *logs
// (under mu).
func connectAnswering(ctx context.Context, t *testing.T, url string, mu *sync.Mutex, logs *int) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, &mcp.ClientOptions{
		ProtocolVersion: mcp.Version20251125,
		ElicitationHandler: func(ctx context.Context, _ *mcp.ClientSession, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		},
		LoggingMessageHandler: func(context.Context, *mcp.ClientSession, *mcp.LoggingMessageParams) {
			mu.Lock()
			*logs++
			mu.Unlock()
		},
	})
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
