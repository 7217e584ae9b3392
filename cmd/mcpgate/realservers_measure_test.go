//go:build measure && linux

package main

// The measurement of the gateway on the whole eval set (74 published npm
// servers): not a test, and not in `make test`, since it saturates a
// 2-core machine for minutes. Run it on a quiet machine:
//
//	cmd/mcpgate/testdata/realservers/install.sh all   # once: about 5 GB in node_modules
//	go test -tags measure -run TestMeasureRealServers -timeout 30m -v ./cmd/mcpgate \
//	    -args -measure.binary /tmp/mcpgate-old
//
// It prints, for a run with every server eager and one with lazy start
// and an idle timeout: the time from the gateway's start to its first
// listing and to its full listing (the last change, once every server is
// listed or nothing has changed for -measure.settle), the servers and
// tools listed against the eval snapshot, and the summed RSS of the
// gateway and every process below it (after the full listing, and in the
// lazy run after the idle timeout has stopped the servers).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	measureBinary    = flag.String("measure.binary", "", "the mcpgate binary to measure (default: this tree's)")
	measureUpstreams = flag.String("measure.upstreams", "../../../shared/eval/upstreams.json", "the eval set's mcpServers file; its tools/ folder beside it has the snapshot")
	measureServers   = flag.String("measure.servers", "", "comma-separated servers to start (default: all)")
	measureSettle    = flag.Duration("measure.settle", 30*time.Second, "how long a listing that lacks servers must stay the same to count as full")
	measureIdle      = flag.Duration("measure.idle", 20*time.Second, "the lazy run's idleTimeout")
)

func TestMeasureRealServers(t *testing.T) {
	bin := *measureBinary
	if bin == "" {
		bin = binary
	}
	root, err := filepath.Abs(filepath.Join("testdata", "realservers"))
	if err != nil {
		t.Fatal(err)
	}
	servers, snapshot := measureConfig(t, root)
	fmt.Printf("binary %s: %d servers, %d tools in the snapshot\n", bin, len(servers), sum(snapshot))
	for _, run := range []struct {
		name     string
		defaults map[string]any
	}{
		{"eager", map[string]any{"start": "eager"}},
		{"lazy, idle " + measureIdle.String(), map[string]any{"start": "lazy", "idleTimeout": measureIdle.String()}},
	} {
		measureRun(t, bin, root, run.name, run.defaults, servers, snapshot)
	}
}

// measureConfig reads the eval set, gives each server the cwd of the
// folder of testdata/realservers that pins its package, and returns the
// servers and the tools each listed in the snapshot.
func measureConfig(t *testing.T, root string) (map[string]json.RawMessage, map[string]int) {
	t.Helper()
	b, err := os.ReadFile(*measureUpstreams)
	if err != nil {
		t.Fatalf("%v (set -measure.upstreams)", err)
	}
	var eval struct {
		Servers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &eval); err != nil {
		t.Fatal(err)
	}
	folders := packageFolders(t, root)
	servers, snapshot := map[string]json.RawMessage{}, map[string]int{}
	want := slices.Sorted(maps.Keys(eval.Servers))
	if *measureServers != "" {
		want = strings.Split(*measureServers, ",")
	}
	for _, name := range want {
		s, ok := eval.Servers[name]
		if !ok {
			t.Fatalf("%s: no server %q", *measureUpstreams, name)
		}
		raw, _ := json.Marshal(s)
		spec := packageOf(raw)
		pkg := spec[:strings.LastIndexByte(spec, '@')]
		if s["cwd"], ok = folders[pkg]; !ok {
			t.Fatalf("no folder of %s pins %s", root, pkg)
		}
		servers[name], _ = json.Marshal(s)
		var tools struct{ Tools []json.RawMessage }
		b, err := os.ReadFile(filepath.Join(filepath.Dir(*measureUpstreams), "tools", name+".json"))
		if err == nil {
			err = json.Unmarshal(b, &tools)
		}
		if err != nil {
			t.Fatalf("the snapshot of %s: %v", name, err)
		}
		snapshot[name] = len(tools.Tools)
	}
	return servers, snapshot
}

