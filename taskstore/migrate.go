package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are the schema's history: migration i brings the schema to
// version i+1. Append only; never edit one that has shipped, because
// databases that applied it will not run it again.
var migrations = []string{
	// 1: the tasks table. The CHECKs repeat the Go validation so that no
	// other writer of the file (an older mcpgate, the sqlite3 shell) can
	// store a task the tools cannot read back. The index serves List's
	// newest-first order and its keyset cursor.
	`CREATE TABLE tasks (
		id           TEXT PRIMARY KEY,
		title        TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
		description  TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 20000),
		status       TEXT NOT NULL DEFAULT 'pending'
		             CHECK (status IN ('pending', 'in_progress', 'done', 'cancelled')),
		priority     TEXT NOT NULL DEFAULT 'medium'
		             CHECK (priority IN ('low', 'medium', 'high')),
		tags         TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(tags) AND json_type(tags) = 'array'),
		created_at   TEXT NOT NULL,
		updated_at   TEXT NOT NULL,
		completed_at TEXT,
		CHECK ((status = 'done') = (completed_at IS NOT NULL))
	) STRICT;
	CREATE INDEX tasks_newest ON tasks (created_at DESC, id DESC);`,
}

// migrate applies the migrations the database lacks, each in its own
// write transaction. The version is checked again inside the transaction
// because another process may be migrating the same file at the same time.
func (s *Store) migrate(ctx context.Context) error {
	err := s.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			applied_at TEXT NOT NULL
		)`)
		return err
	})
	if err != nil {
		return fmt.Errorf("taskstore: creating schema_migrations: %w", err)
	}
	if err := s.checkVersion(ctx); err != nil {
		return err
	}
	for i, m := range migrations {
		version := i + 1
		err := s.write(ctx, func(tx *sql.Tx) error {
			current, err := schemaVersion(ctx, tx)
			if err != nil || current >= version {
				return err
			}
			if _, err := tx.ExecContext(ctx, m); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
				version, formatTime(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("taskstore: migrating to schema version %d: %w", version, err)
		}
	}
	return nil
}

// checkVersion refuses a schema newer than this code: writing to it could
// break invariants that only the newer code knows about.
func (s *Store) checkVersion(ctx context.Context) error {
	v, err := schemaVersion(ctx, s.db)
	if err != nil {
		return fmt.Errorf("taskstore: reading the schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("taskstore: the database has schema version %d, newer than this mcpgate supports (%d); use a newer mcpgate", v, len(migrations))
	}
	return nil
}

func schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
