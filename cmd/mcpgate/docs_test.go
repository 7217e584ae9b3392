package main

// Every example a person can copy from README.md or from mcpgate --help
// runs here, against the real binary (built in TestMain) and a real
// `mcpgate serve`, so that a doc example that breaks fails the build.
//
// README.md: each fenced block carries a marker on the line right above
// its opening fence, and a block without one fails the test, so that a
// new example is run, or left out on purpose, never by oversight:
//
//	<!-- test: transcript [continue] [env=NAME=VALUE ...] -->
//	    "$ " lines are commands, run in order by one bash (variables,
//	    the working directory and background jobs carry over); the lines
//	    up to the next "$ " are what the command prints, standard output
//	    and error together, compared after normalize (ids, times and
//	    round trips vary; "…" in an expected line stands for anything).
//	    A command whose output starts with "mcpgate: " must fail, unless
//	    it reports its status itself ($?); any other must succeed. A
//	    command that ends in "&" runs in the background: the test waits
//	    for the --addr it names to accept connections, and does not
//	    compare its output.
//	<!-- test: bash [continue] [env=...] -->
//	    The block is a bash script, run with set -euo pipefail: it must
//	    exit 0.
//	<!-- test: check-config FILE [continue] [env=...] -->
//	    The block is written to FILE in the working directory, and
//	    mcpgate check-config FILE must accept it.
//	<!-- test: go-build [main imports=PATH,PATH...] -->
//	    The block is a Go program that must build in this module; with
//	    main, it is the body of func main, and imports lists its imports.
//	<!-- test: skip REASON -->
//	    Not run: REASON says why (it is printed).
//
// Each block runs in an environment of its own (continue: the previous
// block's): a working directory, a task database, and `mcpgate serve`
// on a free loopback port, which stands for 127.0.0.1:8765 wherever the
// text names it (127.0.0.1:8766 stands for another free port); mcpgate
// first on PATH, MCPGATE_TASKS_DB naming the same database (so that
// `-- mcpgate serve --stdio` sees the tasks the HTTP server keeps) and
// MCPGATE_ADDR=127.0.0.1:0 (so that a bare `mcpgate serve` takes a free
// port).
//
// mcpgate --help: every line of every command's Example is a command
// that must exit 0, run in one such environment, with the files the
// examples name beside it (helpFixtures: gateway.yaml,
// claude_desktop_config.json, a catalogs directory, q.jsonl,
// admin.token) and a gateway of gateway.yaml whose ops listener stands
// for 127.0.0.1:9464. An
// example that serves HTTP runs until it says it is listening, then is
// stopped with SIGTERM and must exit 0; one that serves stdio gets an
// empty standard input and must exit 0 at its end.
//
// What CI cannot have is skipped, saying why: a remote server, a
// browser sign-in, a placeholder (...) for the reader's own value, and
// (offline, or with -short) the npx packages.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

const (
	readmePath = "../../README.md"
	// everything is the reference server the examples start with npx,
	// pinned as in interop/ and bench/.
	everything = "@modelcontextprotocol/server-everything@2026.8.31"
	// docBound bounds one block or example: npx may have to fetch.
	docBound = 6 * waitFor // a bound on a hang
)

// docBlock is one fenced block of the README and its marker.
type docBlock struct {
	line    int    // of the opening fence, 1-based
	kind    string // transcript, bash, check-config, go-build, skip
	file    string // check-config
	reason  string // skip
	cont    bool
	main    bool
	imports []string
	env     []string
	text    string
}

var markerRE = regexp.MustCompile(`^<!-- test: (\S+)(.*?)\s*-->$`)

// reporter is what readmeBlocks reports to: a *testing.T, or in the
// test of the parser, a recorder.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// recorder keeps the errors reported to it.
type recorder struct{ msgs []string }

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}

