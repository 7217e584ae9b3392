package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// The cluster section: read with ${VAR} interpolation as any value, a
// Redis URL that go-redis takes or an error that points at it without
// quoting it, and a password that Redacted hides wherever it came from.
func TestClusterSection(t *testing.T) {
	lookup := env("REDIS_PASSWORD", "s3cret-pw", "REDIS_HOST", "redis.internal", "REDIS_URL", "redis://app:s3cret-pw@r:6379/2")
	for _, tc := range []struct {
		name        string
		src         string // the cluster section's YAML, "»" before where the error points
		wantRedis   string // after interpolation
		wantReplica string
		wantShown   string // in Redacted
		wantErr     string
	}{
		{"a plain URL", "redis: redis://127.0.0.1:6379/0\nreplicaId: gw-1", "redis://127.0.0.1:6379/0", "gw-1", "redis://127.0.0.1:6379/0", ""},
		{"TLS", "redis: rediss://redis.internal:6380/1", "rediss://redis.internal:6380/1", "", "rediss://redis.internal:6380/1", ""},
		{"a password from a variable", "redis: redis://:${REDIS_PASSWORD}@${REDIS_HOST}:6379/0",
			"redis://:s3cret-pw@redis.internal:6379/0", "", "redis://:" + Redaction + "@redis.internal:6379/0", ""},
		{"a password written in the file", "redis: redis://default:s3cret-pw@r:6379/0",
			"redis://default:s3cret-pw@r:6379/0", "", "redis://default:" + Redaction + "@r:6379/0", ""},
		{"the whole URL from a variable", "redis: ${REDIS_URL}", "redis://app:s3cret-pw@r:6379/2", "", "redis://app:" + Redaction + "@r:6379/2", ""},
		{"no cluster", "", "", "", "", ""},
		{"an HTTP URL", "redis: »https://:s3cret-pw@r:6379", "", "", "", "cluster.redis must start with redis:// or rediss:// (hint: write redis://host:6379/0, or rediss:// for TLS)"},
		{"a bare address", "redis: »r:6379", "", "", "", "cluster.redis must start with redis:// or rediss://"},
		{"no host", "redis: »redis:///0", "", "", "", "cluster.redis has no host"},
		{"not a URL", "redis: »\"redis://:s3cret pw@r:6379%zz\"", "", "", "", "cluster.redis is not a valid URL"},
		{"a misspelt key", "»replicaID: gw-1", "", "", "", `unknown key "replicaID" (hint: did you mean "replicaId"?)`},
		{"a control character in the id", "replicaId: »\"gw\\n1\"", "", "", "", "cluster.replicaId holds a control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			section := ""
			if tc.src != "" {
				section = "cluster:\n  " + strings.ReplaceAll(tc.src, "\n", "\n  ") + "\n"
			}
			src, at := markers("mcpServers:\n  a: { command: x }\n" + section)
			c, err := Parse([]byte(src), "c.yaml", lookup)
			if tc.wantErr != "" {
				errs := ErrorList(err)
				if len(errs) != 1 || len(at) != 1 {
					t.Fatalf("want one error at the marker, got %v", err)
				}
				if d := errs[0]; d.Pos != at[0] || !strings.Contains(d.Error(), tc.wantErr) || strings.Contains(d.Error(), "s3cret") {
					t.Errorf("got  %v\nwant c.yaml:%d:%d: ...%s..., without the password", d, at[0].Line, at[0].Col, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Cluster.Redis != tc.wantRedis || c.Cluster.ReplicaID != tc.wantReplica {
				t.Errorf("cluster = %+v, want redis %q, replicaId %q", c.Cluster, tc.wantRedis, tc.wantReplica)
			}
			r := c.Redacted()
			if r.Cluster.Redis != tc.wantShown {
				t.Errorf("Redacted cluster.redis = %q, want %q", r.Cluster.Redis, tc.wantShown)
			}
			if out, _ := json.Marshal(r); strings.Contains(string(out), "s3cret") {
				t.Errorf("the redacted configuration shows the password: %s", out)
			}
			if c.Cluster.Redis != tc.wantRedis {
				t.Error("Redacted changed the configuration it copied")
			}
		})
	}
}
