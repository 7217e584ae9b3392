package gateway

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/testservice"
)

// auditBackend is a database the audit log runs on: fresh returns what
// OpenAudit takes for a new, empty one.
type auditBackend struct {
	name  string
	fresh func(t *testing.T) string
}

// TestAuditOnEachBackend runs the audit log's tests on a SQLite file
// each, and on a database each in one Postgres (internal/testservice).
func TestAuditOnEachBackend(t *testing.T) {
	tests := []struct {
		name string
		test func(*testing.T, auditBackend)
	}{
		{"RowsOfTwoGatewaysInOneDatabaseAreAllThere", testAuditRowsOfTwoGatewaysAreAllThere},
		{"RowsOfTwoWritersAtOnceAreAllThere", testAuditRowsOfTwoWritersAreAllThere},
		{"HostileTextIsKeptNotItsBatchLost", testAuditHostileTextIsKept},
	}
	run := func(t *testing.T, b auditBackend) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) { tt.test(t, b) })
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		run(t, auditBackend{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "audit.db") }})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testservice.Postgres(t)
		var n atomic.Int64
		run(t, auditBackend{"postgres", func(t *testing.T) string {
			return pg.CreateDatabase(fmt.Sprintf("audit%d", n.Add(1)))
		}})
	})
}

func openAuditT(t *testing.T, path string) *Audit {
	t.Helper()
	a, err := OpenAudit(path, 0, slogDiscard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// records reads back every record of the last hour, through an Audit of
// its own: what another replica would see.
func records(t *testing.T, path string) []AuditRecord {
	t.Helper()
	a := openAuditT(t, path)
	recs, err := a.Query(context.Background(), time.Hour, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Two gateway replicas write their tool calls to one audit database;
// every call of each is there.
func testAuditRowsOfTwoGatewaysAreAllThere(t *testing.T, b auditBackend) {
	path := b.fresh(t)
	cfg := &config.Config{Servers: catalogServers(t)}
	cfg.ApplyDefaults()
	const calls = 10
	tools := []string{"calendar_find_free_time", "files_read_file"}
	args := []map[string]any{{"attendees": []string{"a@example.com"}, "duration": 30}, {"path": "/tmp/x"}}
	audits := make([]*Audit, len(tools))
	var wg sync.WaitGroup
	for i := range tools {
		audits[i] = openAuditT(t, path)
		g := runConfigured(t, cfg, &Options{Logger: slogDiscard, Audit: audits[i]})
		waitState(t, g, StateReady, StateIdle)
		cs := connectTo(t, g.Server(), nil)
		wg.Go(func() {
			for range calls {
				if _, err := cs.CallTool(context.Background(), tools[i], args[i]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, a := range audits {
		a.Close() // writes what is queued
	}
	count := map[string]int{}
	for _, r := range records(t, path) {
		if r.Method == "tools/call" {
			count[r.Tool]++
		}
	}
	for _, tool := range tools {
		if count[tool] != calls {
			t.Errorf("%d calls of %s in the audit log, want %d (all: %v)", count[tool], tool, calls, count)
		}
	}
}

// Two writers recording at once, each in batches of its own, lose no
// row and write none twice.
func testAuditRowsOfTwoWritersAreAllThere(t *testing.T, b auditBackend) {
	path := b.fresh(t)
	const each = 1000
	var wg sync.WaitGroup
	for w := range 2 {
		a := openAuditT(t, path)
		wg.Go(func() {
			for i := range each {
				a.Record(AuditRecord{Time: time.Now(), Principal: fmt.Sprintf("writer%d", w), Tool: fmt.Sprintf("t%d", i), Upstream: "u", Outcome: "ok"})
			}
			a.Close()
		})
	}
	wg.Wait()
	seen := map[string]int{}
	for _, r := range records(t, path) {
		seen[r.Principal+"/"+r.Tool]++
	}
	if len(seen) != 2*each {
		t.Errorf("%d distinct records, want %d", len(seen), 2*each)
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s written %d times", k, n)
		}
	}
}

// A record whose text the database cannot hold as it is (Postgres
// refuses NUL and invalid UTF-8) is kept with those characters replaced,
// and the records batched with it are kept too.
func testAuditHostileTextIsKept(t *testing.T, b auditBackend) {
	path := b.fresh(t)
	a := openAuditT(t, path)
	a.Record(AuditRecord{Time: time.Now(), Principal: "before", Tool: "t", Outcome: "ok"})
	a.Record(AuditRecord{Time: time.Now(), Principal: "p\x00", Tool: "nul\x00tool", Arguments: `{"a":"\xff"}`, Outcome: "ok", Detail: "\x00"})
	a.Record(AuditRecord{Time: time.Now(), Principal: "after", Tool: "t", Outcome: "ok"})
	a.Close()
	recs := records(t, path)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	var hostile AuditRecord
	for _, r := range recs {
		if strings.HasPrefix(r.Tool, "nul") {
			hostile = r
		}
	}
	want := map[string]string{"sqlite": "nul\x00tool", "postgres": "nul\uFFFDtool"}[b.name]
	if hostile.Tool != want {
		t.Errorf("the hostile record's tool is %q, want %q", hostile.Tool, want)
	}
}

// A Postgres audit database that does not answer is an error naming it,
// without its password.
func TestOpenAuditErrorHidesThePostgresPassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing answers there now
	const secret = "hunter2-not-for-logs"
	_, err = OpenAudit("postgres://audit:"+secret+"@"+addr+"/audit?sslmode=disable", 0, slogDiscard)
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), addr) {
		t.Errorf("OpenAudit: %v; want an error naming the database without its password", err)
	}
}
