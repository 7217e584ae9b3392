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
  inputWindow: 90s
audit: {db: /tmp/audit.db, retention: 720h}
`), "gw.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.Calls != (Rate{600, 20}) || c.Limits.Tools["a_echo"] != (Rate{PerMinute: 6}) || c.Limits.Concurrent != 4 || c.Limits.InputWindow.D() != 90*time.Second {
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

// The input window is the gateway's: negative or in a tenant is an error
// that says where it goes.
func TestInputWindowPlace(t *testing.T) {
	_, err := Parse([]byte("mcpServers: {a: {command: x}}\nlimits: {inputWindow: -1s}\ntenants:\n  t:\n    principals: [apikey:k]\n    limits: {inputWindow: 1m}\n"), "gw.yaml", nil)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{"gw.yaml:2:", "inputWindow is negative", "gw.yaml:6:", "set it in the top-level limits section"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q lack %q", msg, want)
		}
	}
}

// The state section names the pins' database; a misspelt key is an
// error that suggests it, and a pin policy outside the three is refused.
func TestStateAndPins(t *testing.T) {
	c, err := Parse([]byte("mcpServers:\n  a: {command: x, pins: approve}\n  b: {command: y}\nstate: {db: /var/lib/mcpgate/state.db}\ntenants:\n  t: {principals: [apikey:k], pins: block}\n"), "gw.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.State.DB != "/var/lib/mcpgate/state.db" || c.Servers["a"].Pins != PinsApprove || c.Servers["b"].Pins != PinsWarn || c.Tenants["t"].Pins != PinsBlock {
		t.Errorf("state %+v, pins %q %q %q", c.State, c.Servers["a"].Pins, c.Servers["b"].Pins, c.Tenants["t"].Pins)
	}
	_, err = Parse([]byte("mcpServers: {a: {command: x, pins: trust}}\nstat: {db: x}\naudit: {db: s.db}\nstate: {db: s.db}\n"), "gw.yaml", nil)
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	for _, want := range []string{"gw.yaml:1:", "pins \"trust\" is not warn, block or approve", "gw.yaml:2:", `did you mean "state"`, "gw.yaml:4:", "state.db is also the audit or task database"} {
		if !strings.Contains(msg, want) {
			t.Errorf("errors %q lack %q", msg, want)
		}
	}
}

// One Postgres database may hold the pins beside the audit log and the
// tasks (each counts its own changes); one SQLite file may not.
func TestStateDatabaseSharedOnlyInPostgres(t *testing.T) {
	for _, tc := range []struct {
		db string
		ok bool
	}{
		{"postgres://mcpgate@db.internal/mcpgate", true},
		{"POSTGRESQL://mcpgate@db.internal/mcpgate", true},
		{"/var/lib/mcpgate/shared.db", false},
	} {
		src := "mcpServers: {a: {command: x}}\naudit: {db: '" + tc.db + "'}\nstate: {db: '" + tc.db + "'}\nbuiltins: {tasks: true, tasksDb: '" + tc.db + "'}\n"
		_, err := Parse([]byte(src), "gw.yaml", nil)
		if (err == nil) != tc.ok {
			t.Errorf("state.db, audit.db and tasksDb all %q: error %v, want ok %v", tc.db, err, tc.ok)
		}
	}
}