// readmeBlocks reads the fenced blocks of the README; an unmarked block
// or a marker it cannot read fails the test.
func readmeBlocks(t reporter, text string) []docBlock {
	t.Helper()
	var blocks []docBlock
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		open := i
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		b := docBlock{line: open + 1, text: strings.Join(body, "\n") + "\n"}
		m := []string(nil)
		if open > 0 {
			m = markerRE.FindStringSubmatch(strings.TrimSpace(lines[open-1]))
		}
		if m == nil {
			t.Errorf("README.md:%d: a fenced block without a marker on the line above: add <!-- test: transcript|bash|check-config FILE|go-build|skip REASON --> (see docs_test.go)", b.line)
			continue
		}
		b.kind = m[1]
		words := strings.Fields(m[2])
		switch b.kind {
		case "skip":
			b.reason = strings.TrimSpace(m[2])
			if b.reason == "" {
				t.Errorf("README.md:%d: skip needs a reason", b.line)
			}
			blocks = append(blocks, b)
			continue
		case "transcript", "bash", "check-config", "go-build":
		default:
			t.Errorf("README.md:%d: unknown test kind %q", b.line, b.kind)
			continue
		}
		for _, w := range words {
			switch {
			case w == "continue":
				b.cont = true
			case w == "main":
				b.main = true
			case strings.HasPrefix(w, "env="):
				b.env = append(b.env, strings.TrimPrefix(w, "env="))
			case strings.HasPrefix(w, "imports="):
				b.imports = strings.Split(strings.TrimPrefix(w, "imports="), ",")
			case b.kind == "check-config" && b.file == "":
				b.file = w
			default:
				t.Errorf("README.md:%d: unknown option %q", b.line, w)
			}
		}
		if b.kind == "check-config" && b.file == "" {
			t.Errorf("README.md:%d: check-config needs a FILE", b.line)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// docEnv is where a block or an example runs.
type docEnv struct {
	dir, db     string
	addr, addr2 string // stand for 127.0.0.1:8765 and 127.0.0.1:8766
	ops         string // with helpFixtures: stands for 127.0.0.1:9464
	env         []string
	version     string // what the binary calls itself, shown as dev
	needs       *docNeeds
}

// docNeeds says, once per test, whether the tools a block uses are here.
type docNeeds struct {
	everything func() (bool, string)
}

func newDocNeeds(t *testing.T) *docNeeds {
	return &docNeeds{everything: sync.OnceValues(func() (bool, string) {
		if testing.Short() {
			return false, "-short: the npx examples fetch " + everything
		}
		if _, err := exec.LookPath("npx"); err != nil {
			return false, "npx is not installed"
		}
		r := cli(t, nil, "ping", "--timeout", "90s", "--", "npx", "-y", everything, "stdio")
		if r.code != 0 {
			return false, fmt.Sprintf("npx could not start %s (offline, and not cached?): %s", everything, strings.TrimSpace(r.stderr))
		}
		return true, ""
	})}
}

// skipUnless skips t when text uses a program that is not here.
func (n *docNeeds) skipUnless(t *testing.T, text string) {
	t.Helper()
	for _, tool := range []struct{ use, prog string }{{"python3 ", "python3"}, {"| jq ", "jq"}, {"curl ", "curl"}, {"npx ", "npx"}} {
		if !strings.Contains(text, tool.use) {
			continue
		}
		if tool.prog == "npx" {
			if ok, why := n.everything(); !ok {
				t.Skip(why)
			}
			continue
		}
		if _, err := exec.LookPath(tool.prog); err != nil {
			t.Skipf("%s is not installed", tool.prog)
		}
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func newDocEnv(t *testing.T, needs *docNeeds) *docEnv {
	t.Helper()
	e := &docEnv{dir: t.TempDir(), needs: needs, addr2: freeAddr(t)}
	e.db = filepath.Join(e.dir, "tasks.db")
	home := t.TempDir()
	e.env = []string{
		"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"MCPGATE_TASKS_DB=" + e.db,
		"MCPGATE_ADDR=127.0.0.1:0",
		"MCPGATE_API_KEY=", "MCPGATE_LOG_LEVEL=info", "MCPGATE_CONFIG=", "MCPGATE_TENANT=", "MCPGATE_METRICS_ADDR=",
		"COLUMNS=",
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"XDG_DATA_HOME=" + filepath.Join(home, "data"),
	}
	p := startHTTPEnv(t, e.env, "--db", e.db)
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	e.addr = u.Host
	out, err := exec.Command(binary, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	e.version = strings.TrimPrefix(strings.TrimSpace(string(out)), "mcpgate ")
	return e
}

// sub puts the environment's addresses in place of the ones the docs
// name.
func (e *docEnv) sub(s string) string {
	ops := cmpOr(e.ops, "127.0.0.1:9464")
	return strings.NewReplacer("127.0.0.1:8765", e.addr, "127.0.0.1:8766", e.addr2, "127.0.0.1:9464", ops).Replace(s)
}

// command runs a bash script in the environment, in a process group of
// its own that is killed afterwards (background servers included).
func (e *docEnv) command(ctx context.Context, script string, extraEnv ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir = e.dir
	cmd.Env = append(append(os.Environ(), e.env...), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitFor
	return cmd
}

func (e *docEnv) run(t *testing.T, script string, extraEnv ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), docBound)
	defer cancel()
	cmd := e.command(ctx, script, extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left in the background
	}
	if ctx.Err() != nil {
		t.Fatalf("no end within %v:\n%s", docBound, out.String())
	}
	return out.String(), err
}

func TestReadmeExamplesRun(t *testing.T) {
	text, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	needs := newDocNeeds(t)
	var env *docEnv
	for _, b := range readmeBlocks(t, string(text)) {
		name := fmt.Sprintf("README.md:%d:%s", b.line, b.kind)
		if b.kind != "skip" && b.kind != "go-build" && (!b.cont || env == nil) {
			env = newDocEnv(t, needs)
		}
		e := env
		t.Run(name, func(t *testing.T) {
			switch b.kind {
			case "skip":
				t.Skip(b.reason)
			case "transcript":
				e.needs.skipUnless(t, b.text)
				e.transcript(t, b)
			case "bash":
				e.needs.skipUnless(t, b.text)
				if out, err := e.run(t, "set -euo pipefail\n"+e.sub(b.text), b.env...); err != nil {
					t.Errorf("README.md:%d: the script failed (%v):\n%s", b.line, err, out)
				}
			case "check-config":
				if err := os.WriteFile(filepath.Join(e.dir, b.file), []byte(e.sub(b.text)), 0o600); err != nil {
					t.Fatal(err)
				}
				if out, err := e.run(t, "mcpgate check-config "+b.file, b.env...); err != nil {
					t.Errorf("README.md:%d: mcpgate check-config %s (%v):\n%s", b.line, b.file, err, out)
				}
			case "go-build":
				goBuild(t, b)
			}
		})
	}
}

// step is one command of a transcript and what it prints.
type step struct {
	line       int
	cmd        string
	want       []string
	background bool
}

var backgroundRE = regexp.MustCompile(`[^&]&\s*$`)

func parseTranscript(b docBlock) []step {
	var steps []step
	for i, l := range strings.Split(strings.TrimRight(b.text, "\n"), "\n") {
		if c, ok := strings.CutPrefix(l, "$ "); ok {
			steps = append(steps, step{line: b.line + 1 + i, cmd: c, background: backgroundRE.MatchString(c)})
			continue
		}
		if len(steps) > 0 {
			s := &steps[len(steps)-1]
			s.want = append(s.want, l)
		}
	}
	return steps
}

const stepMark = "@@mcpgate-doc-step@@"

var (
	stepMarkRE = regexp.MustCompile(`\n?` + stepMark + ` (\S+)\n`)
	addrFlagRE = regexp.MustCompile(`--addr[ =](\S+)`)
)

func (e *docEnv) transcript(t *testing.T, b docBlock) {
	steps := parseTranscript(b)
	if len(steps) == 0 {
		t.Fatalf("README.md:%d: a transcript without a \"$ \" line", b.line)
	}
	var script strings.Builder
	script.WriteString("exec 2>&1\n__step() { printf '\\n" + stepMark + " %s\\n' \"$1\"; }\n")
	for i, s := range steps {
		cmd := e.sub(s.cmd)
		if !s.background {
			fmt.Fprintf(&script, "%s\n__step \"$?\"\n", cmd)
			continue
		}
		cmd = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(cmd), "&"))
		fmt.Fprintf(&script, "%s >background-%d.log 2>&1 &\n", cmd, i)
		m := addrFlagRE.FindStringSubmatch(cmd)
		if m == nil {
			t.Fatalf("README.md:%d: a background command without --addr: the test cannot tell when it is up", s.line)
		}
		host, port, _ := net.SplitHostPort(m[1])
		// Bounded: 400 tries 50 ms apart.
		fmt.Fprintf(&script, "for __i in $(seq 400); do (: <>/dev/tcp/%s/%s) 2>/dev/null && break; sleep 0.05; done\n__step background\n", host, port)
	}
	out, _ := e.run(t, script.String(), b.env...)
	parts := stepMarkRE.Split(out, -1)
	statuses := stepMarkRE.FindAllStringSubmatch(out, -1)
	if len(statuses) != len(steps) {
		t.Fatalf("README.md:%d: the transcript stopped after %d of %d commands:\n%s", b.line, len(statuses), len(steps), out)
	}
	for i, s := range steps {
		if s.background {
			continue
		}
		got := normalize(strings.ReplaceAll(parts[i], e.version, "dev"))
		want := normalize(e.sub(strings.Join(s.want, "\n")))
		status := statuses[i][1]
		wantFail := strings.HasPrefix(want, "mcpgate: ") && !strings.Contains(s.cmd, "$?")
		switch {
		case wantFail && status == "0":
			t.Errorf("README.md:%d: $ %s\nsucceeded; the README shows it failing", s.line, s.cmd)
		case !wantFail && status != "0":
			t.Errorf("README.md:%d: $ %s\nexited with status %s:\n%s", s.line, s.cmd, status, parts[i])
		}
		if !matchOutput(want, got) {
			t.Errorf("README.md:%d: $ %s\nthe README shows:\n%s\nthe binary prints:\n%s", s.line, s.cmd, indent(want), indent(got))
		}
	}
}

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`task_[0-9a-z]{16}`), "task_<id>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "<time>"},
	{regexp.MustCompile(`in \d+(\.\d+)? ms\b`), "in <n> ms"},
	{regexp.MustCompile(`\b\d{1,2}:\d\d:\d\d[\s\x{202f}]?[AP]M\b`), "<clock>"},
}

