package main

import (
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testservice"
)

// secretPassword is put in every Postgres URL of these tests, to look for
// it where it must not be. The test cluster trusts loopback connections,
// so any password opens it.
const secretPassword = "hunter2-not-for-logs"

// Two mcpgate processes given one Postgres URL, one by --db and one by
// MCPGATE_TASKS_DB, share their tasks; neither shows the password.
func TestTasksInPostgresAreSharedByTwoProcesses(t *testing.T) {
	pg := testservice.Postgres(t)
	u, err := url.Parse(pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secretPassword)
	db := u.String()

	one := start(t, serveArgs(db)...)
	one.initialize()
	_, res := parseResult(t, one.roundTrip(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_task","arguments":{"title":"made by one"}}}`))
	var task struct{ ID string }
	if err := json.Unmarshal(res.StructuredContent, &task); err != nil || res.IsError {
		t.Fatalf("create_task: %+v, %v; stderr:\n%s", res, err, one.stderr)
	}

	cmd := exec.Command(binary, "serve", "--stdio")
	cmd.Env = append(os.Environ(), "MCPGATE_TASKS_DB="+db)
	cmd.Stdin = strings.NewReader(initLine + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_task","arguments":{"id":"` + task.ID + `"}}}` + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), "made by one") {
		t.Fatalf("the other process's get_task: %v: %s\nstderr:\n%s", err, out, stderr.String())
	}
	if code := one.wait(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	for name, text := range map[string]string{"the first": one.stderr.String(), "the second": stderr.String()} {
		if strings.Contains(text, secretPassword) {
			t.Errorf("%s process's stderr shows the password:\n%s", name, text)
		}
	}
}

// A Postgres that does not answer stops serve with an error that names
// it, without its password.
func TestUnreachablePostgresIsAnErrorWithoutThePassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	cmd := exec.Command(binary, "serve", "--stdio", "--db", "postgres://ann:"+secretPassword+"@"+addr+"/tasks?sslmode=disable")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve succeeded: %s", out)
	}
	if s := string(out); strings.Contains(s, secretPassword) || !strings.Contains(s, "opening the task database postgres://ann:[redacted]@"+addr) {
		t.Errorf("output %q: want the database named, without its password", s)
	}
}
