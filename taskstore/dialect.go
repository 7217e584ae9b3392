package taskstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/postgres"
)

// dialect is what differs between the databases a Store runs on. The
// store's SQL is written once, in SQLite's spelling with ? for each
// argument; the few conditions that differ are here, and so are the
// placeholders, timestamps, transactions and migrations.
type dialect struct {
	name string // "sqlite" or "postgres"
	// numbered: the driver wants $1, $2 ... for arguments, not ?.
	numbered bool
	// hasTag is the condition "tasks.tags holds the tag ?", ignoring
	// the case of ASCII letters.
	hasTag string
	// contains is the condition "the title or the description contains
	// the LIKE pattern ?" (the argument given twice, ESCAPE '\'),
	// ignoring the case of ASCII letters.
	contains string
	// readTx is a read transaction's options: one snapshot for all its
	// statements.
	readTx *sql.TxOptions
	// lock runs first in every write transaction: it makes the writers
	// of every process take turns (nil: BEGIN IMMEDIATE does already).
	lock func(context.Context, *sql.Tx) error
	// time is a timestamp as an argument of a query.
	time func(time.Time) any
	// textOnly: the database's text holds valid UTF-8 without NUL
	// characters and refuses anything else with an error, as Postgres
	// does; such text is refused here with a message first.
	textOnly bool
}

var sqliteDialect = &dialect{
	name:     "sqlite",
	hasTag:   `EXISTS (SELECT 1 FROM json_each(tasks.tags) WHERE json_each.value = ? COLLATE NOCASE)`,
	contains: `(title LIKE ? ESCAPE '\' OR description LIKE ? ESCAPE '\')`,
	readTx:   &sql.TxOptions{ReadOnly: true},
	// Text of a fixed width, which sorts in time order: the keyset
	// cursor compares it as text.
	time: func(t time.Time) any { return formatTime(t) },
}

// postgresDialect keeps SQLite's semantics on Postgres. LIKE and NOCASE
// of SQLite ignore the case of ASCII letters only, so comparisons go
// through ascii_lower (migration 1) rather than ILIKE and lower(), which
// fold by the database's locale. Writes take one advisory lock, as
// SQLite's BEGIN IMMEDIATE takes the file's: a Modify never loses a
// concurrent change, and created_at follows the order of commits, which
// List pages by. Reads are REPEATABLE READ, so that List's count and
// page see the same tasks, as in a SQLite transaction.
var postgresDialect = &dialect{
	name:     "postgres",
	numbered: true,
	hasTag:   `EXISTS (SELECT 1 FROM jsonb_array_elements_text(tasks.tags) AS tag WHERE taskstore_ascii_lower(tag) = taskstore_ascii_lower(?))`,
	contains: `(taskstore_ascii_lower(title) LIKE taskstore_ascii_lower(?) ESCAPE '\' OR taskstore_ascii_lower(description) LIKE taskstore_ascii_lower(?) ESCAPE '\')`,
	readTx:   &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead},
	lock: func(ctx context.Context, tx *sql.Tx) error {
		return postgres.Lock(ctx, tx, "mcpgate.taskstore.write")
	},
	time:     func(t time.Time) any { return t.UTC() },
	textOnly: true,
}

// sql returns q with its ? placeholders spelled for the driver. None of
// the store's statements has a ? inside a string literal.
func (d *dialect) sql(q string) string {
	if !d.numbered || !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	n := 0
	for _, part := range strings.SplitAfter(q, "?") {
		if strings.HasSuffix(part, "?") {
			n++
			b.WriteString(part[:len(part)-1])
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteString(part)
	}
	return b.String()
}

// checkText refuses text the database cannot hold; what names it in the
// message.
func (d *dialect) checkText(what, s string) error {
	if !d.textOnly {
		return nil
	}
	if !utf8.ValidString(s) {
		return invalidf("%s must be valid UTF-8 text", what)
	}
	if strings.IndexByte(s, 0) >= 0 {
		return invalidf("%s must not contain the NUL character (U+0000)", what)
	}
	return nil
}

// storable refuses a task whose text the database cannot hold.
func (d *dialect) storable(t *Task) error {
	if err := d.checkText("title", t.Title); err != nil {
		return err
	}
	if err := d.checkText("description", t.Description); err != nil {
		return err
	}
	for i, tag := range t.Tags {
		if err := d.checkText(fmt.Sprintf("tags[%d]", i), tag); err != nil {
			return err
		}
	}
	return nil
}

// nullTime is t as an argument, or NULL for the zero time.
func (d *dialect) nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return d.time(t)
}

// timeValue reads a timestamp as either database returns it: SQLite's
// text, or Postgres's timestamptz. NULL is the zero time.
func timeValue(v any) (time.Time, error) {
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return v.UTC(), nil
	case string:
		return parseTime(v)
	case []byte:
		return parseTime(string(v))
	}
	return time.Time{}, fmt.Errorf("a timestamp stored as %T", v)
}