// normalize replaces what differs from run to run, and trims blank lines
// at the ends.
func normalize(s string) string {
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return strings.Trim(s, "\n")
}

// matchOutput compares line by line; "…" in a wanted line stands for any
// text, a cut table cell included.
func matchOutput(want, got string) bool {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		return false
	}
	for i := range wl {
		if wl[i] == gl[i] {
			continue
		}
		if !strings.Contains(wl[i], "…") {
			return false
		}
		parts := strings.Split(wl[i], "…")
		for j := range parts {
			parts[j] = regexp.QuoteMeta(parts[j])
		}
		if !regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(gl[i]) {
			return false
		}
	}
	return true
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

// goBuild builds a Go block as a program of this module (an overlay adds
// it in a directory of its own, so that its imports resolve here).
func goBuild(t *testing.T, b docBlock) {
	t.Helper()
	src := b.text
	if b.main {
		var sb strings.Builder
		sb.WriteString("package main\n\nimport (\n")
		for _, imp := range b.imports {
			fmt.Fprintf(&sb, "\t%q\n", imp)
		}
		sb.WriteString(")\n\nfunc main() {\n" + src + "}\n")
		src = sb.String()
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg := fmt.Sprintf("internal/readmeexample%d", b.line)
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(root, pkg, "main.go"): file}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), docBound)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", filepath.Join(tmp, "example"), "./"+pkg)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Errorf("README.md:%d: the Go example does not build (%v):\n%s\n%s", b.line, err, out, src)
	}
}

