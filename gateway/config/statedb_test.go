package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// state.db takes a SQLite file or a Postgres URL; Redacted (what
// check-config prints) shows a file as it is and a URL without its
// password, whether the file wrote it or a variable brought it.
func TestStateDatabaseURLHidesItsPasswordWhenRedacted(t *testing.T) {
	lookup := env("PG_PASSWORD", "s3cret-pw", "STATE_URL", "postgres://app:s3cret-pw@db:5432/state")
	for _, tc := range []struct {
		name          string
		state         string // as written in the file
		shown         string // in Redacted
		wantUnchanged bool   // the parsed value is as written
	}{
		{"a file", "/var/lib/mcpgate/state.db", "/var/lib/mcpgate/state.db", true},
		{"a URL with a password in the file", "postgresql://app:s3cret-pw@db/state?sslmode=require",
			"postgresql://app:" + Redaction + "@db/state?sslmode=require", true},
		{"the URL from a variable", "${STATE_URL}", "postgres://app:" + Redaction + "@db:5432/state", false},
		{"a password from a variable", "postgres://app:${PG_PASSWORD}@db/state", "postgres://app:" + Redaction + "@db/state", false},
		{"a password as a parameter", "postgres://app@db/state?password=s3cret-pw", "postgres://app@db/state?password=" + Redaction, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "mcpServers:\n  a: { command: x }\nstate:\n  db: \"" + tc.state + "\"\n"
			c, err := Parse([]byte(src), "c.yaml", lookup)
			if err != nil {
				t.Fatal(err)
			}
			r := c.Redacted()
			if r.State.DB != tc.shown {
				t.Errorf("Redacted shows state.db %q, want %q", r.State.DB, tc.shown)
			}
			if out, _ := json.Marshal(r); strings.Contains(string(out), "s3cret") {
				t.Errorf("the redacted configuration shows the password: %s", out)
			}
			if tc.wantUnchanged && c.State.DB != tc.state {
				t.Errorf("Redacted changed the configuration it copied: %q", c.State.DB)
			}
			if !strings.Contains(c.State.DB, "s3cret") && strings.Contains(tc.state, "://") {
				t.Errorf("the parsed state.db %q lost its password: the gateway could not connect", c.State.DB)
			}
		})
	}
}