// packageFolders maps each pinned package to its folder, installing the
// folders first (install.sh skips those already installed).
func packageFolders(t *testing.T, root string) map[string]any {
	t.Helper()
	install := exec.Command(filepath.Join(root, "install.sh"), "all")
	install.Stdout, install.Stderr = os.Stderr, os.Stderr
	if err := install.Run(); err != nil {
		t.Fatalf("install.sh all: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "package.json"))
	folders := map[string]any{}
	for _, f := range files {
		var p struct{ Dependencies map[string]string }
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			t.Fatal(err)
		}
		for pkg := range p.Dependencies {
			folders[pkg] = filepath.Dir(f)
		}
	}
	return folders
}

// measureRun starts the gateway on servers with defaults, and prints the
// times to its first and full listing and the RSS of its process tree.
func measureRun(t *testing.T, bin, root, name string, defaults map[string]any, servers map[string]json.RawMessage, snapshot map[string]int) {
	dir := t.TempDir()
	env := offlineNpmEnv(t, dir)
	dummyGoogleCredentials(t, filepath.Join(dir, "scratch", "state"))
	rs := &realServers{dir: root, Servers: servers}
	config := filepath.Join(dir, "mcpgate.json")
	rs.config(t, config, map[string]any{"startWindow": "300s", "defaults": defaults}, slices.Sorted(maps.Keys(servers))...)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a bound on a hang
	defer cancel()
	began := time.Now()
	g := startGateway(t, ctx, bin, dir, config, env)
	gw := g.cmd.Process.Pid
	got, err := g.toolCounts(ctx)
	if err != nil {
		t.Fatalf("tools/list: %v\n%s", err, g.stderr)
	}
	first, firstCounts := time.Since(began), got
	full, last := first, got
	for len(last) < len(snapshot) && time.Since(began) < full+*measureSettle {
		time.Sleep(250 * time.Millisecond)
		if got, err = g.toolCounts(ctx); err != nil {
			t.Fatalf("tools/list: %v\n%s", err, g.stderr)
		}
		if !maps.Equal(got, last) {
			full, last = time.Since(began), got
		}
	}
	fmt.Printf("\n%s: first listing %d servers, %d tools after %v; full listing %d/%d servers, %d tools after %v\n",
		name, len(firstCounts), sum(firstCounts), first.Round(time.Millisecond), len(last), len(snapshot), sum(last), full.Round(time.Millisecond))
	for _, n := range slices.Sorted(maps.Keys(snapshot)) {
		if last[n] != snapshot[n] {
			fmt.Printf("  %s: %d tools, %d in the snapshot\n", n, last[n], snapshot[n])
		}
	}
	fmt.Printf("  RSS after the full listing: %s\n", treeRSS(gw))
	if defaults["idleTimeout"] != nil {
		time.Sleep(*measureIdle + 5*time.Second)
		fmt.Printf("  RSS %v after it: %s\n", *measureIdle+5*time.Second, treeRSS(gw))
	}
	record := newTreeRecord()
	record.add(readProcs(), gw)
	g.cs.Close()
	if left := record.awaitNoSurvivors(waitFor); len(left) > 0 {
		fmt.Printf("  %d processes outlived the gateway: %v\n", len(left), left)
	}
}

// treeRSS sums the RSS of the gateway and every process below it.
func treeRSS(gateway int) string {
	procs := readProcs()
	kib, n := procs[gateway].rssKiB, 1
	for _, p := range descendants(procs, gateway) {
		kib += p.rssKiB
		n++
	}
	return fmt.Sprintf("%.1f MiB in %d processes (the gateway %.1f MiB)", float64(kib)/1024, n, float64(procs[gateway].rssKiB)/1024)
}

// dummyGoogleCredentials writes the credential files that gdrive, gmail
// and google-calendar read at start (they never reach Google here).
func dummyGoogleCredentials(t *testing.T, state string) {
	t.Helper()
	token := `{"access_token":"dummy","refresh_token":"dummy","token_type":"Bearer","expiry_date":4102444800000}`
	files := map[string]string{
		"gcp-oauth.keys.json":     `{"installed":{"client_id":"dummy.apps.googleusercontent.com","client_secret":"dummy","redirect_uris":["http://localhost"]}}`,
		"gdrive-credentials.json": token,
		"gmail-credentials.json":  token,
		"gcal-tokens.json":        `{"normal":` + token + `}`,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(state, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
