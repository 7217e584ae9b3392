package gateway

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/internal/sqlitefile"
)

// Audit is the log of tool calls kept in SQLite: who called which tool of
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

// AuditRecord is one tool call.
type AuditRecord struct {
	Time      time.Time
	Principal string
	Tool      string
	Upstream  string
	Outcome   string // ok, tool_error, error
	Code      int64  // the JSON-RPC error code, for errors
	Duration  time.Duration
	Arguments string // sanitized JSON
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
	a := &Audit{db: db, path: abs, retention: retention, logger: logger, queue: make(chan AuditRecord, 4096), done: make(chan struct{})}
	a.purge()
	go a.run()
	return a, nil
}

// Record queues a record.
func (a *Audit) Record(r AuditRecord) {
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
	stmt, err := tx.Prepare(`INSERT INTO tool_calls (at_ms, principal, tool, upstream, outcome, code, duration_us, arguments) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err == nil {
		for _, r := range batch {
			if _, err = stmt.Exec(r.Time.UnixMilli(), r.Principal, r.Tool, r.Upstream, r.Outcome, r.Code, r.Duration.Microseconds(), r.Arguments); err != nil {
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
	rows, err := a.db.QueryContext(ctx, `SELECT at_ms, principal, tool, upstream, outcome, code, duration_us, arguments FROM tool_calls WHERE at_ms >= ? ORDER BY at_ms DESC, id DESC LIMIT ?`,
		time.Now().Add(-since).UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var r AuditRecord
		var at, dur int64
		if err := rows.Scan(&at, &r.Principal, &r.Tool, &r.Upstream, &r.Outcome, &r.Code, &dur, &r.Arguments); err != nil {
			return nil, err
		}
		r.Time, r.Duration = time.UnixMilli(at), time.Duration(dur)*time.Microsecond
		out = append(out, r)
	}
	return out, rows.Err()
}
