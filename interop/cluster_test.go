package interop

// The cluster rows: our servers as several replicas behind HAProxy,
// round robin with no stickiness, so that consecutive requests of one
// client reach different replicas, which share sessions through one
// Redis. internal/testdata/clusterup starts them (this module cannot
// import internal packages): `mcpgate serve` with its task store on one
// Postgres, and the fixtures server with --redis. The clients of
// ourserver_test.go run against them as over plain Streamable HTTP,
// under the transport "cluster".

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// clusterReplicas is how many replicas each cluster runs.
const clusterReplicas = 3

var clusterLabel = fmt.Sprintf("http (%d replicas, HAProxy)", clusterReplicas)

// clusterStart bounds a cluster's start: Redis, initdb and Postgres,
// each replica, then HAProxy, on two busy cores.
const clusterStart = 2 * time.Minute

// clusterExitMissing is clusterup's status when redis-server, haproxy or
// Postgres is not installed.
const clusterExitMissing = 3

// requireServices is the variable (set by make test) under which a
// missing service fails the cluster rows rather than skipping them.
const requireServices = "MCPGATE_REQUIRE_SERVICES"

var clusterFrontRE = regexp.MustCompile(`cluster front (http://\S+)`)

// clusterFront is a cluster that clusterup is starting: the front's URL
// once it is up, or why it is not.
type clusterFront struct {
	p    *proc
	done chan struct{} // closed when the fields are set
	url  string
	skip string // a program is missing: the rows are skipped
	err  error
}

// startCluster starts clusterup with args in the background; the rows
// wait for it (see wait), so that the other tests need not. TestMain's
// cleanup stops it: clusterup then stops the replicas, HAProxy and the
// services.
func startCluster(t testing.TB, args ...string) *clusterFront {
	t.Helper()
	p, err := startProc(filepath.Join(env.tmp, "bin", "clusterup"), append([]string{"-n", itoa(clusterReplicas)}, args...), nil)
	if err != nil {
		t.Fatalf("starting clusterup: %v", err)
	}
	c := &clusterFront{p: p, done: make(chan struct{})}
	t.Cleanup(func() { stopCluster(p) })
	go func() {
		defer close(c.done)
		m, err := p.out.waitFor(clusterFrontRE, p.exited, clusterStart)
		switch {
		case err == nil:
			c.url = m[1]
		case exitedWith(p, clusterExitMissing):
			c.skip = p.out.String()
		default:
			c.err = err
		}
	}()
	return c
}

func exitedWith(p *proc, code int) bool {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode() == code
	default:
		return false
	}
}

// stopCluster sends clusterup SIGTERM and gives it the time to drain the
// replicas; the kernel stops what it started if it has to be killed.
func stopCluster(p *proc) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// wait returns the front's URL, skipping t when a service is not
// installed (failing it under MCPGATE_REQUIRE_SERVICES=1).
func (c *clusterFront) wait(t *testing.T) string {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(clusterStart + 10*time.Second): // a bound on a hang
		t.Fatal("the cluster did not come up")
	}
	switch {
	case c.skip != "" && os.Getenv(requireServices) == "1":
		t.Fatalf("%s (%s=1)", c.skip, requireServices)
	case c.skip != "":
		t.Skip(c.skip)
	case c.err != nil:
		t.Fatalf("the cluster did not come up: %v", c.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			// Every row shares the cluster: this is its latest output.
			t.Logf("the cluster's output (replicas at warn):\n%s", c.p.out.String())
		}
	})
	return c.url
}

// startClusters starts the task store's and the fixtures' clusters.
func startClusters(t testing.TB) {
	env.tasksCluster = startCluster(t, "-postgres", "--",
		env.mcpgate, "serve", "--addr", "127.0.0.1:{port}", "--redis", "{redis}", "--db", "{postgres}",
		"--replica-id", "tasks-{i}", "--log-level", "warn")
	env.fixturesCluster = startCluster(t, "--", env.fixtures, "--addr", "127.0.0.1:{port}", "--redis", "{redis}")
}

// clusterTargets are the task store and the fixtures behind their fronts.
func clusterTargets(t *testing.T) (tasks, fixtures target) {
	return target{transport: "http", url: env.tasksCluster.wait(t)},
		target{transport: "http", url: env.fixturesCluster.wait(t)}
}
