// Package postgres opens the project's Postgres databases (the task
// store, the audit log) alike: through pgx's database/sql driver, named
// by a postgres:// or postgresql:// URL whose password never reaches a
// message, with versioned migrations that replicas starting together
// apply once.
//
// database/sql rather than pgx's own interface, because the same store
// code runs on SQLite through modernc.org/sqlite: one transaction
// helper, one scanner, with the differences of SQL kept in each store's
// dialect.
package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// IsURL reports whether s names a Postgres database rather than a file:
// a postgres:// or postgresql:// URL, scheme in any case.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// Redact returns s with a URL's password, and a password given as a
// query parameter, hidden: what logs and messages show of a database.
func Redact(s string) string { return redact.String(s) }

// Error hides the secrets in an error's text, keeping the error for
// errors.Is and errors.As.
type Error struct{ Err error }

func (e *Error) Error() string { return redact.String(e.Err.Error()) }
func (e *Error) Unwrap() error { return e.Err }

// PingTimeout bounds how long Open waits for the server to answer.
const PingTimeout = 10 * time.Second

// Open connects to the database at url and checks that it answers
// within PingTimeout (or ctx's deadline, if sooner). An unreachable
// server is an error naming it, its password hidden.
func Open(ctx context.Context, url string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, &Error{fmt.Errorf("%s: %w (want postgres://user:password@host:port/database)", url, err)}
	}
	db := stdlib.OpenDB(*cfg)
	ctx, cancel := context.WithTimeout(ctx, PingTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, &Error{fmt.Errorf("%s: %w", url, err)}
	}
	return db, nil
}

// LockKey is the key of the transaction-scoped advisory lock named
// name: the same name locks the same thing in every process.
func LockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// Lock takes the advisory lock named name for the rest of tx, waiting
// for any other transaction, of this process or another, that holds it.
func Lock(ctx context.Context, tx *sql.Tx, name string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, LockKey(name))
	return err
}

// Migrate brings a schema up to date: migrations[i] brings it to version
// i+1, and table records the versions applied. Each migration runs in
// its own transaction under the advisory lock named table, with the
// version read again inside it, so replicas that start together apply
// each migration once. A schema newer than the migrations is refused:
// writing to it could break what only the newer code knows. what names
// the schema in errors ("taskstore").
func Migrate(ctx context.Context, db *sql.DB, table, what string, migrations []string) error {
	ident := pgx.Identifier{table}.Sanitize()
	in := func(fn func(*sql.Tx) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if err := Lock(ctx, tx, table); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		return tx.Commit()
	}
	version := func(q interface {
		QueryRowContext(context.Context, string, ...any) *sql.Row
	}) (int, error) {
		var v int
		err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM `+ident).Scan(&v)
		return v, err
	}
	err := in(func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+ident+` (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`)
		return err
	})
	if err != nil {
		return &Error{fmt.Errorf("%s: creating %s: %w", what, table, err)}
	}
	v, err := version(db)
	if err != nil {
		return &Error{fmt.Errorf("%s: reading the schema version: %w", what, err)}
	}
	if v > len(migrations) {
		return fmt.Errorf("%s: the database has schema version %d, newer than this mcpgate supports (%d); use a newer mcpgate", what, v, len(migrations))
	}
	for i, m := range migrations {
		want := i + 1
		err := in(func(tx *sql.Tx) error {
			current, err := version(tx)
			if err != nil || current >= want {
				return err
			}
			if _, err := tx.ExecContext(ctx, m); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO `+ident+` (version) VALUES ($1)`, want)
			return err
		})
		if err != nil {
			return &Error{fmt.Errorf("%s: migrating to schema version %d: %w", what, want, err)}
		}
	}
	return nil
}