// Help examples.

// helpSkips are the examples CI cannot run, and why.
func helpSkip(line string) string {
	for _, u := range regexp.MustCompile(`https?://[^\s'"]+`).FindAllString(line, -1) {
		if p, err := url.Parse(u); err == nil && p.Hostname() != "127.0.0.1" && p.Hostname() != "localhost" && p.Hostname() != "::1" {
			return "needs the remote server " + p.Host + ", which CI cannot reach"
		}
	}
	if strings.Contains(line, "--oauth") {
		return "needs a browser sign-in"
	}
	if strings.Contains(line, "...") {
		return "holds a placeholder (...) for a value of the reader's"
	}
	return ""
}

// helpFixtures are the files the examples name, in the working directory.
func (e *docEnv) helpFixtures(t *testing.T) {
	t.Helper()
	files := map[string]string{
		"gateway.yaml":               "builtins: { tasks: true }\nmcpServers:\n  more:\n    command: mcpgate\n    args: [serve, --stdio]\n",
		"claude_desktop_config.json": `{"mcpServers": {"tasks": {"command": "mcpgate", "args": ["serve", "--stdio"]}}}` + "\n",
		"q.jsonl":                    `{"id": "1", "query": "create a task"}` + "\n" + `{"id": "2", "query": "mark a task done"}` + "\n",
		"admin.token":                "0123456789abcdef0123456789abcdef\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(e.dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A gateway of that file, with its ops listener (status, metrics).
	e.ops = freeAddr(t)
	startHTTPEnv(t, e.env, "--config", filepath.Join(e.dir, "gateway.yaml"), "--metrics-addr", e.ops, "--admin-token-file", filepath.Join(e.dir, "admin.token"))
	if out, err := e.run(t, "for i in $(seq 400); do (: <>/dev/tcp/"+strings.Replace(e.ops, ":", "/", 1)+") 2>/dev/null && exit 0; sleep 0.05; done; exit 1"); err != nil {
		t.Fatalf("the gateway's ops listener did not come up: %v\n%s", err, out)
	}
	// A catalog is what tools list --json prints.
	out, err := e.run(t, e.sub("mkdir -p catalogs && mcpgate tools list --json http://127.0.0.1:8765/mcp >catalogs/tasks.json"))
	if err != nil {
		t.Fatalf("making catalogs/tasks.json: %v\n%s", err, out)
	}
}

// serves reports whether an example line starts mcpgate serve, and
// whether over stdio.
func serves(line string) (serve, stdio bool) {
	f := strings.Fields(line)
	return len(f) > 1 && f[0] == "mcpgate" && f[1] == "serve", strings.Contains(line, "--stdio")
}

func TestHelpExamplesRun(t *testing.T) {
	needs := newDocNeeds(t)
	var e *docEnv
	n := 0
	for _, c := range allCommands() {
		for i, line := range strings.Split(c.Example, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			n++
			if e == nil {
				e = newDocEnv(t, needs)
				e.helpFixtures(t)
			}
			t.Run(fmt.Sprintf("%s#%d", c.CommandPath(), i+1), func(t *testing.T) {
				if why := helpSkip(line); why != "" {
					t.Skip(why)
				}
				e.needs.skipUnless(t, line+" ")
				cmd := e.sub(line)
				if serve, stdio := serves(line); serve && !stdio {
					e.serveUntilListening(t, c.CommandPath(), cmd)
					return
				}
				if out, err := e.run(t, cmd); err != nil {
					t.Errorf("%s --help: example\n  %s\nfailed (%v):\n%s", c.CommandPath(), line, err, out)
				}
			})
		}
	}
	if n < 20 {
		t.Errorf("found %d help examples; has the command tree changed?", n)
	}
}

// serveUntilListening starts an example that serves HTTP, waits for it to
// say where it listens, stops it with SIGTERM and wants exit status 0.
func (e *docEnv) serveUntilListening(t *testing.T, path, line string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), docBound)
	defer cancel()
	cmd := e.command(ctx, "exec "+line)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	listening := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !found && strings.HasPrefix(sc.Text(), "mcpgate is listening on ") {
				found = true
				listening <- true
			}
		}
		if !found {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		if !ok {
			cmd.Wait()
			t.Fatalf("%s --help: example\n  %s\nexited before listening:\n%s", path, line, log.String())
		}
	case <-ctx.Done():
		t.Fatalf("%s --help: example\n  %s\ndid not start listening within %v", path, line, docBound)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("%s --help: example\n  %s\ndid not stop cleanly on SIGTERM (%v):\n%s", path, line, err, log.String())
	}
}

