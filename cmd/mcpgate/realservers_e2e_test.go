//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// The gateway in front of published npm servers, started as users write
// them (`npx -y pkg@version` with dummy credentials), from packages that
// testdata/realservers/install.sh pinned in node_modules (make deps runs
// it): npx finds them there, and npm_config_offline with an empty cache
// proves that nothing is downloaded.

// realServers is the servers.json of a folder of testdata/realservers: an
// mcpServers map and the tools each listed in the eval snapshot.
type realServers struct {
	dir        string
	Servers    map[string]json.RawMessage `json:"mcpServers"`
	ToolCounts map[string]int             `json:"toolCounts"`
}

// loadRealServers reads core's servers.json, and skips the test when the
// pinned packages are not installed.
func loadRealServers(t *testing.T) *realServers {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts 35 published npm servers")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	dir, err := filepath.Abs(filepath.Join("testdata", "realservers", "core"))
	if err != nil {
		t.Fatal(err)
	}
	lock, _ := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	installed, _ := os.ReadFile(filepath.Join(dir, "node_modules", ".installed-lock"))
	if !bytes.Equal(lock, installed) {
		t.Skip("the pinned servers are not installed: run `make deps` (testdata/realservers/install.sh, npm ci)")
	}
	b, err := os.ReadFile(filepath.Join(dir, "servers.json"))
	if err != nil {
		t.Fatal(err)
	}
	rs := &realServers{dir: dir}
	if err := json.Unmarshal(b, rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// config writes a gateway configuration of the named servers, verbatim
// but for the options every server gets, and returns its path.
func (rs *realServers) config(t *testing.T, path string, options map[string]any, names ...string) {
	t.Helper()
	servers := map[string]json.RawMessage{}
	for _, n := range names {
		servers[n] = rs.Servers[n]
	}
	cfg := map[string]any{"mcpServers": servers}
	maps.Copy(cfg, options)
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// offlineNpmEnv is the environment of a gateway whose servers' npx must
// find every package in node_modules: npm offline, with an empty cache
// of its own (a package npx had to fetch fails with ENOTCACHED), and
// ${SCRATCH} of the eval configuration in dir, and HOME there too, where
// some servers write logs and state.
func offlineNpmEnv(t *testing.T, dir string) []string {
	t.Helper()
	scratch := filepath.Join(dir, "scratch")
	for _, d := range []string{"sandbox", "state", "home"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(os.Environ(), "SCRATCH="+scratch, "HOME="+filepath.Join(scratch, "home"), "npm_config_offline=true",
		"npm_config_cache="+filepath.Join(dir, "npm-cache"), "npm_config_update_notifier=false")
}

// gatewayRun is `mcpgate serve --stdio` on a configuration of real
// servers, with a client session to it.
type gatewayRun struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *syncBuffer
}

// syncBuffer is the gateway's stderr, written by the transport's
// goroutine and read by the test.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startGateway starts the gateway binary bin in dir: a server without
// cwd runs there, and npx finds the packages of dir's node_modules.
func startGateway(t *testing.T, ctx context.Context, bin, dir, config string, env []string) *gatewayRun {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--stdio", "--config", config, "--db", filepath.Join(t.TempDir(), "tasks.db"))
	cmd.Dir, cmd.Env = dir, env
	g := &gatewayRun{cmd: cmd, stderr: &syncBuffer{}}
	// The gateway's log, as the transport reads it line by line.
	logger := slog.New(slog.NewTextHandler(g.stderr, nil))
	cs, err := mcp.NewClient(nil, &mcp.ClientOptions{RequestTimeout: 3 * time.Minute}).Connect(ctx, &mcp.CommandTransport{Command: cmd, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	g.cs = cs
	t.Cleanup(func() { cs.Close() })
	return g
}

// exited waits, within its bound, for the gateway's session to end.
func (g *gatewayRun) exited(bound time.Duration) bool {
	done := make(chan struct{})
	go func() { g.cs.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(bound):
		return false
	}
}

// toolCounts lists the gateway's tools and counts them by server.
func (g *gatewayRun) toolCounts(ctx context.Context) (map[string]int, error) {
	counts := map[string]int{}
	for tool, err := range g.cs.Tools(ctx) {
		if err != nil {
			return nil, err
		}
		server, _, _ := strings.Cut(tool.Name, "_")
		counts[server]++
	}
	return counts, nil
}

// awaitTools lists until every server of want has its tools and no other
// server has any, and returns the last listing either way.
func (g *gatewayRun) awaitTools(t *testing.T, ctx context.Context, want map[string]int, ready func() bool) map[string]int {
	t.Helper()
	for {
		got, err := g.toolCounts(ctx)
		if err != nil {
			t.Fatalf("tools/list: %v\n%s", err, g.stderr)
		}
		if maps.Equal(got, want) && (ready == nil || ready()) {
			return got
		}
		select {
		case <-ctx.Done():
			return got
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// procInfo is a process as /proc shows it.
type procInfo struct {
	pid, ppid, pgid int
	start           string // start time in clock ticks: with pid, names one process
	state           string
	comm            string
	cmdline         string
	rssKiB          int
}

func (p procInfo) String() string {
	return fmt.Sprintf("%d (%s, group %d): %s", p.pid, p.state, p.pgid, p.cmdline)
}

// readProcs reads every process of /proc.
func readProcs() map[int]procInfo {
	ents, _ := os.ReadDir("/proc")
	procs := map[int]procInfo{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid pgrp session tty tpgid flags minflt
		// cminflt majflt cmajflt utime stime cutime cstime priority
		// nice threads itrealvalue starttime ...", comm holding anything.
		i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if i < 0 || j < i {
			continue
		}
		f := strings.Fields(string(b[j+1:]))
		if len(f) < 20 {
			continue
		}
		p := procInfo{pid: pid, comm: string(b[i+1 : j]), state: f[0], start: f[19]}
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgid, _ = strconv.Atoi(f[2])
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		p.cmdline = strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
		if statm, err := os.ReadFile("/proc/" + e.Name() + "/statm"); err == nil {
			if f := strings.Fields(string(statm)); len(f) > 1 {
				pages, _ := strconv.Atoi(f[1])
				p.rssKiB = pages * os.Getpagesize() / 1024
			}
		}
		procs[pid] = p
	}
	return procs
}

// descendants are the processes below root, children before their own.
func descendants(procs map[int]procInfo, root int) []procInfo {
	children := map[int][]int{}
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []procInfo
	queue := []int{root}
	for len(queue) > 0 {
		kids := children[queue[0]]
		slices.Sort(kids)
		queue = queue[1:]
		for _, k := range kids {
			out = append(out, procs[k])
			queue = append(queue, k)
		}
	}
	return out
}

// serverProcs is one server's processes below the gateway: the npx
// wrapper ("npm exec PKG@VERSION", the gateway's child and the leader of
// the server's process group) and the rest of its group.
type serverProcs struct {
	wrapper procInfo
	group   []procInfo
}

// node is the real server: the deepest node process of the group.
func (s serverProcs) node() (procInfo, bool) {
	for _, p := range slices.Backward(s.group) {
		if p.comm == "node" || strings.HasPrefix(p.cmdline, "node ") {
			return p, true
		}
	}
	return procInfo{}, false
}

// byServer finds each server's processes below the gateway, by the
// package its wrapper runs.
func byServer(procs map[int]procInfo, gateway int, packages map[string]string) map[string]serverProcs {
	out := map[string]serverProcs{}
	for _, p := range descendants(procs, gateway) {
		if p.ppid == gateway {
			for name, pkg := range packages {
				if strings.Contains(p.cmdline, " "+pkg) {
					out[name] = serverProcs{wrapper: p}
				}
			}
		}
	}
	for name, s := range out {
		for _, p := range descendants(procs, s.wrapper.pid) {
			if p.pgid == s.wrapper.pgid {
				s.group = append(s.group, p)
			}
		}
		out[name] = s
	}
	return out
}

// packageOf is the pkg@version a server's args run through npx.
func packageOf(raw json.RawMessage) string {
	var s struct{ Args []string }
	json.Unmarshal(raw, &s)
	for _, a := range s.Args {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// treeRecord remembers every process seen below the gateway and every
// process group they were in, so that what outlives the gateway can be
// found after it is gone, when orphans no longer descend from it.
type treeRecord struct {
	seen   map[[2]string]bool // pid and start time
	groups map[int]bool
}

func newTreeRecord() *treeRecord {
	return &treeRecord{seen: map[[2]string]bool{}, groups: map[int]bool{}}
}

func (r *treeRecord) add(procs map[int]procInfo, gateway int) {
	for _, p := range descendants(procs, gateway) {
		r.seen[[2]string{strconv.Itoa(p.pid), p.start}] = true
		r.groups[p.pgid] = true
	}
}

// survivors are the live processes seen below the gateway, or in a group
// of one of them.
func (r *treeRecord) survivors(procs map[int]procInfo) []procInfo {
	var out []procInfo
	for _, p := range procs {
		if p.state != "Z" && (r.seen[[2]string{strconv.Itoa(p.pid), p.start}] || r.groups[p.pgid]) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b procInfo) int { return a.pid - b.pid })
	return out
}

// awaitNoSurvivors waits, within its bound, for every process of r to be
// gone, and returns those left.
func (r *treeRecord) awaitNoSurvivors(bound time.Duration) []procInfo {
	deadline := time.Now().Add(bound)
	for {
		left := r.survivors(readProcs())
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestRealServersComeBackReloadAndLeaveNoProcess runs the gateway over
// stdio on 34 published npm servers (1,343 tools, ms-365's 344 among
// them; a 35th comes with the reload), all eager so that their processes
// (three each: npm exec, sh, node) stay up, and checks what a desktop
// client relies on:
//   - the first listing has every server with all the tools it listed in
//     the eval snapshot;
//   - a server whose npx wrapper is killed, and one whose real node
//     process is killed, come back with all their tools;
//   - a reload (the file edited, then SIGHUP) drops a removed server's
//     tools and processes and lists an added one;
//   - after SIGTERM no process that was below the gateway, nor any
//     process of their groups, is left.
//
// About 35 s here (2 cores), 26 s of it the first listing: the servers
// start 2 at a time (maxConcurrentStarts), each npx reading a tree of
// 740 packages. Linux only: it reads /proc.
func TestRealServersComeBackReloadAndLeaveNoProcess(t *testing.T) {
	rs := loadRealServers(t)
	const hang = 4 * time.Minute // a bound on a hang: 35 cold starts on a loaded machine
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	dir := t.TempDir()
	env := offlineNpmEnv(t, dir)
	all := slices.Sorted(maps.Keys(rs.Servers))
	const added, removed = "brave-search", "slack"
	first := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == added })
	options := map[string]any{"startWindow": "200s", "defaults": map[string]any{"start": "eager"}}
	config := filepath.Join(dir, "mcpgate.json")
	rs.config(t, config, options, first...)
	g := startGateway(t, ctx, binary, rs.dir, config, env)
	gw := g.cmd.Process.Pid
	packages := map[string]string{}
	for n, raw := range rs.Servers {
		packages[n] = packageOf(raw)
	}
	want := func(names []string) map[string]int {
		m := map[string]int{}
		for _, n := range names {
			m[n] = rs.ToolCounts[n]
		}
		return m
	}

	// The first listing waits for discovery (startWindow): every server.
	// Counts are the eval snapshot's, but everything's (see servers.json).
	began := time.Now()
	got, err := g.toolCounts(ctx)
	t.Logf("first listing: %d servers in %v", len(got), time.Since(began).Round(time.Second))
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, g.stderr)
	}
	if !maps.Equal(got, want(first)) {
		diffCounts(t, "the first listing", got, want(first), g)
	}
	// Eager servers stay up: a group for each.
	record := newTreeRecord()
	procs := readProcs()
	record.add(procs, gw)
	running := byServer(procs, gw, packages)
	if len(running) != len(first) {
		t.Fatalf("%d servers have processes below the gateway, want %d: %v", len(running), len(first), slices.Sorted(maps.Keys(running)))
	}

	// Kill memory's npx wrapper and everything's real node server.
	const wrapperKilled, nodeKilled = "memory", "everything"
	before := map[string]int{wrapperKilled: running[wrapperKilled].wrapper.pgid, nodeKilled: running[nodeKilled].wrapper.pgid}
	node, ok := running[nodeKilled].node()
	if !ok {
		t.Fatalf("no node process in %s's group: %v", nodeKilled, running[nodeKilled].group)
	}
	syscall.Kill(running[wrapperKilled].wrapper.pid, syscall.SIGKILL)
	syscall.Kill(node.pid, syscall.SIGKILL)
	restarted := func() bool {
		procs := readProcs()
		record.add(procs, gw)
		now := byServer(procs, gw, packages)
		for name, old := range before {
			if s, ok := now[name]; !ok || s.wrapper.pgid == old {
				return false
			}
		}
		return true
	}
	if got := g.awaitTools(t, ctx, want(first), restarted); !maps.Equal(got, want(first)) || !restarted() {
		diffCounts(t, "after killing a wrapper and a node server", got, want(first), g)
		t.Fatalf("restarted: %v", restarted())
	}
	for name, pgid := range before {
		if left := (&treeRecord{groups: map[int]bool{pgid: true}}).awaitNoSurvivors(waitFor); len(left) > 0 {
			t.Errorf("%s's old group %d outlived its session: %v", name, pgid, left)
		}
	}

	t.Logf("both back after %v", time.Since(began).Round(time.Second))

	// Reload: remove one server, add another.
	second := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == removed })
	oldGroup := byServer(readProcs(), gw, packages)[removed].wrapper.pgid
	rs.config(t, config, options, second...)
	g.cmd.Process.Signal(syscall.SIGHUP)
	if got := g.awaitTools(t, ctx, want(second), func() bool { record.add(readProcs(), gw); return true }); !maps.Equal(got, want(second)) {
		diffCounts(t, "after the reload", got, want(second), g)
	}
	if left := (&treeRecord{groups: map[int]bool{oldGroup: true}}).awaitNoSurvivors(waitFor); len(left) > 0 {
		t.Errorf("the removed server's processes outlived the reload: %v", left)
	}

	t.Logf("reloaded after %v", time.Since(began).Round(time.Second))

	// SIGTERM: the gateway stops every server's group before it exits.
	record.add(readProcs(), gw)
	g.cmd.Process.Signal(syscall.SIGTERM)
	if !g.exited(waitFor) {
		t.Fatalf("the gateway did not exit after SIGTERM:\n%s", lastLines(g.stderr.String(), 40))
	}
	if left := record.awaitNoSurvivors(waitFor); len(left) > 0 {
		t.Errorf("%d processes of the gateway's %d groups outlived it:\n%v\ngateway log:\n%s", len(left), len(record.groups), left, lastLines(g.stderr.String(), 40))
	}
}

// TestRealServersDieWithAKilledGateway kills the gateway with SIGKILL,
// which it cannot catch to stop its servers. What ends them is the end
// of their stdin: the npm servers exit on it (all 35 of core did when
// tried), and npm exec and sh exit with the server they ran. A server
// that ignored it would survive, as no signal reaches a group whose
// gateway is gone (Pdeathsig would reach only the npm exec wrapper).
func TestRealServersDieWithAKilledGateway(t *testing.T) {
	rs := loadRealServers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound on a hang
	defer cancel()
	dir := t.TempDir()
	names := []string{"everything", "filesystem", "git-cyanheads", "memory", "sequential-thinking", "cloudflare"}
	config := filepath.Join(dir, "mcpgate.json")
	rs.config(t, config, map[string]any{"startWindow": "100s", "defaults": map[string]any{"start": "eager"}}, names...)
	g := startGateway(t, ctx, binary, rs.dir, config, offlineNpmEnv(t, dir))
	got, err := g.toolCounts(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, g.stderr)
	}
	if len(got) != len(names) {
		t.Fatalf("listed %v, want all of %v\n%s", got, names, lastLines(g.stderr.String(), 40))
	}
	record := newTreeRecord()
	record.add(readProcs(), g.cmd.Process.Pid)
	g.cmd.Process.Kill()
	if !g.exited(waitFor) {
		t.Fatal("the gateway did not exit on SIGKILL")
	}
	if left := record.awaitNoSurvivors(waitFor); len(left) > 0 {
		t.Errorf("%d processes outlived the killed gateway:\n%v", len(left), left)
	}
}

func diffCounts(t *testing.T, when string, got, want map[string]int, g *gatewayRun) {
	t.Helper()
	for _, n := range slices.Sorted(maps.Keys(want)) {
		if got[n] != want[n] {
			t.Errorf("%s: %s has %d tools, want %d", when, n, got[n], want[n])
		}
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			t.Errorf("%s: %s has %d tools, want none", when, n, got[n])
		}
	}
	t.Logf("gateway log:\n%s", lastLines(g.stderr.String(), 60))
}

// tail is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
