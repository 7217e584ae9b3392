package main

// Issue 23's scale figures: many sessions, each with its GET stream open,
// spread over three gateway replicas (the real binary, mcpgate serve
// --config --redis) behind HAProxy, sharing one Redis. A tool list change
// that arises on one replica must reach every session; then the replicas
// are restarted one by one, and every session must go on with its own
// session id and hear the next change. The figures (fan-out time, Redis
// memory, each replica's RSS, the time to open the sessions and to
// restart each replica) are logged, never asserted.
//
// Each replica's upstream is a conformance-server of its own (upstreams
// are per replica, as the issue says): a call of its tool
// test_trigger_tool_change through the gateway adds or removes a tool
// there, so the change arises on the one replica the call landed on.
//
// MCPGATE_SCALE_SESSIONS sets the number of sessions (default 1000, so
// that make test stays quick); make scale runs it at 10,000.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// scaleHangBound bounds each wait of the scale test: for the sessions to
// open, a change to reach them all, a replica to stop or start.
const scaleHangBound = 5 * time.Minute // a bound on a hang

// scaleWorkers is how many sessions open, or answer, at once: enough to
// keep two cores busy, few enough that no connection pool runs dry.
const scaleWorkers = 64

// scaleReplica is one gateway replica, stopped and started again on the
// same address with the same arguments.
type scaleReplica struct {
	t    *testing.T
	id   string
	args []string // without --addr
	addr string   // host:port, fixed by the first start

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	stopping bool   // a stop, not a crash, ends the current run
	died     string // how a run ended that no stop asked for
	head     []byte // the first of its stderr: a panic's first lines
	tail     []byte // the last of its stderr, every run
	dropped  bool   // lines between head and tail were left out
}

// scaleLogPart is how much of the start and of the end of a replica's
// stderr a failed test shows: a crash among thousands of goroutines
// writes megabytes, and what it was comes first.
const scaleLogPart = 32 << 10

func (r *scaleReplica) output() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	gap := ""
	if r.dropped {
		gap = "[...]\n"
	}
	return string(r.head) + gap + string(r.tail)
}

func (r *scaleReplica) note(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.head) < scaleLogPart {
		r.head = append(append(r.head, line...), '\n')
		return
	}
	r.tail = append(append(r.tail, line...), '\n')
	if len(r.tail) > 2*scaleLogPart {
		r.tail = slices.Clone(r.tail[len(r.tail)-scaleLogPart:])
		r.dropped = true
	}
}

// crashed says how the replica died, if no stop asked it to.
func (r *scaleReplica) crashed() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.died
}

// start runs the replica (on a port of the kernel's choosing the first
// time, on the same address after) and waits until it listens.
func (r *scaleReplica) start() {
	r.t.Helper()
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	cmd := exec.Command(binary, append(slices.Clone(r.args), "--addr", addr)...)
	cmd.Env = append(os.Environ(), noClusterEnv...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	exited := make(chan struct{})
	r.mu.Lock()
	r.cmd, r.exited, r.stopping = cmd, exited, false
	r.mu.Unlock()
	urlc := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			r.note(sc.Text())
			if m := serveReady.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlc <- strings.TrimPrefix(m[1], "http://"):
				default:
				}
			}
		}
		err := cmd.Wait()
		r.mu.Lock()
		if !r.stopping && r.died == "" {
			r.died = fmt.Sprintf("replica %s (pid %d) exited by itself: %v", r.id, cmd.Process.Pid, err)
		}
		r.mu.Unlock()
	}()
	select {
	case a := <-urlc:
		r.addr = a
	case <-exited:
		r.t.Fatalf("replica %s exited before listening:\n%s", r.id, r.output())
	case <-time.After(scaleHangBound):
		r.t.Fatalf("replica %s did not start listening:\n%s", r.id, r.output())
	}
}

// stop sends SIGTERM and waits for the replica to exit.
func (r *scaleReplica) stop() {
	r.t.Helper()
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.stopping = true
	r.mu.Unlock()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(scaleHangBound):
		r.t.Fatalf("replica %s did not exit within %v of SIGTERM:\n%s", r.id, scaleHangBound, r.output())
	}
}

func (r *scaleReplica) kill() {
	r.mu.Lock()
	cmd, exited := r.cmd, r.exited
	r.stopping = true
	r.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		<-exited
	}
}

// rss is the replica's resident memory, from /proc.
func (r *scaleReplica) rss() string {
	r.mu.Lock()
	pid := r.cmd.Process.Pid
	r.mu.Unlock()
	return procRSS(pid)
}

func procRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	if m := regexp.MustCompile(`(?m)^VmRSS:\s*(.+)$`).FindSubmatch(b); m != nil {
		return string(m[1])
	}
	return "unknown"
}

// scaleCounter counts what the clients send and get: GET requests (the
// GET streams opened, first or again), initialize requests (a POST
// without a session id: a client that lost its session starts a new one
// by itself), and 404 answers (a session the servers forgot).
type scaleCounter struct {
	next            http.RoundTripper
	gets, inits, nf atomic.Int64
}

func (c *scaleCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	switch {
	case req.Method == http.MethodGet:
		c.gets.Add(1)
	case req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == "":
		c.inits.Add(1)
	}
	resp, err := c.next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusNotFound {
		c.nf.Add(1)
	}
	return resp, err
}

// scaleSessions reads MCPGATE_SCALE_SESSIONS.
func scaleSessions(t *testing.T) int {
	v := os.Getenv("MCPGATE_SCALE_SESSIONS")
	if v == "" {
		return 1000
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 3 {
		t.Fatalf("MCPGATE_SCALE_SESSIONS=%q: want a number of sessions, at least 3", v)
	}
	return n
}

// raiseFileLimit lifts the soft open-file limit to the hard one (Go does
// at start too; this says so in the log) and returns the hard limit.
func raiseFileLimit(t *testing.T) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	return lim.Max
}

// loadBalancers is how many HAProxy processes n streams need: each
// proxied connection takes two descriptors, and one process may hold at
// most the hard limit. A site with that many streams runs a pair of load
// balancers anyway.
func loadBalancers(n int, hard uint64) int {
	perLB := int(hard-200)/2 - 1000 // slack for the POSTs and the probes
	if perLB < 100 {
		perLB = 100
	}
	return (n + perLB - 1) / perLB
}

