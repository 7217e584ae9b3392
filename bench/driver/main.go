// Command driver is mcpgate's benchmark driver: it runs the echo servers
// of bench/servers (mcpgate's, the official Go SDK's, mcp-go's), the
// TypeScript SDK's server-everything and the two limit servers one after
// the other, REPS times, and prints one table of medians, one of ratios
// and one of the gateway hop. `make bench` builds everything and runs it.
//
//	driver -work bench/.work                 run (settings from the environment)
//	driver -work bench/.work -baseline REV   also run bin/echo-baseline (and bin/mcpgate-baseline
//	                                         in the gateway hop), built from mcpgate at REV
//	driver -report bench/.work/results/T     print the tables of an earlier run again
//
// Environment: N (requests per echo phase), REPS, ONLY (server keys:
// mcpgate baseline go-sdk mcp-go ts limit gateway gateway-traced), STARTS (start-ups per server
// and repetition), SESSIONS (idle sessions), SESSION_REPS (in how many
// repetitions to open them, 1), TOOLS (tools for tools/list), TOOLS_N
// (tools/list calls), GW_N (calls per gateway phase), GW_LOG (the
// gateway's log level, warn), RSS_CAP_MB (stop opening sessions past
// this, 4096), PIPE_N (requests in the 64-in-flight stdio phase, 10×N:
// at N the limit server's lasted 20 ms, at 4×N 55-80 ms, and its req/s
// moved by half between repetitions), PHASES (stdio
// and/or http: the server phases to run, both by default).
//
// Every server listens on 127.0.0.1 and is ended by its own process
// group id; every loop is bounded, every wait has a time limit.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

type settings struct {
	n, pipeN, reps, starts, sessions, sessionReps, tools, toolsN, gwN, warm int
	tsHTTPScale                                                             float64
	only, phases                                                            map[string]bool
	gwLog                                                                   string
	rssCapKB                                                                int64
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func loadSettings() settings {
	s := settings{
		n:           envInt("N", 5000),
		reps:        envInt("REPS", 3),
		starts:      envInt("STARTS", 3),
		sessions:    envInt("SESSIONS", 10000),
		sessionReps: envInt("SESSION_REPS", 1),
		tools:       envInt("TOOLS", 1000),
		warm:        200,
		tsHTTPScale: 0.25,
		gwLog:       os.Getenv("GW_LOG"),
		rssCapKB:    int64(envInt("RSS_CAP_MB", 4096)) << 10,
	}
	s.pipeN = envInt("PIPE_N", 10*s.n)
	s.toolsN = envInt("TOOLS_N", max(20, s.n/50))
	s.gwN = envInt("GW_N", max(200, s.n/2))
	if s.gwLog == "" {
		s.gwLog = "warn"
	}
	s.only, s.phases = envSet("ONLY"), envSet("PHASES")
	return s
}

// envSet is the words of an environment variable (space or comma
// separated), empty when it is unset.
func envSet(name string) map[string]bool {
	m := map[string]bool{}
	for _, k := range strings.Fields(strings.ReplaceAll(os.Getenv(name), ",", " ")) {
		m[k] = true
	}
	return m
}

// setText is a set's words, sorted, or "all" for an empty set.
func setText(m map[string]bool) string {
	if len(m) == 0 {
		return "all"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), " ")
}

func (s settings) want(key string) bool { return len(s.only) == 0 || s.only[key] }

func (s settings) wantPhases(key string) bool { return len(s.phases) == 0 || s.phases[key] }

// A serverSpec says how to run one server in each mode. A nil command
// means the mode does not exist for it, and na says why.
type serverSpec struct {
	key, label   string
	stdio        []string
	stdioTools   func(n int) []string
	http         map[string]func(addr string, port int) (argv, env []string) // json, sse, per-request, sessions
	perRequestIn string                                                      // the process that serves 2026-07-28 requests: json, sse or per-request
	na           map[string]string                                           // phase (or mode) → why not
	tool, arg    string
	check        string
	httpScale    float64
	quiet        bool // HTTP: the server's stdout goes nowhere
}

