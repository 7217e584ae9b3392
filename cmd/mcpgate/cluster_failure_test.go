package main

// Issue 23's failure cases with the real binary: three conformance-server
// replicas sharing one Redis behind a round-robin HAProxy, one of them
// killed with SIGKILL at the worst moment, or Redis taken away under
// load. Each test asserts what the client observed, and never waits
// without a bound.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

const hangBound = 30 * time.Second // a bound on a hang

// failReplica is one conformance-server process of a cluster.
type failReplica struct {
	id     string
	cmd    *exec.Cmd
	addr   string
	exited chan struct{}

	mu  sync.Mutex
	log bytes.Buffer
}

func (r *failReplica) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.log.String()
}

// startFailReplica starts a replica named id sharing redisURL; its output
// goes to the test's log when the test fails, and the cleanup kills it.
func startFailReplica(t *testing.T, redisURL, id string) *failReplica {
	t.Helper()
	r := &failReplica{id: id, exited: make(chan struct{})}
	r.cmd = exec.Command(binary, "conformance-server", "--addr", "127.0.0.1:0", "--redis", redisURL, "--replica-id", id)
	r.cmd.Env = append(r.cmd.Environ(), noClusterEnv...)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			r.mu.Lock()
			r.log.WriteString(line + "\n")
			r.mu.Unlock()
			if rest, ok := strings.CutPrefix(line, "conformance fixtures on http://"); ok {
				addrc <- strings.TrimSuffix(rest, "/mcp")
			}
		}
		r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			t.Logf("replica %s's output:\n%s", id, r.output())
		}
	})
	select {
	case r.addr = <-addrc:
	case <-r.exited:
		t.Fatalf("replica %s exited before listening:\n%s", id, r.output())
	case <-time.After(hangBound):
		t.Fatalf("replica %s did not start listening:\n%s", id, r.output())
	}
	return r
}

// failCluster is three replicas behind HAProxy, sharing a Redis that the
// test also reads, to find which replica runs what.
type failCluster struct {
	t        *testing.T
	redis    *testservice.RedisServer
	rdb      *redis.Client
	replicas map[string]*failReplica
	url      string
}

func startFailCluster(t *testing.T, rs *testservice.RedisServer) *failCluster {
	t.Helper()
	opts, err := redis.ParseURL(rs.URL())
	if err != nil {
		t.Fatal(err)
	}
	c := &failCluster{t: t, redis: rs, rdb: redis.NewClient(opts), replicas: map[string]*failReplica{}}
	t.Cleanup(func() { c.rdb.Close() })
	var backends []string
	for i := range 3 {
		r := startFailReplica(t, rs.URL(), "r"+strconv.Itoa(i))
		c.replicas[r.id] = r
		backends = append(backends, r.addr)
	}
	c.url = testservice.HAProxy(t, backends, nil).URL() + "/mcp"
	return c
}

// killTag kills with SIGKILL the replica whose cluster tag is tag, found
// through the key it keeps alive in Redis, and waits for it to be gone.
// It may be called from a client's handler, so it reports failures with
// Errorf and returns nil.
func (c *failCluster) killTag(tag string) *failReplica {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	id, err := c.rdb.Get(ctx, "mcpgate:alive:"+tag).Result()
	if err != nil {
		c.t.Errorf("no live replica tagged %q: %v", tag, err)
		return nil
	}
	r := c.replicas[id]
	if r == nil {
		c.t.Errorf("the replica tagged %q is %q, not one of this test's", tag, id)
		return nil
	}
	r.cmd.Process.Kill()
	select {
	case <-r.exited:
	case <-ctx.Done():
		c.t.Errorf("replica %s did not die of SIGKILL", id)
		return nil
	}
	return r
}

// eventTap reads what the client reads: the SSE event ids of the
// responses (whose tag names the replica running a POST stream) and the
// task ids (whose tag names the replica running the task).
type eventTap struct {
	mu       sync.Mutex
	postTag  string          // of the latest POST stream event
	getIDs   map[string]bool // the GET stream's event ids heard
	taskTag  string
	tagReady chan struct{} // signalled at each new postTag or taskTag
}

