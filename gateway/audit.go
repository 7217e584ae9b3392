package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/internal/sqlitefile"
)

// Audit is the log kept in SQLite of every request that reaches an
// upstream (tool calls, prompts, resource reads, completions,
// subscriptions) and of the gateway's security events: who asked what of
// which upstream, when, how long it took and how it ended, with the
// arguments sanitized as in the request log. Records older than the
// retention are deleted. Writes are batched off the request path; when
// the queue is full a record is dropped and counted, never a call held.
type Audit struct {
	db        *sql.DB
	path      string
	retention time.Duration
	logger    *slog.Logger
	queue     chan AuditRecord
	done      chan struct{}
	closeOnce sync.Once

	mu      sync.Mutex
	dropped int
}

// AuditRecord is one request, or one security event.
type AuditRecord struct {
	Time      time.Time
	Principal string // the caller ("apikey:alice"), "" for the local user
	Tenant    string // the tenant it acted for
	Method    string // the request's method, or an event's name
	Tool      string // what the request named: a tool or prompt name, a URI
	Upstream  string
	Outcome   string // ok, tool_error, error, input_required; or an event's verdict
	Code      int64  // the JSON-RPC error code, for errors
	Duration  time.Duration
	Arguments string // sanitized JSON
	Detail    string // what an event found (a definition's diff, a refusal's reason)
}

// OpenAudit opens (creating) the audit database at path. A zero
// retention keeps 30 days.
func OpenAudit(path string, retention time.Duration, logger *slog.Logger) (*Audit, error) {
	if retention <= 0 {
		retention = 30 * 24 * time.Hour
	}
	if logger == nil {
		logger = slog.Default()
	}
	db, abs, err := sqlitefile.Open(path, nil) // private: it names callers
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS tool_calls (
		id INTEGER PRIMARY KEY,
		at_ms INTEGER NOT NULL,
		principal TEXT NOT NULL,
		tool TEXT NOT NULL,
		upstream TEXT NOT NULL,
		outcome TEXT NOT NULL,
		code INTEGER NOT NULL DEFAULT 0,
		duration_us INTEGER NOT NULL,
		arguments TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX IF NOT EXISTS tool_calls_at ON tool_calls(at_ms);
	CREATE INDEX IF NOT EXISTS tool_calls_principal ON tool_calls(principal, at_ms)`); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit database %s: %w", path, err)
	}
	if err := migrateAudit(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("audit database %s: %w", path, err)
	}
	a := &Audit{db: db, path: abs, retention: retention, logger: logger, queue: make(chan AuditRecord, 4096), done: make(chan struct{})}
	a.purge()
	go a.run()
	return a, nil
}

// auditColumns are the columns added since the first version of the
// table (which logged tool calls only), with their defaults for old rows.
var auditColumns = []struct{ name, decl string }{
	{"method", "TEXT NOT NULL DEFAULT 'tools/call'"},
	{"tenant", "TEXT NOT NULL DEFAULT ''"},
	{"detail", "TEXT NOT NULL DEFAULT ''"},
}

// migrateAudit adds the columns an older database lacks.
func migrateAudit(db *sql.DB) error {
	rows, err := db.Query(`SELECT name FROM pragma_table_info('tool_calls')`)
	if err != nil {
		return err
	}
	have := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		have[n] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range auditColumns {
		if !have[c.name] {
			if _, err := db.Exec(`ALTER TABLE tool_calls ADD COLUMN ` + c.name + ` ` + c.decl); err != nil {
				return err
			}
		}
	}
	return nil
}

// Record queues a record. What it names and says is redacted first: a
// resource URI may carry a password, an error or a diff a token.
func (a *Audit) Record(r AuditRecord) {
	r.Tool, r.Detail = redact.String(r.Tool), redact.String(r.Detail)
	select {
	case a.queue <- r:
	default:
		a.mu.Lock()
		a.dropped++
		a.mu.Unlock()
	}
}

// Close writes what is queued and closes the database.
func (a *Audit) Close() error {
	a.closeOnce.Do(func() { close(a.queue) })
	<-a.done
	return a.db.Close()
}

func (a *Audit) run() {
	defer close(a.done)
	purge := time.NewTicker(time.Hour)
	defer purge.Stop()
	batch := make([]AuditRecord, 0, 256)
	for {
		select {
		case r, ok := <-a.queue:
			if !ok {
				a.write(batch)
				return
			}
			batch = append(batch, r)
			// Take what else is waiting, up to a batch, in one transaction.
			for len(batch) < cap(batch) {
				select {
				case r, ok := <-a.queue:
					if !ok {
						a.write(batch)
						return
					}
					batch = append(batch, r)
					continue
				default:
				}
				break
			}
			a.write(batch)
			batch = batch[:0]
		case <-purge.C:
			a.purge()
		}
	}
}

func (a *Audit) write(batch []AuditRecord) {
	if len(batch) == 0 {
		return
	}
	tx, err := a.db.Begin()
	if err != nil {
		a.logger.Error("gateway: audit log write failed", "error", err, "records", len(batch))
		return
	}
	stmt, err := tx.Prepare(`INSERT INTO tool_calls (at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err == nil {
		for _, r := range batch {
			method := r.Method
			if method == "" {
				method = "tools/call"
			}
			if _, err = stmt.Exec(r.Time.UnixMilli(), r.Principal, r.Tenant, method, r.Tool, r.Upstream, r.Outcome, r.Code, r.Duration.Microseconds(), r.Arguments, r.Detail); err != nil {
				break
			}
		}
		stmt.Close()
	}
	if err != nil {
		tx.Rollback()
		a.logger.Error("gateway: audit log write failed", "error", err, "records", len(batch))
		return
	}
	if err := tx.Commit(); err != nil {
		a.logger.Error("gateway: audit log write failed", "error", err, "records", len(batch))
	}
	a.mu.Lock()
	if a.dropped > 0 {
		a.logger.Warn("gateway: audit records dropped: the writer could not keep up", "dropped", a.dropped)
		a.dropped = 0
	}
	a.mu.Unlock()
}

// purge deletes the records past the retention.
func (a *Audit) purge() {
	cut := time.Now().Add(-a.retention).UnixMilli()
	if _, err := a.db.Exec(`DELETE FROM tool_calls WHERE at_ms < ?`, cut); err != nil {
		a.logger.Error("gateway: audit log purge failed", "error", err)
	}
}

// Query returns the records of the last since, newest first, at most
// limit: for tests and tools that read the log.
func (a *Audit) Query(ctx context.Context, since time.Duration, limit int) ([]AuditRecord, error) {
	rows, err := a.db.QueryContext(ctx, `SELECT at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail FROM tool_calls WHERE at_ms >= ? ORDER BY at_ms DESC, id DESC LIMIT ?`,
		time.Now().Add(-since).UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var r AuditRecord
		var at, dur int64
		if err := rows.Scan(&at, &r.Principal, &r.Tenant, &r.Method, &r.Tool, &r.Upstream, &r.Outcome, &r.Code, &dur, &r.Arguments, &r.Detail); err != nil {
			return nil, err
		}
		r.Time, r.Duration = time.UnixMilli(at), time.Duration(dur)*time.Microsecond
		out = append(out, r)
	}
	return out, rows.Err()
}