// redisMemory is Redis's used_memory, in bytes.
func redisMemory(t *testing.T, ctx context.Context, rdb *redis.Client) int64 {
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^used_memory:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		t.Fatalf("no used_memory in INFO memory:\n%s", info)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// scaleCluster is the whole setup: Redis, three replicas each with its
// own upstream, the load balancers, and the test's own Redis client.
type scaleCluster struct {
	t        *testing.T
	rdb      *redis.Client
	replicas []*scaleReplica
	fronts   []string // the load balancers' MCP endpoints
}

func startScaleCluster(t *testing.T, redisURL string, lbs int) *scaleCluster {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	c := &scaleCluster{t: t, rdb: redis.NewClient(opts)}
	t.Cleanup(func() { c.rdb.Close() })
	dir := t.TempDir()
	var backends []string
	for i := range 3 {
		id := "r" + strconv.Itoa(i+1)
		up := startReplica(t, fixturesReady, "conformance-server", "--addr", "127.0.0.1:0")
		cfg, _ := json.Marshal(map[string]any{
			"mcpServers": map[string]any{"conf": map[string]any{"url": "http://" + up.addr + "/mcp"}},
			"state":      map[string]any{"db": filepath.Join(dir, id+"-state.db")},
		})
		file := filepath.Join(dir, id+".json")
		if err := os.WriteFile(file, cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		r := &scaleReplica{t: t, id: id, args: []string{"serve", "--config", file, "--redis", redisURL,
			"--replica-id", id, "--db", filepath.Join(dir, id+"-tasks.db"),
			// Every client here is 127.0.0.1, which the per-caller cap
			// counts as one caller.
			"--max-sessions-per-principal", "1000000"}}
		t.Cleanup(func() {
			r.kill()
			if t.Failed() {
				t.Logf("replica %s's output (the tail):\n%s", r.id, r.output())
			}
		})
		r.start()
		c.replicas = append(c.replicas, r)
		backends = append(backends, r.addr)
	}
	for range lbs {
		c.fronts = append(c.fronts, testservice.HAProxy(t, backends, nil).URL()+"/mcp")
	}
	return c
}

// checkAlive fails the test if a replica died that no stop asked to.
func (c *scaleCluster) checkAlive() {
	c.t.Helper()
	for _, r := range c.replicas {
		if d := r.crashed(); d != "" {
			c.t.Fatalf("%s; its output:\n%s", d, r.output())
		}
	}
}

// holders maps each held GET stream's holder to a replica id: the
// value of a hold key starts with the holder replica's tag, and the
// replica keeps alive:TAG with its id. A tag of no live replica maps to
// "(gone)".
func (c *scaleCluster) holders(ctx context.Context) (map[string]int, int, error) {
	var keys []string
	iter := c.rdb.Scan(ctx, 0, "mcpgate:hold:*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return nil, 0, err
	}
	byReplica := map[string]int{}
	tagID := map[string]string{}
	for chunk := range slices.Chunk(keys, 1000) {
		vals, err := c.rdb.MGet(ctx, chunk...).Result()
		if err != nil {
			return nil, 0, err
		}
		for _, v := range vals {
			s, _ := v.(string)
			tag, _, _ := strings.Cut(s, ":")
			id, ok := tagID[tag]
			if !ok {
				id, err = c.rdb.Get(ctx, "mcpgate:alive:"+tag).Result()
				if errors.Is(err, redis.Nil) {
					id, err = "(gone)", nil
				}
				if err != nil {
					return nil, 0, err
				}
				tagID[tag] = id
			}
			byReplica[id]++
		}
	}
	return byReplica, len(keys), nil
}

// waitHeld waits until n GET streams are held, all by live replicas.
func (c *scaleCluster) waitHeld(ctx context.Context, n int) map[string]int {
	c.t.Helper()
	deadline := time.Now().Add(scaleHangBound)
	for {
		c.checkAlive()
		by, total, err := c.holders(ctx)
		if err != nil {
			c.t.Fatal(err)
		}
		if total == n && by["(gone)"] == 0 {
			return by
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%d of %d GET streams held after %v: %v", total, n, scaleHangBound, by)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// probeLandsOn opens GET streams of fresh probe sessions through front
// until one is held by replica id: the load balancer routes to it again.
// It returns how many probes that took, and why those that could not
// tell failed.
func (c *scaleCluster) probeLandsOn(ctx context.Context, front, id string) (int, map[string]int) {
	c.t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	failed := map[string]int{}
	deadline := time.Now().Add(scaleHangBound)
	for attempt := 1; ; attempt++ {
		c.checkAlive()
		if time.Now().After(deadline) {
			c.t.Fatalf("no GET through %s reached replica %s in %d tries; the failures: %v", front, id, attempt, failed)
		}
		on, why := c.probe(ctx, hc, front)
		switch {
		case on == id:
			return attempt, failed
		case why != "":
			failed[why]++
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// probe begins a session through front, opens its GET stream, and
// returns the id of the replica holding it, or why it could not tell.
func (c *scaleCluster) probe(ctx context.Context, hc *http.Client, front string) (id, why string) {
	send := func(method, sid, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, method, front, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := hc.Do(req)
		if err == nil && resp.StatusCode/100 != 2 {
			resp.Body.Close()
			return nil, fmt.Errorf("%s %s", method, resp.Status)
		}
		return resp, err
	}
	resp, err := send(http.MethodPost, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+mcp.Version20251125+`","capabilities":{},"clientInfo":{"name":"scale-probe","version":"1"}}}`)
	if err != nil {
		return "", "initialize: " + err.Error()
	}
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	defer func() {
		if resp, err := send(http.MethodDelete, sid, ""); err == nil {
			resp.Body.Close()
		}
	}()
	if resp, err = send(http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return "", "initialized: " + err.Error()
	}
	resp.Body.Close()
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(gctx, http.MethodGet, front, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcp.Version20251125)
	get := &http.Client{} // no overall timeout: the stream stays open until cancel
	if resp, err = get.Do(req); err != nil {
		return "", "GET: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "GET " + resp.Status
	}
	keys, err := c.rdb.Keys(gctx, "mcpgate:hold:*"+sid+"|g").Result()
	if err != nil || len(keys) != 1 {
		return "", fmt.Sprintf("hold keys of the probe: %d, %v", len(keys), err)
	}
	v, err := c.rdb.Get(gctx, keys[0]).Result()
	if err != nil {
		return "", "hold key: " + err.Error()
	}
	tag, _, _ := strings.Cut(v, ":")
	if id, err = c.rdb.Get(gctx, "mcpgate:alive:"+tag).Result(); err != nil {
		return "", "alive key: " + err.Error()
	}
	return id, ""
}

// scaleClients are the test's sessions and what each has heard.
type scaleClients struct {
	css   []*mcp.ClientSession
	heard []atomic.Int64 // tools/list_changed notifications, per session
	last  []atomic.Int64 // when each last heard one, UnixNano
	count *scaleCounter
}

func (s *scaleClients) heardTotal() int64 {
	var n int64
	for i := range s.heard {
		n += s.heard[i].Load()
	}
	return n
}

// each runs fn for every session, scaleWorkers at a time, and returns
// how many calls failed, with the first error.
func (s *scaleClients) each(fn func(i int, cs *mcp.ClientSession) error) (int, error) {
	var failed atomic.Int64
	var first error
	var once sync.Once
	work := make(chan int)
	var wg sync.WaitGroup
	for range scaleWorkers {
		wg.Go(func() {
			for i := range work {
				if err := fn(i, s.css[i]); err != nil {
					failed.Add(1)
					once.Do(func() { first = fmt.Errorf("session %d: %w", i, err) })
				}
			}
		})
	}
	for i := range s.css {
		work <- i
	}
	close(work)
	wg.Wait()
	return int(failed.Load()), first
}

// openScaleClients opens n sessions, spread over the fronts; each client
// opens its GET stream by itself after initialize.
func openScaleClients(t *testing.T, ctx context.Context, fronts []string, n int) *scaleClients {
	t.Helper()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 2 * scaleWorkers
	s := &scaleClients{css: make([]*mcp.ClientSession, n), heard: make([]atomic.Int64, n), last: make([]atomic.Int64, n),
		count: &scaleCounter{next: tr}}
	hc := &http.Client{Transport: s.count}
	opened := make(chan struct{})
	var mu sync.Mutex
	var failures []error
	work := make(chan int)
	var wg sync.WaitGroup
	for range scaleWorkers {
		wg.Go(func() {
			for i := range work {
				c := mcp.NewClient(&mcp.Implementation{Name: "scale-test", Version: "1"}, &mcp.ClientOptions{
					ProtocolVersion: mcp.Version20251125,
					ToolListChangedHandler: func(context.Context, *mcp.ClientSession) {
						s.last[i].Store(time.Now().UnixNano())
						s.heard[i].Add(1)
					},
				})
				cs, err := c.Connect(ctx, &mcphttp.ClientTransport{Endpoint: fronts[i%len(fronts)], HTTPClient: hc,
					DisableLegacyFallback: true, CloseTimeout: time.Second})
				if err != nil {
					mu.Lock()
					failures = append(failures, fmt.Errorf("session %d: %w", i, err))
					mu.Unlock()
					continue
				}
				s.css[i] = cs
			}
		})
	}
	go func() {
		for i := range n {
			work <- i
		}
		close(work)
		wg.Wait()
		close(opened)
	}()
	// Closed before the replicas stop (cleanups run last first), so
	// that each DELETE finds its session.
	t.Cleanup(func() {
		<-opened
		var cwg sync.WaitGroup
		sem := make(chan struct{}, scaleWorkers)
		for _, cs := range s.css {
			if cs == nil {
				continue
			}
			sem <- struct{}{}
			cwg.Go(func() {
				defer func() { <-sem }()
				cs.Close()
			})
		}
		cwg.Wait()
	})
	select {
	case <-opened:
	case <-time.After(scaleHangBound):
		t.Fatalf("the %d sessions did not open within %v", n, scaleHangBound)
	}
	if len(failures) > 0 {
		t.Fatalf("%d of %d sessions did not open; the first: %v", len(failures), n, failures[0])
	}
	return s
}

// triggerChange calls the upstream's test_trigger_tool_change through
// session i, which changes the tool list on the replica the call lands
// on, and waits until every session has heard more tools/list_changed
// than before; it returns the fan-out time, from the call's return to
// the last session hearing it.
func triggerChange(t *testing.T, ctx context.Context, s *scaleClients, i int) time.Duration {
	t.Helper()
	before := make([]int64, len(s.heard))
	for j := range s.heard {
		before[j] = s.heard[j].Load()
	}
	res, err := s.css[i].CallTool(ctx, "conf_test_trigger_tool_change", nil)
	if err != nil || res.IsError {
		t.Fatalf("conf_test_trigger_tool_change: %v, %v", res, err)
	}
	returned := time.Now()
	deadline := returned.Add(scaleHangBound)
	for {
		missing := 0
		for j := range s.heard {
			if s.heard[j].Load() <= before[j] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sessions never heard of the change within %v", missing, len(s.heard), scaleHangBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var last int64
	for j := range s.last {
		last = max(last, s.last[j].Load())
	}
	return time.Unix(0, last).Sub(returned)
}

// Issue 23, Scale: N sessions (MCPGATE_SCALE_SESSIONS, default 1000),
// each with its GET stream open, spread over three gateway replicas
// behind HAProxy; a tools/list_changed that arises on one replica
// reaches every session. Then a rolling restart (SIGTERM, start again on
// the same address, wait until the load balancers route to it, the next
// one): every session reconnects its GET stream, keeps its session id
// (no client started a new session, no request got 404), answers
// tools/list, and hears the next change.
func TestClusterScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	n := scaleSessions(t)
	hard := raiseFileLimit(t)
	if need := uint64(n) + 2000; hard < need {
		t.Skipf("the open-file limit is %d; %d sessions need at least %d in this process", hard, n, need)
	}
	lbs := loadBalancers(n, hard)
	rs := testservice.Redis(t)
	c := startScaleCluster(t, rs.URL(), lbs)
	ctx := context.Background()
	memBefore := redisMemory(t, ctx, c.rdb)

	began := time.Now()
	s := openScaleClients(t, ctx, c.fronts, n)
	c.checkAlive()
	spread := c.waitHeld(ctx, n)
	openTime := time.Since(began)
	memWith := redisMemory(t, ctx, c.rdb)
	t.Logf("%d sessions with their GET streams open in %v (%d load balancers, open-file limit %d)", n, openTime.Round(time.Millisecond), lbs, hard)
	t.Logf("GET streams held per replica: %v", spread)
	for _, r := range c.replicas {
		if spread[r.id] == 0 {
			t.Errorf("replica %s holds no GET stream: the sessions are not spread (%v)", r.id, spread)
		}
	}
	t.Logf("Redis used_memory: %d bytes before the sessions, %d with them: %d bytes a session",
		memBefore, memWith, (memWith-memBefore)/int64(n))
	for _, r := range c.replicas {
		t.Logf("replica %s RSS with the sessions: %s", r.id, r.rss())
	}
	t.Logf("the test process (the %d clients) RSS: %s", n, procRSS(os.Getpid()))
	if s.heardTotal() != 0 {
		t.Logf("note: %d tools/list_changed heard before any change", s.heardTotal())
	}

	fanOut := triggerChange(t, ctx, s, 0)
	t.Logf("a tools/list_changed arising on one replica reached all %d sessions %v after the call returned", n, fanOut.Round(time.Millisecond))

	// The rolling restart.
	heardBefore, getsBefore, initsBefore := s.heardTotal(), s.count.gets.Load(), s.count.inits.Load()
	for _, r := range c.replicas {
		step := time.Now()
		r.stop()
		stopped := time.Since(step)
		r.start()
		listening := time.Since(step)
		tries, failed := 0, map[string]int{}
		for _, front := range c.fronts {
			n, f := c.probeLandsOn(ctx, front, r.id)
			tries += n
			for k, v := range f {
				failed[k] += v
			}
		}
		t.Logf("restart of %s: exited %v after SIGTERM, listening again at %v, routed to by the load balancers at %v (%d probe sessions; failed probes: %v)",
			r.id, stopped.Round(time.Millisecond), listening.Round(time.Millisecond), time.Since(step).Round(time.Millisecond), tries, failed)
	}
	spread = c.waitHeld(ctx, n)
	t.Logf("after the rolling restart, GET streams held per replica: %v; %d GET requests (reconnections) during it",
		spread, s.count.gets.Load()-getsBefore)
	if d := s.heardTotal() - heardBefore; d != 0 {
		t.Logf("note: the restarts themselves told the sessions %d times that the tool list changed", d)
	}
	failed, first := s.each(func(_ int, cs *mcp.ClientSession) error {
		rctx, cancel := context.WithTimeout(ctx, scaleHangBound)
		defer cancel()
		_, err := cs.ListTools(rctx, nil)
		return err
	})
	if failed > 0 {
		t.Errorf("%d of %d sessions failed tools/list after the rolling restart; the first: %v", failed, n, first)
	}
	if d := s.count.inits.Load() - initsBefore; d != 0 {
		t.Errorf("%d clients started a new session: the rolling restart lost their sessions", d)
	}
	if nf := s.count.nf.Load(); nf != 0 {
		t.Errorf("%d requests got 404 (session not found)", nf)
	}
	fanOut = triggerChange(t, ctx, s, 1)
	t.Logf("after the rolling restart, a tools/list_changed reached all %d sessions %v after the call returned", n, fanOut.Round(time.Millisecond))
	for _, r := range c.replicas {
		t.Logf("replica %s RSS after the restart: %s", r.id, r.rss())
	}
}
