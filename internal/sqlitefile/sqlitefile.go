// Package sqlitefile opens the project's SQLite files (the task store,
// the audit log, the embedding cache) alike: private, in WAL mode, and
// waiting on another writer rather than failing, through the pure-Go
// modernc.org/sqlite driver.
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// BusyTimeout is how long a statement waits for another connection's or
// process's write transaction before failing with "database is locked".
const BusyTimeout = 10 * time.Second

// Open opens (creating) the database at path and returns it with the
// file's absolute path. The file is created here, mode 0600 in a
// directory made 0700, rather than by SQLite, so that it is private
// (SQLite gives the -wal and -shm files the database file's mode). extra
// are more query parameters of the DSN (more "_pragma"s, "_txlock"). The
// pragmas run on every new connection, as each needs its own; Open makes
// the first, so a file that is not a database is found out here.
func Open(path string, extra url.Values) (db *sql.DB, abs string, err error) {
	if path == "" {
		return nil, "", fmt.Errorf("the database path is empty")
	}
	if abs, err = filepath.Abs(path); err != nil {
		return nil, "", err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, "", err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, "", err
	}
	f.Close()
	db, err = sql.Open("sqlite", DSN(abs, extra))
	if err != nil {
		return nil, "", err
	}
	if err := firstConnection(db); err != nil {
		db.Close()
		return nil, "", err
	}
	return db, abs, nil
}

// firstConnection opens db's first connection, which turns a new file
// to WAL mode. Processes (or stores) opening one new file at once race
// to convert it, and SQLite fails the losers with SQLITE_BUSY without
// consulting the busy handler (journal_mode takes its lock as an
// upgrade, which SQLite refuses rather than risk a deadlock). So a busy
// first connection is tried again, for as long as a statement would
// wait on a busy database; once the file is in WAL mode (it stays so)
// the pragma takes no lock.
func firstConnection(db *sql.DB) error {
	ctx, cancel := context.WithTimeout(context.Background(), BusyTimeout)
	defer cancel()
	wait := 5 * time.Millisecond
	for {
		err := db.PingContext(ctx)
		if !isBusy(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return err
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY (any extended code).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// DSN builds a file: URI, so that characters such as '?' and '#' in the
// path are escaped rather than taken for the query.
func DSN(abs string, extra url.Values) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter: file:///C:/...
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	for k, vs := range extra {
		for _, v := range vs {
			q.Add(k, v)
		}
	}
	return (&url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}).String()
}
