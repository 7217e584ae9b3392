package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// These tests run the real mcpgate binary, built once in TestMain, over
// real pipes.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcpgate-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mcpgate")
	// A gateway the tests start keeps its pins here, not in the user's
	// data directory.
	os.Setenv("MCPGATE_STATE_DB", filepath.Join(dir, "state.db"))
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building mcpgate:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const waitFor = 20 * time.Second // a bound on a hang, never a timing assertion

type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *bytes.Buffer
	exited chan error
}

func start(t testing.TB, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binary, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 100), stderr: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		p.exited <- cmd.Wait()
	}()
	// Kill, not a look at ProcessState: that is written by Wait in the
	// reader goroutine. Killing a process that has exited is harmless.
	t.Cleanup(func() { cmd.Process.Kill() })
	return p
}

func serveArgs(db string) []string { return []string{"serve", "--stdio", "--db", db} }

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *proc) recv() string {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("mcpgate closed stdout; stderr:\n%s", p.stderr)
		}
		if !json.Valid([]byte(l)) {
			p.t.Fatalf("stdout carried a line that is not JSON: %q", l)
		}
		return l
	case <-time.After(waitFor):
		p.t.Fatalf("no answer from mcpgate; stderr:\n%s", p.stderr)
		return ""
	}
}

// roundTrip sends a line and returns the next line.
func (p *proc) roundTrip(line string) string {
	p.t.Helper()
	p.send(line)
	return p.recv()
}

// wait closes stdin and returns the exit code.
func (p *proc) wait() int {
	p.t.Helper()
	p.stdin.Close()
	select {
	case err := <-p.exited:
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			p.t.Fatal(err)
		}
		return 0
	case <-time.After(waitFor):
		p.t.Fatalf("mcpgate did not exit after EOF; stderr:\n%s", p.stderr)
		return -1
	}
}

const initLine = `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

func (p *proc) initialize() {
	p.t.Helper()
	resp := p.roundTrip(initLine)
	if !strings.HasPrefix(resp, `{"jsonrpc":"2.0","id":"init-1","result":{"protocolVersion":"2025-11-25"`) {
		p.t.Fatalf("initialize: %s", resp)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func parseResult(t *testing.T, line string) (id string, res toolResult) {
	t.Helper()
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result toolResult      `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error != nil {
		t.Fatalf("not a result: %s", line)
	}
	return string(m.ID), m.Result
}

func TestStdioSession(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasks.db")
	p := start(t, serveArgs(db)...)
	p.initialize()

	resp := p.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var list struct {
		ID     int `json:"id"`
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	json.Unmarshal([]byte(resp), &list)
	var names []string
	for _, tl := range list.Result.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "complete_task,create_task,delete_task,get_task,list_tasks,update_task" {
		t.Fatalf("tools/list: %s", resp)
	}
	if !strings.HasPrefix(resp, `{"jsonrpc":"2.0","id":2,"result":`) {
		t.Errorf("integer id not echoed as a number: %.60s", resp)
	}

	id, res := parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":"3","method":"tools/call","params":{"name":"create_task","arguments":{"title":"Write the e2e test","tags":["testing"]}}}`))
	if id != `"3"` || res.IsError {
		t.Fatalf("create_task: id %s %+v", id, res)
	}
	var task struct{ ID, Title, Status string }
	json.Unmarshal(res.StructuredContent, &task)
	if !strings.HasPrefix(task.ID, "task_") || task.Status != "pending" {
		t.Fatalf("created %s", res.StructuredContent)
	}

	id, res = parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`))
	if id != `4` || !strings.Contains(string(res.StructuredContent), task.ID) {
		t.Fatalf("list_tasks: %s", res.StructuredContent)
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d after EOF; stderr:\n%s", code, p.stderr)
	}
}

func TestStdioErrors(t *testing.T) {
	p := start(t, serveArgs(filepath.Join(t.TempDir(), "tasks.db"))...)
	// Before initialize only ping works.
	if r := p.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`); r != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("ping before initialize: %s", r)
	}
	checkError(t, p.roundTrip(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), `2`, -32600, "send initialize first")
	p.initialize()
	checkError(t, p.roundTrip(initLine), `"init-1"`, -32600, "only once")

	for _, tt := range []struct {
		in, id string
		code   int
		words  string
	}{
		{`{"jsonrpc":"2.0","id":10,"method":"tools/list"`, `null`, -32700, "JSON"}, // not JSON: no id, though one shows
		{`this is not json`, `null`, -32700, "invalid JSON"},
		{"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"\xff\"}", `null`, -32700, "UTF-8"},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, `null`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `null`, -32600, "fractional"},
		{`{"jsonrpc":"2.0","id":[1],"method":"ping"}`, `null`, -32600, "array"},
		{`{"jsonrpc":"2.0","id":12}`, `12`, -32600, "method"},
		{`{"id":13,"method":"ping"}`, `13`, -32600, "jsonrpc"},
		{`{"jsonrpc":"2.0","id":14,"method":"ping","params":[]}`, `14`, -32600, "params"},
		{`{"jsonrpc":"2.0","id":"15","method":"no/such/method"}`, `"15"`, -32601, "no/such/method"},
		{`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"no_such_tool"}}`, `16`, -32602, "no_such_tool"},
		{`{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"cursor":"bogus"}}`, `17`, -32602, "cursor"},
		{`[{"jsonrpc":"2.0","id":18,"method":"ping"}]`, `null`, -32600, "batch"},
	} {
		checkError(t, p.roundTrip(tt.in), tt.id, tt.code, tt.words)
	}
	// Notifications, even bad ones, are never answered; the next answer is
	// the ping's.
	p.send(`{"jsonrpc":"2.0","method":"notifications/unknown"}`)
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"nothing"}}`)
	p.send(`{"jsonrpc":"1.0","method":"notifications/bad"}`)
	p.send(`{"jsonrpc":"2.0","id":999,"result":{}}`)
	if r := p.roundTrip(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); r != `{"jsonrpc":"2.0","id":"after","result":{}}` {
		t.Errorf("after notifications: %s", r)
	}
	// Invalid arguments are a tool error the model can read.
	_, res := parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"create_task","arguments":{"priority":"urgent"}}}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, "title") || !strings.Contains(res.Content[0].Text, "priority") {
		t.Errorf("invalid arguments: %+v", res)
	}
	_, res = parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"task_nope"}}}`))
	if !res.IsError || !strings.Contains(res.Content[0].Text, "task_nope") {
		t.Errorf("unknown task: %+v", res)
	}
	if code := p.wait(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if strings.Contains(p.stderr.String(), "panic") {
		t.Errorf("stderr mentions a panic:\n%s", p.stderr)
	}
}

