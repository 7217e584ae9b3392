package main

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// Two replicas of mcpgate serve whose state.db is one Postgres URL
// share their pins: a server under pins: approve is withheld by both,
// mcpgate pins approve --db URL lets its tools through on both without
// a restart, and mcpgate pins reset withholds them again on both. The
// password shows in no output of any of them.
func TestPinsInPostgresAreSharedByReplicasAndTheCommand(t *testing.T) {
	pg := testservice.Postgres(t)
	u, err := url.Parse(pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secretPassword)
	db := u.String()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gw.json")
	b, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"work": map[string]any{
			"command": binary, "args": []string{"serve", "--stdio", "--db", filepath.Join(dir, "work.db")},
			"pins": "approve",
		}},
		"state": map[string]any{"db": db},
	})
	if err := os.WriteFile(cfg, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var replicas []*httpProc
	var sessions []*mcp.ClientSession
	for range 2 {
		p := startHTTP(t, "--config", cfg)
		cs, err := mcp.NewClient(nil, nil).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: p.url})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		replicas, sessions = append(replicas, p), append(sessions, cs)
	}
	var outputs []string
	pinsCmd := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		defer cancel()
		out, err := exec.CommandContext(ctx, binary, append([]string{"pins"}, append(args, "--db", db)...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("mcpgate pins %v: %v\n%s", args, err, out)
		}
		outputs = append(outputs, string(out))
		return string(out)
	}
	// published waits until every replica lists the tool, or none does.
	published := func(want bool, what string) {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for _, cs := range sessions {
			for slices.Contains(gatewayTools(t, cs), "work_create_task") != want {
				if time.Now().After(deadline) {
					t.Fatalf("%s: a replica's tools %v\nreplica logs:\n%s\n%s", what, gatewayTools(t, cs), replicas[0].log(), replicas[1].log())
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	deadline := time.Now().Add(waitFor)
	for !strings.Contains(pinsCmd("list"), "work/create_task") {
		if time.Now().After(deadline) {
			t.Fatalf("the replicas recorded no pin:\n%s\n%s", replicas[0].log(), replicas[1].log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	published(false, "a new server's tools under pins: approve")
	if out := pinsCmd("list", "--json"); strings.Count(out, `"tool": "create_task"`) != 1 || !strings.Contains(out, `"state": "new"`) {
		t.Errorf("pins list: want one pin of create_task, new:\n%s", out)
	}
	if out := pinsCmd("approve", "work"); !strings.Contains(out, "approved work/create_task") {
		t.Fatalf("pins approve:\n%s", out)
	}
	published(true, "the tools approved with mcpgate pins approve --db URL")
	if out := pinsCmd("reset", "work"); !strings.Contains(out, "forgot") {
		t.Fatalf("pins reset:\n%s", out)
	}
	published(false, "the tools met again as new after mcpgate pins reset")
	for i, p := range replicas {
		outputs = append(outputs, p.log())
		if !strings.Contains(p.log(), "postgres://mcpgate:[redacted]@") {
			t.Errorf("replica %d does not log which database keeps its pins:\n%s", i, p.log())
		}
	}
	for _, out := range outputs {
		if strings.Contains(out, secretPassword) {
			t.Errorf("an output shows the password:\n%s", out)
		}
	}
}

// mcpgate pins against a Postgres that does not answer fails with an
// error that names it, without its password.
func TestPinsCommandOnUnreachablePostgresHidesThePassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	db := "postgres://ann:" + secretPassword + "@" + addr + "/state?sslmode=disable"
	for _, args := range [][]string{{"list", "--db", db}, {"approve", "work", "--db", db}} {
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		out, err := exec.CommandContext(ctx, binary, append([]string{"pins"}, args...)...).CombinedOutput()
		cancel()
		if err == nil {
			t.Fatalf("pins %s succeeded: %s", args[0], out)
		}
		if s := string(out); strings.Contains(s, secretPassword) || !strings.Contains(s, "state database: postgres://ann:[redacted]@"+addr) {
			t.Errorf("pins %s: %q; want the database named, without its password", args[0], s)
		}
	}
}
