package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/internal/redact"
	"github.com/mcpgate/mcpgate/internal/sqlitefile"
)

// Audit is the log kept in SQLite, or in Postgres, of every request that
// reaches an upstream (tool calls, prompts, resource reads, completions,
// subscriptions) and of the gateway's security events: who asked what of
// which upstream, when, how long it took and how it ended, with the
// arguments sanitized as in the request log. Records older than the
// retention are deleted. Writes are batched off the request path; when
// the queue is full a record is dropped and counted, never a call held.
// Several gateways may write to one Postgres database: each batch is a
// transaction of inserts, which never conflict.
type Audit struct {
	db        *sql.DB
	path      string // for messages: a Postgres URL's password is hidden
	sql       *auditSQL
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

// OpenAudit opens (creating) the audit database at path, a SQLite file,
// or the Postgres database of a postgres:// or postgresql:// URL. A zero
// retention keeps 30 days.
func OpenAudit(path string, retention time.Duration, logger *slog.Logger) (*Audit, error) {
	if retention <= 0 {
		retention = 30 * 24 * time.Hour
	}
	if logger == nil {
		logger = slog.Default()
	}
	var (
		db  *sql.DB
		q   *auditSQL
		err error
	)
	if postgres.IsURL(path) {
		db, err = openAuditPostgres(path)
		q, path = auditPostgres, postgres.Redact(path)
	} else {
		db, path, err = openAuditSQLite(path)
		q = auditSQLite
	}
	if err != nil {
		return nil, err
	}
	a := &Audit{db: db, path: path, sql: q, retention: retention, logger: logger, queue: make(chan AuditRecord, 4096), done: make(chan struct{})}
	a.purge()
	go a.run()
	return a, nil
}

// auditSQL are the statements that differ between the databases.
type auditSQL struct {
	insert, purge, query string
	// text makes a string storable: Postgres's text refuses NUL and
	// invalid UTF-8, and one such record must not lose its batch.
	text func(string) string
}

var auditSQLite = &auditSQL{
	insert: `INSERT INTO tool_calls (at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	purge:  `DELETE FROM tool_calls WHERE at_ms < ?`,
	query:  `SELECT at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail FROM tool_calls WHERE at_ms >= ? ORDER BY at_ms DESC, id DESC LIMIT ?`,
	text:   func(s string) string { return s },
}

var auditPostgres = &auditSQL{
	insert: `INSERT INTO tool_calls (at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
	purge:  `DELETE FROM tool_calls WHERE at_ms < $1`,
	query:  `SELECT at_ms, principal, tenant, method, tool, upstream, outcome, code, duration_us, arguments, detail FROM tool_calls WHERE at_ms >= $1 ORDER BY at_ms DESC, id DESC LIMIT $2`,
	text: func(s string) string {
		return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", "\uFFFD"), "\uFFFD")
	},
}

// auditPostgresMigrations are the audit log's schema in Postgres:
// migration i brings it to version i+1. Append only. The table is
// SQLite's, with its columns of today, so that one Query reads both.
var auditPostgresMigrations = []string{
	`CREATE TABLE tool_calls (
		id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		at_ms       bigint NOT NULL,
		principal   text NOT NULL,
		tenant      text NOT NULL DEFAULT '',
		method      text NOT NULL DEFAULT 'tools/call',
		tool        text NOT NULL,
		upstream    text NOT NULL,
		outcome     text NOT NULL,
		code        bigint NOT NULL DEFAULT 0,
		duration_us bigint NOT NULL,
		arguments   text NOT NULL DEFAULT '',
		detail      text NOT NULL DEFAULT ''
	);
	CREATE INDEX tool_calls_at ON tool_calls (at_ms);
	CREATE INDEX tool_calls_principal ON tool_calls (principal, at_ms);`,
}

func openAuditPostgres(url string) (*sql.DB, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*postgres.PingTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("audit database: %w", err)
	}
	db.SetMaxOpenConns(2) // the writer, and a purge or a Query beside it
	if err := postgres.Migrate(ctx, db, "audit_migrations", "audit database", auditPostgresMigrations); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func openAuditSQLite(path string) (*sql.DB, string, error) {
	db, abs, err := sqlitefile.Open(path, nil) // private: it names callers
	if err != nil {
		return nil, "", err
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
		return nil, "", fmt.Errorf("audit database %s: %w", path, err)
	}
	if err := migrateAudit(db); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("audit database %s: %w", path, err)
	}
	return db, abs, nil
}

// auditColumns are the columns added since the first version of the
// table (which logged tool calls only), with their defaults for old rows.
var auditColumns = []struct{ name, decl string }{
	{"method", "TEXT NOT NULL DEFAULT 'tools/call'"},
	{"tenant", "TEXT NOT NULL DEFAULT ''"},
	{"detail", "TEXT NOT NULL DEFAULT ''"},
}

// migrateAudit adds the columns an older SQLite database lacks.
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
	stmt, err := tx.Prepare(a.sql.insert)
	if err == nil {
		for _, r := range batch {
			method := r.Method
			if method == "" {
				method = "tools/call"
			}
			txt := a.sql.text
			if _, err = stmt.Exec(r.Time.UnixMilli(), txt(r.Principal), txt(r.Tenant), txt(method), txt(r.Tool), txt(r.Upstream),
				txt(r.Outcome), r.Code, r.Duration.Microseconds(), txt(r.Arguments), txt(r.Detail)); err != nil {
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
	if _, err := a.db.Exec(a.sql.purge, cut); err != nil {
		a.logger.Error("gateway: audit log purge failed", "error", err)
	}
}

// Query returns the records of the last since, newest first, at most
// limit: for tests and tools that read the log.
func (a *Audit) Query(ctx context.Context, since time.Duration, limit int) ([]AuditRecord, error) {
	rows, err := a.db.QueryContext(ctx, a.sql.query, time.Now().Add(-since).UnixMilli(), limit)
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