func checkError(t *testing.T, line, id string, code int, words string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error == nil {
		t.Errorf("want error %d, got %s", code, line)
		return
	}
	if string(m.ID) != id || m.Error.Code != code || !strings.Contains(m.Error.Message, words) {
		t.Errorf("got %s; want id %s code %d mentioning %q", line, id, code, words)
	}
}

func TestRestartKeepsTasks(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasks.db")
	p := start(t, serveArgs(db)...)
	p.initialize()
	_, res := parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"survive a restart"}}}`))
	var task struct{ ID string }
	json.Unmarshal(res.StructuredContent, &task)
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	p = start(t, serveArgs(db)...)
	p.initialize()
	_, res = parseResult(t, p.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"`+task.ID+`"}}}`))
	if res.IsError || !strings.Contains(string(res.StructuredContent), "survive a restart") {
		t.Errorf("after restart: %+v", res)
	}
	p.wait()
}

func TestDatabaseFromEnvironment(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sub", "env.db")
	cmd := exec.Command(binary, "serve", "--stdio")
	cmd.Env = append(os.Environ(), "MCPGATE_TASKS_DB="+db)
	cmd.Stdin = strings.NewReader(initLine + "\n")
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"id":"init-1"`) {
		t.Fatalf("%v: %s", err, out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("MCPGATE_TASKS_DB not used: %v", err)
	}
}

func TestSignalStopsCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		p := start(t, serveArgs(filepath.Join(t.TempDir(), "tasks.db"))...)
		p.initialize()
		p.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		p.cmd.Process.Signal(sig)
		select {
		case err := <-p.exited:
			if err != nil {
				t.Errorf("%v: exit %v; stderr:\n%s", sig, err, p.stderr)
			}
		case <-time.After(waitFor):
			t.Fatalf("%v: mcpgate did not exit", sig)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	out, err := exec.Command(binary, "version").Output()
	if err != nil || !strings.Contains(string(out), "mcpgate ") || !strings.Contains(string(out), "2025-11-25") {
		t.Errorf("version: %v %s", err, out)
	}
	out, err = exec.Command(binary, "serve", "--log-level", "loud").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--log-level") {
		t.Errorf("bad flag: %v %s", err, out)
	}
}