var (
	postEventID = regexp.MustCompile(`^id: ?p([a-z2-7]+)\.\d+-\d+`)
	getEventID  = regexp.MustCompile(`^id: ?(g-\d+)`)
	taskIDTag   = regexp.MustCompile(`"taskId":"([a-z2-7]+)\.`)
)

func newEventTap() *eventTap {
	return &eventTap{getIDs: map[string]bool{}, tagReady: make(chan struct{}, 1)}
}

func (e *eventTap) client() *http.Client { return &http.Client{Transport: e} }

func (e *eventTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		resp.Body = &tapBody{rc: resp.Body, tap: e}
	}
	return resp, err
}

func (e *eventTap) line(l string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	signal := false
	if m := postEventID.FindStringSubmatch(l); m != nil {
		signal = e.postTag != m[1]
		e.postTag = m[1]
	}
	if m := getEventID.FindStringSubmatch(l); m != nil {
		e.getIDs[m[1]] = true
	}
	if m := taskIDTag.FindStringSubmatch(l); m != nil && e.taskTag == "" {
		e.taskTag, signal = m[1], true
	}
	if signal {
		select {
		case e.tagReady <- struct{}{}:
		default:
		}
	}
}

func (e *eventTap) tags() (post, task string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.postTag, e.taskTag
}

func (e *eventTap) heardGET(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.getIDs[id]
}

// tapBody hands each complete line read to the tap, before the client
// sees the bytes.
type tapBody struct {
	rc      io.ReadCloser
	tap     *eventTap
	partial []byte
}

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.partial = append(b.partial, p[:n]...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.tap.line(strings.TrimSuffix(string(b.partial[:i]), "\r"))
		b.partial = b.partial[i+1:]
	}
	if err != nil && len(b.partial) > 0 {
		b.tap.line(string(b.partial))
		b.partial = nil
	}
	return n, err
}

func (b *tapBody) Close() error { return b.rc.Close() }

