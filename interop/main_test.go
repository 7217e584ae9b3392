package interop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Revisions are the protocol revisions mcpgate speaks, oldest first.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// perRequestRevision is the stateless revision, reached through server/discover
// rather than initialize.
const perRequestRevision = "2026-07-28"

// env is what TestMain prepares: the binaries under test, the Node
// install, and the HTTP servers the tests share.
var env struct {
	root, dir, tmp string

	mcpgate, fixtures, gosdkPeer, mcpgoPeer string

	node        string // the pinned Node (interop/node_modules/.bin/node)
	nodeModules string

	// Shared HTTP servers: several sessions at once, as in real use.
	tasksURL    string // mcpgate serve --addr 127.0.0.1:0
	fixturesURL string // fixtures --addr 127.0.0.1:0

	// The same behind HAProxy, as replicas sharing Redis (cluster_test.go).
	tasksCluster, fixturesCluster *clusterFront
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// tm adapts TestMain's setup to the helpers that take a testing.TB: a
// failure there ends the run.
type tm struct {
	testing.TB
	cleanups []func()
}

func (t *tm) Helper()                           {}
func (t *tm) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *tm) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func run(m *testing.M) (code int) {
	start := time.Now()
	setup := &tm{}
	defer func() {
		for i := len(setup.cleanups) - 1; i >= 0; i-- {
			setup.cleanups[i]()
		}
		if env.tmp != "" {
			os.RemoveAll(env.tmp)
		}
	}()
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintln(os.Stderr, "interop setup:", v)
			code = 1
		}
	}()

	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	env.dir, env.root = wd, filepath.Dir(wd)
	if env.tmp, err = os.MkdirTemp("", "mcpgate-interop-"); err != nil {
		panic(err)
	}
	bin := filepath.Join(env.tmp, "bin")

	// Our binaries, built once: mcpgate from the root module, the fixtures
	// server and the Go SDK peers from this one.
	build(env.root, "-o", filepath.Join(bin, "mcpgate"), "./cmd/mcpgate")
	build(env.root, "-o", filepath.Join(bin, "clusterup"), "./internal/testdata/clusterup")
	build(env.dir, "-o", bin+string(filepath.Separator), "./fixtures", "./peers/gosdk", "./peers/mcpgo")
	env.mcpgate = filepath.Join(bin, "mcpgate")
	env.fixtures = filepath.Join(bin, "fixtures")
	env.gosdkPeer = filepath.Join(bin, "gosdk")
	env.mcpgoPeer = filepath.Join(bin, "mcpgo")

	env.nodeModules = filepath.Join(env.dir, "node_modules")
	env.node = filepath.Join(env.nodeModules, ".bin", "node")
	if _, err := os.Stat(env.node); err != nil {
		panic("the npm peers are not installed: run `make interop` (or `npm ci` in interop/) first")
	}

	_, env.tasksURL = startHTTPServer(setup, env.mcpgate,
		[]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(env.tmp, "http-tasks.db"), "--log-level", "warn"},
		nil, regexp.MustCompile(`mcpgate is listening on (http://\S+)`))
	_, env.fixturesURL = startHTTPServer(setup, env.fixtures, []string{"--addr", "127.0.0.1:0"}, nil,
		regexp.MustCompile(`fixtures on (http://\S+)`))
	startClusters(setup)

	code = m.Run()
	printMatrix(os.Stdout)
	fmt.Printf("interop run: %.1fs\n", time.Since(start).Seconds())
	return code
}

func build(dir string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"build"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		panic(fmt.Sprintf("go build %v in %s: %v\n%s", args, dir, err, out))
	}
}

// npmBin returns the path of a file inside an installed npm package.
func npmBin(pkg, file string) string {
	return filepath.Join(env.nodeModules, pkg, file)
}

// testCtx bounds one session.
func testCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// tasksCommand is mcpgate serving the task store on stdio, with a
// database of its own.
func tasksCommand(t *testing.T) (string, []string) {
	return env.mcpgate, []string{"serve", "--stdio", "--db", filepath.Join(t.TempDir(), "tasks.db"), "--log-level", "warn"}
}

func fixturesCommand() (string, []string) {
	return env.fixtures, []string{"--stdio"}
}
