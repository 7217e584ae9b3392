package config

import (
	"strings"
	"testing"
	"time"
)

func TestLimitsAndAudit(t *testing.T) {
	c, err := Parse([]byte(`
mcpServers:
  a: {command: x}
limits:
  calls: {perMinute: 600, burst: 20}
  tools:
    a_echo: {perMinute: 6}
  concurrent: 4
audit: {db: /tmp/audit.db, retention: 720h}
`), "gw.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Calls != (Rate{600, 20}) || c.Limits.Tools["a_echo"] != (Rate{PerMinute: 6}) || c.Limits.Concurrent != 4 {
		t.Errorf("limits %+v", c.Limits)
	}
	if c.Audit.DB != "/tmp/audit.db" || c.Audit.Retention.D() != 720*time.Hour {
		t.Errorf("audit %+v", c.Audit)
	}
	_, err = Parse([]byte("mcpServers: {a: {command: x}}\nlimits:\n  calls: {perMinute: -1}\n  concurent: 2\naudit: {retention: -1s}\n"), "gw.yaml", nil)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{"gw.yaml:3:", "perMinute is negative", `did you mean "concurrent"`, "audit.retention is negative"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q lack %q", msg, want)
		}
	}
}
