package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// builtins.tasksDb and audit.db take a SQLite file or a Postgres URL;
// Redacted shows a file as it is and a URL without its password,
// whether the file wrote it or a variable brought it.
func TestDatabaseURLsHideTheirPasswordWhenRedacted(t *testing.T) {
	lookup := env("PG_PASSWORD", "s3cret-pw", "TASKS_URL", "postgres://app:s3cret-pw@db:5432/tasks")
	for _, tc := range []struct {
		name          string
		tasks, audit  string // as written in the file
		shownTasks    string // in Redacted
		shownAudit    string
		wantUnchanged bool // the parsed values are as written
	}{
		{"files", "/var/lib/mcpgate/tasks.db", "/var/lib/mcpgate/audit.db",
			"/var/lib/mcpgate/tasks.db", "/var/lib/mcpgate/audit.db", true},
		{"URLs with a password in the file", "postgres://app:s3cret-pw@db:5432/tasks", "postgresql://app:s3cret-pw@db/audit?sslmode=require",
			"postgres://app:" + Redaction + "@db:5432/tasks", "postgresql://app:" + Redaction + "@db/audit?sslmode=require", true},
		{"a password from a variable", "${TASKS_URL}", "postgres://app:${PG_PASSWORD}@db/audit",
			"postgres://app:" + Redaction + "@db:5432/tasks", "postgres://app:" + Redaction + "@db/audit", false},
		{"a password as a parameter", "postgres://app@db/tasks?password=s3cret-pw", "",
			"postgres://app@db/tasks?password=" + Redaction, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "mcpServers:\n  a: { command: x }\nbuiltins:\n  tasks: true\n  tasksDb: \"" + tc.tasks + "\"\n"
			if tc.audit != "" {
				src += "audit:\n  db: \"" + tc.audit + "\"\n"
			}
			c, err := Parse([]byte(src), "c.yaml", lookup)
			if err != nil {
				t.Fatal(err)
			}
			r := c.Redacted()
			if r.Builtins.TasksDB != tc.shownTasks || r.Audit.DB != tc.shownAudit {
				t.Errorf("Redacted shows tasksDb %q and audit.db %q, want %q and %q", r.Builtins.TasksDB, r.Audit.DB, tc.shownTasks, tc.shownAudit)
			}
			if out, _ := json.Marshal(r); strings.Contains(string(out), "s3cret") {
				t.Errorf("the redacted configuration shows the password: %s", out)
			}
			if tc.wantUnchanged && (c.Builtins.TasksDB != tc.tasks || c.Audit.DB != tc.audit) {
				t.Errorf("Redacted changed the configuration it copied: %q, %q", c.Builtins.TasksDB, c.Audit.DB)
			}
		})
	}
}
