package pins

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/postgres"
)

// dialect is what differs between the databases a Store runs on. The
// statements themselves are written once, with $1, $2 ... for their
// arguments, which both drivers read alike.
//
// Both bump a counter, pins_version, in the same transaction as every
// change of the pins: Version reads it, less the store's own bumps.
// (SQLite's PRAGMA data_version would count every commit to the file,
// and the file holds other tables: what search learns from use is
// written there every few seconds.) SQLite is one file with one writer
// at a time; Postgres writes take an advisory lock, so that two gateways
// pinning the same tools at once take turns, and an approval never
// interleaves with a listing's changes.
type dialect struct {
	// lock runs first in every write transaction (nil: SQLite's writer
	// lock does already).
	lock func(context.Context, *sql.Tx) error
	// bump is the statement that counts a committed change, run in the
	// transaction that made it.
	bump string
	// version reads the count of changes, everyone's.
	version string
	// textOnly: the database's text holds valid UTF-8 without NUL, and
	// refuses anything else with an error that would lose the whole
	// transaction; such text is refused here first.
	textOnly bool
}

var sqliteDialect = &dialect{
	bump:    `UPDATE pins_version SET version = version + 1 WHERE id = 1`,
	version: `SELECT version FROM pins_version WHERE id = 1`,
}

var postgresDialect = &dialect{
	lock: func(ctx context.Context, tx *sql.Tx) error {
		return postgres.Lock(ctx, tx, "mcpgate.pins.write")
	},
	bump:     `UPDATE pins_version SET version = version + 1 WHERE id = 1`,
	version:  `SELECT version FROM pins_version WHERE id = 1`,
	textOnly: true,
}

// sqliteSchema is the pins table in SQLite and the count of its
// changes; a file that has them is left as it is, and a file of an
// earlier version gets the count.
const sqliteSchema = `CREATE TABLE IF NOT EXISTS pins (
	server TEXT NOT NULL,
	tool TEXT NOT NULL,
	hash TEXT NOT NULL DEFAULT '',
	definition TEXT NOT NULL DEFAULT '',
	approved_by TEXT NOT NULL DEFAULT '',
	approved_ms INTEGER NOT NULL DEFAULT 0,
	seen_hash TEXT NOT NULL DEFAULT '',
	seen_definition TEXT NOT NULL DEFAULT '',
	seen_ms INTEGER NOT NULL DEFAULT 0,
	first_ms INTEGER NOT NULL,
	PRIMARY KEY (server, tool)
);
CREATE TABLE IF NOT EXISTS pins_version (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	version INTEGER NOT NULL
);
INSERT OR IGNORE INTO pins_version (id, version) VALUES (1, 0)`

// postgresMigrations are the schema in Postgres: migration i brings it
// to version i+1 (recorded in pins_migrations). Append only. The table
// is SQLite's; its names compare byte by byte (COLLATE "C"), as
// SQLite's do, so that List sorts alike whatever the database's locale.
var postgresMigrations = []string{
	`CREATE TABLE pins (
		server          text COLLATE "C" NOT NULL,
		tool            text COLLATE "C" NOT NULL,
		hash            text NOT NULL DEFAULT '',
		definition      text NOT NULL DEFAULT '',
		approved_by     text NOT NULL DEFAULT '',
		approved_ms     bigint NOT NULL DEFAULT 0,
		seen_hash       text NOT NULL DEFAULT '',
		seen_definition text NOT NULL DEFAULT '',
		seen_ms         bigint NOT NULL DEFAULT 0,
		first_ms        bigint NOT NULL,
		PRIMARY KEY (server, tool)
	);
	CREATE TABLE pins_version (
		id      integer PRIMARY KEY CHECK (id = 1),
		version bigint NOT NULL
	);
	INSERT INTO pins_version (id, version) VALUES (1, 0);`,
}

// openPostgres opens the pins in the Postgres database at url, creating
// or migrating their tables.
func openPostgres(url string) (*Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*postgres.PingTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("state database: %w", err)
	}
	// Version's poll, a listing's read and a write beside each other.
	db.SetMaxOpenConns(4)
	if err := postgres.Migrate(ctx, db, "pins_migrations", "state database", postgresMigrations); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, path: postgres.Redact(url), d: postgresDialect}, nil
}

// storable reports whether the database can hold every one of ss.
func (d *dialect) storable(ss ...string) bool {
	if !d.textOnly {
		return true
	}
	for _, s := range ss {
		if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			return false
		}
	}
	return true
}
