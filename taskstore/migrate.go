package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// sqliteMigrations are the schema's history in SQLite, and
// postgresMigrations in Postgres: migration i brings the schema to
// version i+1. Append only; never edit one that has shipped, because
// databases that applied it will not run it again. A change to the
// schema is a migration in both, with the same version.
var sqliteMigrations = []string{
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

var postgresMigrations = []string{
	// 1: the tasks table, as in SQLite, with Postgres's types: jsonb
	// tags, timestamptz times, and ids compared byte by byte (COLLATE
	// "C", SQLite's BINARY) whatever the database's locale. lower() and
	// ILIKE fold case by the locale, SQLite's NOCASE and LIKE fold ASCII
	// only: taskstore_ascii_lower keeps the filters alike.
	`CREATE TABLE tasks (
		id           text COLLATE "C" PRIMARY KEY,
		title        text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 500),
		description  text NOT NULL DEFAULT '' CHECK (char_length(description) <= 20000),
		status       text NOT NULL DEFAULT 'pending'
		             CHECK (status IN ('pending', 'in_progress', 'done', 'cancelled')),
		priority     text NOT NULL DEFAULT 'medium'
		             CHECK (priority IN ('low', 'medium', 'high')),
		tags         jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(tags) = 'array'),
		created_at   timestamptz NOT NULL,
		updated_at   timestamptz NOT NULL,
		completed_at timestamptz,
		CHECK ((status = 'done') = (completed_at IS NOT NULL))
	);
	CREATE INDEX tasks_newest ON tasks (created_at DESC, id DESC);
	CREATE FUNCTION taskstore_ascii_lower(s text) RETURNS text
		LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
		AS $$ SELECT translate(s, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz') $$;`,
}

// migrate applies the SQLite migrations the database lacks, each in its
// own write transaction (Postgres has [postgres.Migrate]). The version is checked again inside the transaction
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
	for i, m := range sqliteMigrations {
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
	if v > len(sqliteMigrations) {
		return fmt.Errorf("taskstore: the database has schema version %d, newer than this mcpgate supports (%d); use a newer mcpgate", v, len(sqliteMigrations))
	}
	return nil
}

func schemaVersion(ctx context.Context, q queryer) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