// The test's own machinery: normalising and matching, which decide what
// a README example must print.
func TestDocOutputMatching(t *testing.T) {
	for _, tt := range []struct {
		want, got string
		match     bool
	}{
		{"pong from mcpgate dev (protocol 2026-07-28) in 1.1 ms", "pong from mcpgate dev (protocol 2026-07-28) in 0.3 ms", true},
		{"pong from mcpgate dev (protocol 2026-07-28) in 1.1 ms", "pong from mcpgate dev (protocol 2025-11-25) in 0.3 ms", false},
		{`"id": "task_bwfkjjzyv0cizdiu",`, `"id": "task_p83lhz8wecqy52oo",`, true},
		{`"created_at": "2026-11-23T10:00:53.250Z"`, `"created_at": "2027-01-02T03:04:05.006Z"`, true},
		{"created at 10:01:14 AM", "created at 4:01:12\u202fPM", true},
		{"complete_task  Mark a task done and record when, then return it. Completing a t…", "complete_task  Mark a task done and record when, then return it. Completing a t…", true},
		{"complete_task  Mark a task done…", "complete_task  Mark a task done and more", true},
		{"complete_task  Mark a task done…", "create_task  Mark a task done and more", false},
		{"  …/python3: No module named x", "  /usr/bin/python3: No module named x", true},
		{"one\ntwo", "one", false},
		{"one\n\n", "\none", true},
	} {
		if got := matchOutput(normalize(tt.want), normalize(tt.got)); got != tt.match {
			t.Errorf("matchOutput(%q, %q) = %v, want %v", tt.want, tt.got, got, tt.match)
		}
	}
	blocks := readmeBlocks(t, "<!-- test: transcript continue env=A=b -->\n```\n$ mcpgate ping\npong\n$ serve --addr 127.0.0.1:8766 &\n```\n<!-- test: skip no reason needed? -->\n```sh\nx\n```\n")
	if len(blocks) != 2 || !blocks[0].cont || blocks[0].env[0] != "A=b" || blocks[1].reason != "no reason needed?" {
		t.Fatalf("readmeBlocks: %+v", blocks)
	}
	steps := parseTranscript(blocks[0])
	if len(steps) != 2 || steps[0].want[0] != "pong" || steps[0].background || !steps[1].background || steps[1].line != 5 {
		t.Fatalf("parseTranscript: %+v", steps)
	}
}

// An unmarked block, or a marker the test cannot read, fails the test:
// checked on READMEs of one block.
func TestUnmarkedReadmeBlockFails(t *testing.T) {
	for _, tt := range []struct {
		text string
		want string
	}{
		{"text\n```sh\nmcpgate serve\n```\n", "without a marker"},
		{"<!-- test: skip -->\n```sh\nmcpgate serve\n```\n", "skip needs a reason"},
		{"<!-- test: run -->\n```sh\nmcpgate serve\n```\n", `unknown test kind "run"`},
		{"<!-- test: check-config -->\n```json\n{}\n```\n", "check-config needs a FILE"},
		{"<!-- test: bash again -->\n```sh\ntrue\n```\n", `unknown option "again"`},
	} {
		r := &recorder{}
		readmeBlocks(r, tt.text)
		if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], tt.want) {
			t.Errorf("%q: errors %q, want one saying %q", tt.text, r.msgs, tt.want)
		}
	}
}