func specs(work, bench string, ver versions) []*serverSpec {
	bin := func(name string) string { return filepath.Join(work, "bin", name) }
	cmd := func(name string, args ...string) func(string, int) ([]string, []string) {
		return func(addr string, _ int) ([]string, []string) {
			return append([]string{bin(name), "-http", addr}, args...), nil
		}
	}
	tools := func(name string) func(int) []string {
		return func(n int) []string { return []string{bin(name), "-tools", strconv.Itoa(n)} }
	}
	tsJS := filepath.Join(bench, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	tsShim := filepath.Join(bench, "servers/ts/loopback.cjs")
	ts := func(addr string, port int) ([]string, []string) {
		return []string{"node", "-r", tsShim, tsJS, "streamableHttp"}, []string{"PORT=" + strconv.Itoa(port)}
	}
	// mcpgate's echo server, built from this tree or (the baseline) from
	// another revision: the same phases either way, so that the rows compare.
	echo := func(key, label, name string) *serverSpec {
		return &serverSpec{
			key: key, label: label,
			stdio: []string{bin(name)}, stdioTools: tools(name),
			http: map[string]func(string, int) ([]string, []string){
				"json": cmd(name), "sse": cmd(name, "-sse"), "sessions": cmd(name),
			},
			perRequestIn: "json",
			tool:         "echo", arg: "text", check: checkExact, httpScale: 1,
		}
	}
	all := []*serverSpec{echo("mcpgate", "mcpgate "+ver.mcpgate, "echo")}
	if ver.baseline != "" {
		all = append(all, echo("baseline", "mcpgate "+ver.baseline, "echo-baseline"))
	}
	return append(all, []*serverSpec{{
		key: "go-sdk", label: "go-sdk " + ver.gosdk,
		stdio: []string{bin("gosdk")}, stdioTools: tools("gosdk"),
		http: map[string]func(string, int) ([]string, []string){
			"json": cmd("gosdk", "-json"), "sse": cmd("gosdk"), "perrequest": cmd("gosdk", "-stateless", "-json"), "sessions": cmd("gosdk"),
		},
		perRequestIn: "perrequest",
		tool:         "echo", arg: "text", check: checkExact, httpScale: 1,
	}, {
		key: "mcp-go", label: "mcp-go " + ver.mcpgo,
		stdio: []string{bin("mcpgo")}, stdioTools: tools("mcpgo"),
		http: map[string]func(string, int) ([]string, []string){
			"json": cmd("mcpgo"), "sessions": cmd("mcpgo"),
		},
		na:           map[string]string{"sse": "mcp-go answers with SSE only when a handler sends notifications; it has no option to always stream"},
		perRequestIn: "json",
		tool:         "echo", arg: "text", check: checkExact, httpScale: 1,
	}, {
		key: "ts", label: "TS server-everything " + ver.ts,
		stdio: []string{"node", "-r", tsShim, tsJS, "stdio"},
		http:  map[string]func(string, int) ([]string, []string){"sse": ts, "sessions": ts},
		na: map[string]string{
			"json":      "server-everything answers with SSE only",
			"toolslist": "server-everything has a fixed set of tools",
		},
		perRequestIn: "sse",
		tool:         "echo", arg: "message", check: checkContains, httpScale: 0.25, quiet: true,
	}, {
		key: "limit", label: "limit (no MCP work)",
		stdio: []string{bin("limitstdio")},
		http: map[string]func(string, int) ([]string, []string){
			"json": cmd("limithttp"), "sse": cmd("limithttp", "-sse"),
		},
		na: map[string]string{
			"toolslist": "the limit servers do no MCP work",
			"sessions":  "the limit servers keep no sessions",
		},
		perRequestIn: "json",
		tool:         "echo", arg: "text", check: checkNone, httpScale: 1,
	}}...)
}

// versions: baseline is the short revision of the baseline build, empty
// without one.
type versions struct{ mcpgate, baseline, gosdk, mcpgo, ts, tsSDK, node, goVersion string }

func readVersions(root, bench string) versions {
	v := versions{gosdk: "?", mcpgo: "?", ts: "?", tsSDK: "?", goVersion: runtime.Version()}
	if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		v.mcpgate = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile(filepath.Join(bench, "go.mod")); err == nil {
		if m := regexp.MustCompile(`modelcontextprotocol/go-sdk (v\S+)`).FindSubmatch(b); m != nil {
			v.gosdk = string(m[1])
		}
		if m := regexp.MustCompile(`mark3labs/mcp-go (v\S+)`).FindSubmatch(b); m != nil {
			v.mcpgo = string(m[1])
		}
	}
	pkgVersion := func(path string) string {
		var p struct{ Version string }
		b, err := os.ReadFile(filepath.Join(bench, "node_modules", path, "package.json"))
		if err != nil || json.Unmarshal(b, &p) != nil {
			return "?"
		}
		return p.Version
	}
	v.ts = pkgVersion("@modelcontextprotocol/server-everything")
	v.tsSDK = pkgVersion("@modelcontextprotocol/sdk")
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		v.node = strings.TrimSpace(string(out))
	}
	return v
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// run is one run of the driver: where it writes and how.
type run struct {
	set    settings
	out    string
	raw    *os.File
	logf   *os.File
	ids    atomic.Int64
	rep    int
	work   string
	root   string
	failed int
}

func (r *run) emit(rec record) {
	rec.Rep = r.rep
	if rec.Load == "" && rec.NA == "" {
		rec.Load = loadavg()
	}
	b, _ := json.Marshal(rec)
	r.raw.Write(append(b, '\n'))
	status := ""
	switch {
	case rec.NA != "":
		status = "n/a"
	case rec.Failed != "" && rec.errorCount() == 0:
		status = "FAILED: " + rec.Failed
		r.failed++
	case rec.errorCount() > 0:
		status = fmt.Sprintf("%d errors %v", rec.errorCount(), rec.Errors)
		r.failed++
	}
	var what string
	switch {
	case rec.StartupMs > 0:
		what = fmt.Sprintf("%.1f ms", rec.StartupMs)
	case rec.Sessions > 0:
		what = fmt.Sprintf("%d sessions, %.1f KiB each", rec.Sessions, rec.SessionKB)
	case rec.RPS > 0:
		what = fmt.Sprintf("%8.0f req/s  p50 %.3f ms  p99 %.3f ms  cpu %.0f µs/req", rec.RPS, rec.P50Ms, rec.P99Ms, rec.CPUUsPer)
		if rec.DriverCPUUsPer > 0 {
			what += fmt.Sprintf(" (driver %.1f)", rec.DriverCPUUsPer)
		}
	}
	fmt.Printf("  %-8s %-20s %s %s\n", rec.Server, rec.Phase, what, status)
}

func main() {
	work := flag.String("work", "bench/.work", "the work folder: bin/ holds the built servers, results/ receives the run")
	report := flag.String("report", "", "print the tables of the run in this folder (its raw.jsonl) and exit")
	baseline := flag.String("baseline", "", "also measure bin/echo-baseline (and bin/mcpgate-baseline in the gateway hop), mcpgate built at this revision, as the server baseline")
	flag.Parse()
	if *report != "" {
		recs, err := readRecords(filepath.Join(*report, "raw.jsonl"))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		env, _ := os.ReadFile(filepath.Join(*report, "env.txt"))
		fmt.Print(renderTables(recs, string(env)))
		return
	}
	workAbs, err := filepath.Abs(*work)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bench := filepath.Dir(workAbs)
	r := &run{set: loadSettings(), work: workAbs, root: filepath.Dir(bench)}
	ver := readVersions(r.root, bench)
	ver.baseline = *baseline
	r.out = filepath.Join(workAbs, "results", time.Now().UTC().Format("20060102-150405"))
	if err := os.MkdirAll(r.out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r.raw, _ = os.Create(filepath.Join(r.out, "raw.jsonl"))
	r.logf, _ = os.Create(filepath.Join(r.out, "servers.log"))
	env := envText(r.set, ver)
	os.WriteFile(filepath.Join(r.out, "env.txt"), []byte(env), 0o644)
	fmt.Print(env)

	all := specs(workAbs, bench, ver)
	var chosen []*serverSpec
	for _, s := range all {
		if r.set.want(s.key) {
			chosen = append(chosen, s)
		}
	}
	start := time.Now()
	for rep := 1; rep <= r.set.reps; rep++ {
		r.rep = rep
		fmt.Printf("== repetition %d of %d (%s elapsed, load %s)\n", rep, r.set.reps, time.Since(start).Round(time.Second), loadavg())
		// Each repetition starts with another server, so that drift
		// over the run does not always hit the same one first.
		for i := range chosen {
			s := chosen[(i+rep-1)%len(chosen)]
			if r.set.wantPhases("stdio") {
				r.stdioPhases(s)
			}
			if r.set.wantPhases("http") {
				r.httpPhases(s)
			}
		}
		if r.set.want("gateway") {
			r.gatewayPhases(workAbs, gatewayBuild{key: "gateway", label: "mcpgate serve --config"})
			if ver.baseline != "" && r.set.want("baseline") {
				r.gatewayPhases(workAbs, gatewayBuild{key: gatewayBaseline, label: "mcpgate " + ver.baseline + " serve --config", suffix: "-baseline"})
			}
		}
		if r.set.want(gatewayTraced) {
			if sink, stop, err := otlpSink(); err != nil {
				r.emit(record{Server: gatewayTraced, Phase: "gw_http_via_stdio", Failed: err.Error()})
			} else {
				r.gatewayPhases(workAbs, gatewayBuild{key: gatewayTraced, label: "mcpgate serve --config, traced", env: tracedEnv(sink)})
				stop()
			}
		}
	}
	r.raw.Close()
	r.logf.Close()
	recs, err := readRecords(filepath.Join(r.out, "raw.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env += fmt.Sprintf("finished: %s, after %s, load %s\n", time.Now().UTC().Format(time.RFC3339), time.Since(start).Round(time.Second), loadavg())
	os.WriteFile(filepath.Join(r.out, "env.txt"), []byte(env), 0o644)
	tables := renderTables(recs, env)
	os.WriteFile(filepath.Join(r.out, "table.md"), []byte(tables), 0o644)
	fmt.Println()
	fmt.Print(tables)
	fmt.Printf("\nraw JSON lines, tables and server logs in %s\n", r.out)
	if r.failed > 0 {
		fmt.Printf("%d measurements had errors or failed: see the list above the tables' notes and raw.jsonl\n", r.failed)
		os.Exit(1)
	}
}

func envText(s settings, v versions) string {
	var b strings.Builder
	cpu := ""
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "model name"); ok {
				cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
		f.Close()
	}
	fmt.Fprintf(&b, "date: %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "host: %d CPUs (%s), load %s\n", runtime.NumCPU(), cpu, loadavg())
	fmt.Fprintf(&b, "go: %s, node: %s\n", v.goVersion, v.node)
	if v.baseline != "" {
		fmt.Fprintf(&b, "baseline: mcpgate %s (bench/.work/bin/echo-baseline, mcpgate-baseline)\n", v.baseline)
	}
	fmt.Fprintf(&b, "servers: mcpgate %s, go-sdk %s, mcp-go %s, server-everything %s (TS SDK %s)\n", v.mcpgate, v.gosdk, v.mcpgo, v.ts, v.tsSDK)
	fmt.Fprintf(&b, "settings: N=%d PIPE_N=%d REPS=%d STARTS=%d SESSIONS=%d (in %d repetitions) TOOLS=%d TOOLS_N=%d GW_N=%d TS HTTP n=%d ONLY=%s PHASES=%s\n",
		s.n, s.pipeN, s.reps, s.starts, s.sessions, min(s.sessionReps, s.reps), s.tools, s.toolsN, s.gwN, int(float64(s.n)*s.tsHTTPScale), setText(s.only), setText(s.phases))
	return b.String()
}

// stdioPhases: sequential and pipelined echo on one server process,
// start-ups on fresh ones, tools/list on one with many tools.
func (r *run) stdioPhases(s *serverSpec) {
	base := record{Server: s.key, Label: s.label}
	c, err := openStdio(s.key, s.stdio, nil, r.logf)
	if err != nil {
		rec := base
		rec.Phase = "stdio_seq"
		rec.Failed = err.Error()
		r.emit(rec)
		return
	}
	st := base
	st.Phase, st.StartupMs, st.Protocol = "startup", ms(c.startup), c.protocol
	r.emit(st)

	// Warm-up, then sequential.
	warm := base
	c.seqEcho(&warm, r.set.warm, s.tool, s.arg, s.check)
	seq := base
	seq.Phase, seq.Protocol = "stdio_seq", c.protocol
	if warm.Failed != "" {
		seq.Failed = "warm-up: " + warm.Failed
		r.emit(seq)
		c.p.stop()
		return
	}
	measureCPU(&seq, c.p.pid, func() { c.seqEcho(&seq, r.set.n, s.tool, s.arg, s.check) })
	r.emit(seq)

	pipe := base
	pipe.Phase, pipe.Protocol = "stdio_pipe64", c.protocol
	if seq.Failed == "" {
		w := base
		c.pipeEcho(&w, r.set.warm, 64, s.tool, s.arg, s.check)
		measureCPU(&pipe, c.p.pid, func() { c.pipeEcho(&pipe, r.set.pipeN, 64, s.tool, s.arg, s.check) })
	} else {
		pipe.Failed = "not run: the sequential phase failed"
	}
	pipe.RSSPeakKB = procStatusKB(c.p.pid, "VmHWM")
	r.emit(pipe)
	c.p.stop()

	for range r.set.starts {
		rec := base
		rec.Phase = "startup"
		d, err := startupOnce(s.key, s.stdio, nil, r.logf)
		if err != nil {
			rec.Failed = err.Error()
		} else {
			rec.StartupMs = ms(d)
		}
		r.emit(rec)
	}

	tl := base
	tl.Phase = "toolslist"
	if why, ok := s.na["toolslist"]; ok || s.stdioTools == nil {
		tl.NA = why
		r.emit(tl)
		return
	}
	c, err = openStdio(s.key, s.stdioTools(r.set.tools), nil, r.logf)
	if err != nil {
		tl.Failed = err.Error()
		r.emit(tl)
		return
	}
	defer c.p.stop()
	w := base
	c.toolsList(&w, 3, r.set.tools)
	measureCPU(&tl, c.p.pid, func() { c.toolsList(&tl, r.set.toolsN, r.set.tools) })
	r.emit(tl)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// httpServer starts a server in one of its HTTP modes on a free port.
func (r *run) httpServer(s *serverSpec, mode string) (*proc, httpTarget, error) {
	port, err := freePort()
	if err != nil {
		return nil, httpTarget{}, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	argv, env := s.http[mode](addr, port)
	p, err := spawn(s.key+"-"+mode, argv, env, false, s.quiet, r.logf)
	if err != nil {
		return nil, httpTarget{}, err
	}
	if err := waitListening(p, port, 30*time.Second); err != nil {
		p.stop()
		return nil, httpTarget{}, err
	}
	return p, httpTarget{url: "http://" + addr + "/mcp", tool: s.tool, arg: s.arg, check: s.check, pid: p.pid, numbersFrom: &r.ids}, nil
}

// httpPhases: each HTTP mode of a server on a fresh process of its own
// (JSON replies, SSE replies, 2026-07-28 requests where a server needs
// another process for them, idle sessions), 1 and 32 clients each.
func (r *run) httpPhases(s *serverSpec) {
	base := record{Server: s.key, Label: s.label}
	n := max(100, int(float64(r.set.n)*s.httpScale))
	naAll := func(mode, why string) {
		for _, c := range []int{1, 32} {
			rec := base
			rec.Phase, rec.NA = fmt.Sprintf("http_%s_c%d", mode, c), why
			r.emit(rec)
		}
	}
	perRequestDone := false
	for _, mode := range []string{"json", "sse", "perrequest"} {
		if s.http[mode] == nil {
			if why, ok := s.na[mode]; ok {
				naAll(mode, why)
			}
			continue
		}
		p, t, err := r.httpServer(s, mode)
		if err != nil {
			rec := base
			rec.Phase, rec.Failed = "http_"+mode+"_c1", err.Error()
			r.emit(rec)
			continue
		}
		if mode != "perrequest" {
			for _, c := range []int{1, 32} {
				rec := base
				rec.Phase = fmt.Sprintf("http_%s_c%d", mode, c)
				httpEcho(&rec, t, c, n, r.set.warm, false)
				r.emit(rec)
			}
		}
		if s.perRequestIn == mode {
			perRequestDone = true
			if err := probePerRequest(t); err != nil {
				naAll("perrequest", "2026-07-28 requests refused: "+err.Error())
			} else {
				for _, c := range []int{1, 32} {
					rec := base
					rec.Phase = fmt.Sprintf("http_perrequest_c%d", c)
					httpEcho(&rec, t, c, n, r.set.warm, true)
					r.emit(rec)
				}
			}
		}
		if p.exited() {
			rec := base
			rec.Phase, rec.Failed = "http_"+mode, "the server exited during the phase (see servers.log)"
			r.emit(rec)
		}
		p.stop()
	}
	if !perRequestDone {
		naAll("perrequest", "no mode of this server serves 2026-07-28 requests")
	}

	if r.rep > r.set.sessionReps {
		return // memory varies little between repetitions, and this phase is long
	}
	rec := base
	rec.Phase = "idle_sessions"
	if s.http["sessions"] == nil {
		rec.NA = s.na["sessions"]
		r.emit(rec)
		return
	}
	p, t, err := r.httpServer(s, "sessions")
	if err != nil {
		rec.Failed = err.Error()
		r.emit(rec)
		return
	}
	idleSessions(&rec, t, r.set.sessions, r.set.rssCapKB)
	p.stop()
	r.emit(rec)
}
