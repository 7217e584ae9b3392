package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testservice"
)

// deadRedis is a Redis URL with a password where nothing listens.
const deadRedis = "redis://:s3cret-pw@127.0.0.1:1/0"

// clusterConfig writes a gateway configuration whose cluster section
// names redis (none if empty) and replica, and returns its path.
func clusterConfig(t *testing.T, redis, replica string) string {
	t.Helper()
	dir := t.TempDir()
	c := map[string]any{"mcpServers": map[string]any{}, "builtins": map[string]any{"tasks": true, "tasksDb": filepath.Join(dir, "tasks.db")}}
	if redis != "" || replica != "" {
		c["cluster"] = map[string]any{"redis": redis, "replicaId": replica}
	}
	b, _ := json.Marshal(c)
	path := filepath.Join(dir, "gateway.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noClusterEnv clears the cluster settings a developer's shell may hold;
// a case's own variables come after it, and the last value counts.
var noClusterEnv = []string{"MCPGATE_REDIS_URL=", "MCPGATE_REPLICA_ID="}

// Issue 23: where mcpgate serve shares its state (--redis over
// MCPGATE_REDIS_URL over the file's cluster.redis; the replica id
// likewise), said in the banner, for the gateway and the plain task
// server alike; with none set, nothing is shared.
func TestServeSharesStateInTheRedisItIsTold(t *testing.T) {
	live := testservice.Redis(t).URL()
	for _, tc := range []struct {
		name        string
		env         []string
		file        []string // the configuration's cluster.redis and replicaId; no --config when nil
		args        []string
		wantReplica string // "" for no cluster
	}{
		{"the flags over the environment and the file", []string{"MCPGATE_REDIS_URL=" + deadRedis, "MCPGATE_REPLICA_ID=from-env"},
			[]string{deadRedis, "from-file"}, []string{"--redis", live, "--replica-id", "from-flag"}, "from-flag"},
		{"the environment over the file", []string{"MCPGATE_REDIS_URL=" + live, "MCPGATE_REPLICA_ID=from-env"},
			[]string{deadRedis, "from-file"}, nil, "from-env"},
		{"the file", nil, []string{live, "from-file"}, nil, "from-file"},
		{"the task server", []string{"MCPGATE_REDIS_URL=" + live}, nil, []string{"--replica-id", "tasks-1"}, "tasks-1"},
		{"nothing set", nil, []string{"", ""}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.file != nil {
				args = append(args, "--config", clusterConfig(t, tc.file[0], tc.file[1]))
			}
			p := startHTTPEnv(t, append(noClusterEnv, tc.env...), args...)
			banner := regexp.MustCompile(`msg="mcpgate serving Streamable HTTP".*`).FindString(p.log())
			if banner == "" {
				t.Fatalf("no banner:\n%s", p.log())
			}
			got := ""
			if m := regexp.MustCompile(`replica=(\S+)`).FindStringSubmatch(banner); m != nil {
				got = m[1]
			}
			if got != tc.wantReplica {
				t.Errorf("the banner names replica %q, want %q:\n%s", got, tc.wantReplica, banner)
			}
			if strings.Contains(p.log(), "s3cret") {
				t.Errorf("the log shows a Redis password:\n%s", p.log())
			}
		})
	}
}

// A Redis that does not answer at start, or a setting that is not a
// Redis URL, stops mcpgate serve with a message that names the setting
// and never the password.
func TestServeRefusesToStartWithoutTheRedisItIsTold(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  []string
		file string // cluster.redis; no --config when empty
		args []string
		want []string
	}{
		{"the flag", nil, "", []string{"--redis", deadRedis},
			[]string{"Redis at 127.0.0.1:1 does not answer", "mcpgate was told to share state there (--redis); start it or remove the setting"}},
		{"the environment", []string{"MCPGATE_REDIS_URL=" + deadRedis}, "", nil,
			[]string{"Redis at 127.0.0.1:1 does not answer", "(MCPGATE_REDIS_URL)"}},
		{"the file", nil, deadRedis, nil,
			[]string{"Redis at 127.0.0.1:1 does not answer", "(cluster.redis in "}},
		{"not a Redis URL", []string{"MCPGATE_REDIS_URL=https://:s3cret-pw@127.0.0.1:1"}, "", nil,
			[]string{"MCPGATE_REDIS_URL: a Redis URL starts with redis:// (or rediss:// for TLS)"}},
		{"no host", nil, "", []string{"--redis", "redis:///0"},
			[]string{"--redis: the Redis URL has no host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "t.db")}, tc.args...)
			if tc.file != "" {
				args = append(args, "--config", clusterConfig(t, tc.file, ""))
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, args...)
			cmd.Env = append(append(os.Environ(), noClusterEnv...), tc.env...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil || err == nil {
				t.Fatalf("mcpgate served instead of refusing to start (%v):\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the output lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(string(out), "s3cret") {
				t.Errorf("the output shows the password:\n%s", out)
			}
		})
	}
}

// The gateway's Prometheus series carry the replica's id, so that the
// series of several replicas stay apart where they are gathered.
func TestGatewayMetricsNameTheReplica(t *testing.T) {
	live := testservice.Redis(t).URL()
	p := startHTTPEnv(t, noClusterEnv, "--config", clusterConfig(t, live, "gw-7"), "--metrics-addr", "127.0.0.1:0")
	ops := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(p.log())
	if ops == nil {
		t.Fatalf("no ops address:\n%s", p.log())
	}
	resp, err := http.Get(ops[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`mcpgate_sessions{replica="gw-7"} `, `mcpgate_upstreams_ready{replica="gw-7"} `} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