// connectTapped opens a 2025-11-25 session through the load balancer.
func connectTapped(t *testing.T, ctx context.Context, url string, tap *eventTap, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.ProtocolVersion = mcp.Version20251125
	c := mcp.NewClient(&mcp.Implementation{Name: "cluster-failure-test", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: url, DisableLegacyFallback: true, HTTPClient: tap.client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// wantReplicaStopped fails t unless err is the JSON-RPC error
// CodeReplicaStopped with a message that says what happened.
func wantReplicaStopped(t *testing.T, what string, err error) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		t.Fatalf("%s: no error, want %d", what, mcphttp.CodeReplicaStopped)
	case errors.Is(err, context.DeadlineExceeded):
		t.Fatalf("%s hung past %v: %v", what, hangBound, err)
	case !errors.As(err, &rpcErr) || rpcErr.Code != mcphttp.CodeReplicaStopped:
		t.Fatalf("%s: %v, want the JSON-RPC error %d", what, err, mcphttp.CodeReplicaStopped)
	case !strings.Contains(rpcErr.Message, "stopped"):
		t.Errorf("%s: the message %q does not say the replica stopped", what, rpcErr.Message)
	}
	t.Logf("%s: %v", what, err)
}

// wantSessionGoesOn lists the tools a few times on the session, which
// the surviving replicas now serve.
func wantSessionGoesOn(t *testing.T, ctx context.Context, cs *mcp.ClientSession) {
	t.Helper()
	for i := range 3 {
		res, err := cs.ListTools(ctx, nil)
		if err != nil || len(res.Tools) == 0 {
			t.Fatalf("tools/list %d after the kill: %v, %v", i, res, err)
		}
	}
}

// Issue 23: a replica killed while it runs a call that reports progress;
// the client's call ends with -32012 (or its result, if the kill came
// too late to matter), and the session's next requests succeed on the
// replicas left.
func TestKilledReplicaFailsItsProgressCallAndTheSessionGoesOn(t *testing.T) {
	c := startFailCluster(t, testservice.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	tap := newEventTap()
	cs := connectTapped(t, ctx, c.url, tap, nil)
	wantSessionGoesOn(t, ctx, cs)

	var killed atomic.Bool
	pctx := mcp.WithProgress(ctx, func(*mcp.ProgressNotificationParams) {
		if killed.Swap(true) {
			return
		}
		tag, _ := tap.tags()
		c.killTag(tag)
	})
	// Ten seconds of work, progress every tenth: the kill lands long
	// before the answer could.
	res, err := cs.CallTool(pctx, "slow_compute", map[string]any{"seconds": 10, "label": "long"})
	if t.Failed() {
		t.FailNow()
	}
	if !killed.Load() {
		t.Fatalf("no progress notification came: %v, %v", res, err)
	}
	wantReplicaStopped(t, "the call running on the killed replica", err)
	wantSessionGoesOn(t, ctx, cs)
}

// Issue 23: a replica killed while it runs a call blocked on an
// elicitation it relayed to the client; the call fails with -32012 and
// the session goes on.
func TestKilledReplicaFailsItsElicitingCallAndTheSessionGoesOn(t *testing.T) {
	c := startFailCluster(t, testservice.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	tap := newEventTap()
	var killed atomic.Bool
	cs := connectTapped(t, ctx, c.url, tap, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ClientSession, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
			tag, _ := tap.tags()
			killed.Store(true)
			c.killTag(tag)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com"}}, nil
		},
	})
	wantSessionGoesOn(t, ctx, cs)
	_, err := cs.CallTool(ctx, "test_elicitation", map[string]any{"message": "who are you?"})
	if t.Failed() {
		t.FailNow()
	}
	if !killed.Load() {
		t.Fatalf("no elicitation came: %v", err)
	}
	wantReplicaStopped(t, "the call blocked on the killed replica", err)
	wantSessionGoesOn(t, ctx, cs)
}

// Issue 23: a replica killed while it runs a task that the client polls
// (through whichever replica the load balancer picks); the polling ends
// with -32012, and the session goes on.
func TestKilledReplicaFailsTheTaskItRuns(t *testing.T) {
	c := startFailCluster(t, testservice.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	tap := newEventTap()
	cs := connectTapped(t, ctx, c.url, tap, nil)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := cs.CallToolAsTask(ctx, &mcp.CallToolParams{Name: "slow_compute", Arguments: json.RawMessage(`{"seconds":600,"label":"long"}`)}, nil)
		done <- outcome{res, err}
	}()
	var task string
	for task == "" {
		select {
		case <-tap.tagReady:
			_, task = tap.tags()
		case o := <-done:
			t.Fatalf("the call ended before any task id was seen: %+v, %v", o.res, o.err)
		case <-ctx.Done():
			t.Fatal("no task id seen")
		}
	}
	if c.killTag(task) == nil {
		t.FailNow()
	}
	select {
	case o := <-done:
		wantReplicaStopped(t, "polling the task of the killed replica", o.err)
	case <-ctx.Done():
		t.Fatalf("polling the task of the killed replica hung past %v", hangBound)
	}
	wantSessionGoesOn(t, ctx, cs)
}

// Issue 23: the replica holding a session's GET stream is killed while
// list changes flow; the client reconnects with Last-Event-ID on another
// replica and hears every event that was stored for the stream, and the
// changes made once it is back.
func TestKilledReplicaGETStreamResumesElsewhereWithEveryStoredEvent(t *testing.T) {
	c := startFailCluster(t, testservice.Redis(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*hangBound)
	defer cancel()
	tap := newEventTap()
	var heard atomic.Int32
	cs := connectTapped(t, ctx, c.url, tap, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ClientSession) { heard.Add(1) },
	})
	// holder returns the GET stream's hold key and its holder's tag.
	holder := func() (string, string) {
		keys, err := c.rdb.Keys(ctx, "mcpgate:hold:*").Result()
		if err != nil || len(keys) != 1 {
			return "", ""
		}
		v, err := c.rdb.Get(ctx, keys[0]).Result()
		if err != nil {
			return "", ""
		}
		tag, _, _ := strings.Cut(v, ":")
		if n, _ := c.rdb.Exists(ctx, "mcpgate:alive:"+tag).Result(); n == 0 {
			return keys[0], "" // a dead replica's claim
		}
		return keys[0], tag
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Errorf("%s: not within %v", what, 2*hangBound)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	trigger := func(n int) {
		t.Helper()
		for range n {
			if _, err := cs.CallTool(ctx, "test_trigger_tool_change", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var key, first string
	waitUntil("the GET stream held", func() bool { key, first = holder(); return first != "" })
	trigger(3)
	waitUntil("three changes heard", func() bool { return heard.Load() >= 3 })
	if c.killTag(first) == nil {
		t.FailNow()
	}
	trigger(3) // while the client has no GET stream, or is reconnecting
	var second string
	waitUntil("the GET stream held again", func() bool { _, second = holder(); return second != "" && second != first })
	before := heard.Load()
	t.Logf("GET stream held by %s, then %s; %d changes heard so far", first, second, before)
	trigger(3)
	// The server coalesces changes that come within a few milliseconds
	// into one notification, so three triggers may be heard as fewer;
	// every stored event must be heard (below), and at least one of these.
	waitUntil("the changes after the reconnection heard", func() bool { return heard.Load() >= before+1 })
	ctx, cancel = context.WithTimeout(context.Background(), hangBound)
	defer cancel()

	stream := "mcpgate:ev:" + strings.TrimPrefix(key, "mcpgate:hold:")
	events, err := c.rdb.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var missed []string
	stored := 0
	for _, ev := range events {
		_, seq, _ := strings.Cut(ev.ID, "-")
		if seq == "0" {
			continue // the stream's head, never sent
		}
		stored++
		if !tap.heardGET("g-" + seq) {
			missed = append(missed, "g-"+seq)
		}
	}
	if len(missed) > 0 {
		t.Errorf("the client never heard the stored events %v of %d", missed, stored)
	}
	t.Logf("9 changes triggered (3 of them while the GET stream was down), %d stored, %d heard", stored, heard.Load())
}

// Issue 23: Redis stopped and restarted under load from four sessions.
// While it is down, the sessions' calls go on or fail with a clear
// answer, never hang; a new session is refused with 503 and says why; a
// replica started meanwhile exits naming Redis. Once it is back, every
// session and a new one work again, with no replica restarted.
func TestRedisOutageUnderLoad(t *testing.T) {
	rs := testservice.RedisWith(t, testservice.RedisOptions{AppendOnly: true})
	c := startFailCluster(t, rs)
	ctx, cancel := context.WithTimeout(context.Background(), 4*hangBound)
	defer cancel()
	const sessions = 4
	var css []*mcp.ClientSession
	for range sessions {
		cs := connectTapped(t, ctx, c.url, newEventTap(), nil)
		for range 6 { // a local copy of the session on every replica
			if _, err := cs.CallTool(ctx, "greet", map[string]any{"name": "ada"}); err != nil {
				t.Fatal(err)
			}
		}
		css = append(css, cs)
	}

	// phase: 0 before the outage, 1 during, 2 after.
	var phase atomic.Int32
	type tally struct {
		ok, failed [3]int
		errs       map[string]int
		hung       []string
	}
	var mu sync.Mutex
	tl := tally{errs: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				cctx, ccancel := context.WithTimeout(ctx, hangBound)
				_, err := cs.CallTool(cctx, "greet", map[string]any{"name": "ada"})
				hung := cctx.Err() != nil
				ccancel()
				mu.Lock()
				switch {
				case hung:
					tl.hung = append(tl.hung, "session "+strconv.Itoa(i)+": "+err.Error())
				case err != nil:
					tl.failed[p]++
					tl.errs[err.Error()]++
				default:
					tl.ok[p]++
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
			}
		}()
	}
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	})

	rs.Stop()
	phase.Store(1)
	t.Run("a new session is refused with 503", func(t *testing.T) {
		nctx, ncancel := context.WithTimeout(ctx, hangBound)
		defer ncancel()
		cl := mcp.NewClient(&mcp.Implementation{Name: "late", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
		cs, err := cl.Connect(nctx, &mcphttp.ClientTransport{Endpoint: c.url, DisableLegacyFallback: true})
		if err == nil {
			cs.Close()
			t.Fatal("a session began while Redis was down")
		}
		var he *mcphttp.HTTPError
		if !errors.As(err, &he) || he.Status != http.StatusServiceUnavailable || !strings.Contains(err.Error(), "does not answer") {
			t.Errorf("initialize while Redis is down: %v; want a 503 that says the store does not answer", err)
		}
		t.Logf("initialize while Redis is down: %v", err)
	})
	t.Run("a replica started meanwhile exits naming Redis", func(t *testing.T) {
		sctx, scancel := context.WithTimeout(ctx, hangBound)
		defer scancel()
		cmd := exec.CommandContext(sctx, binary, "conformance-server", "--addr", "127.0.0.1:0", "--redis", rs.URL(), "--replica-id", "late")
		cmd.Env = append(cmd.Environ(), noClusterEnv...)
		out, err := cmd.CombinedOutput()
		if sctx.Err() != nil || err == nil {
			t.Fatalf("the replica did not exit with an error (%v):\n%s", err, out)
		}
		if !strings.Contains(string(out), "Redis at "+rs.Addr()+" does not answer") {
			t.Errorf("the replica's error does not name Redis and its address:\n%s", out)
		}
	})
	for ok := false; !ok; { // some load while Redis is down
		mu.Lock()
		ok = tl.ok[1]+tl.failed[1] >= 4*sessions
		mu.Unlock()
		if ctx.Err() != nil {
			t.Fatal("no calls ended while Redis was down")
		}
		time.Sleep(10 * time.Millisecond)
	}

	rs.Start()
	phase.Store(2)
	// Every session has calls that succeed again, and a new one begins.
	for i, cs := range css {
		for {
			cctx, ccancel := context.WithTimeout(ctx, hangBound)
			_, err := cs.CallTool(cctx, "greet", map[string]any{"name": "ada"})
			ccancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("session %d did not recover after Redis came back: %v", i, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for {
		nctx, ncancel := context.WithTimeout(ctx, hangBound)
		cl := mcp.NewClient(&mcp.Implementation{Name: "after", Version: "1"}, &mcp.ClientOptions{ProtocolVersion: mcp.Version20251125})
		cs, err := cl.Connect(nctx, &mcphttp.ClientTransport{Endpoint: c.url, DisableLegacyFallback: true})
		if err == nil {
			_, err = cs.ListTools(nctx, nil)
			cs.Close()
		}
		ncancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no new session after Redis came back: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	t.Logf("calls ok/failed: before %d/%d, while Redis was down %d/%d, after %d/%d",
		tl.ok[0], tl.failed[0], tl.ok[1], tl.failed[1], tl.ok[2], tl.failed[2])
	for msg, n := range tl.errs {
		t.Logf("%d× %s", n, msg)
		if !strings.Contains(msg, "503") && !strings.Contains(msg, "does not answer") {
			t.Errorf("a call failed without saying why (%d times): %s", n, msg)
		}
	}
	if len(tl.hung) > 0 {
		t.Errorf("%d calls hung past %v: %v", len(tl.hung), hangBound, tl.hung)
	}
	if tl.failed[0] > 0 {
		t.Errorf("%d calls failed before the outage", tl.failed[0])
	}
	for i := range c.replicas {
		select {
		case <-c.replicas[i].exited:
			t.Errorf("replica %s exited during the outage:\n%s", i, c.replicas[i].output())
		default:
		}
	}
}
