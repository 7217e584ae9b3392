package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/testservice"
)

const waitFor = 20 * time.Second // a bound on a hang

func TestIsURL(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"postgres://u@h/db", true},
		{"postgresql://u@h/db", true},
		{"POSTGRES://u@h/db", true},
		{"/var/lib/mcpgate/tasks.db", false},
		{"tasks.db", false},
		{"postgres.db", false},
		{"file:postgres://x", false},
		{"mysql://u@h/db", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsURL(tt.in); got != tt.want {
			t.Errorf("IsURL(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// An unreachable server or a malformed URL is an error naming the
// database, never one that shows its password.
func TestOpenErrorsHideThePassword(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close() // nothing listens there now
	tests := []struct {
		name, url, want string
	}{
		{"unreachable", "postgres://ann:hunter2secret@" + closed + "/db?sslmode=disable", "ann:[redacted]@" + closed},
		{"password as a parameter", "postgres://ann@" + closed + "/db?sslmode=disable&password=hunter2secret", "password=[redacted]"},
		{"malformed", "postgres://ann:hunter2secret@host:notaport/db", "want postgres://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			defer cancel()
			db, err := Open(ctx, tt.url)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			if msg := err.Error(); strings.Contains(msg, "hunter2secret") || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q: want it to say %q and not the password", msg, tt.want)
			}
		})
	}
}

func TestMigrateAppliesEachMigrationOnceUnderConcurrentStarts(t *testing.T) {
	pg := testservice.Postgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	migrations := []string{
		`CREATE TABLE things (id integer PRIMARY KEY); CREATE INDEX things_id ON things (id)`,
		`CREATE TABLE applied (n integer)`,
		`INSERT INTO applied VALUES (3)`,
	}
	const starts = 6
	var wg sync.WaitGroup
	errs := make(chan error, starts)
	for range starts {
		wg.Go(func() {
			db, err := Open(ctx, pg.URL())
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- Migrate(ctx, db, "thing_migrations", "things", migrations)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	db, err := Open(ctx, pg.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var applied, versions int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM applied`).Scan(&applied); err != nil || applied != 1 {
		t.Errorf("migration 3 ran %d times (%v), want once", applied, err)
	}
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM thing_migrations`).Scan(&versions); err != nil || versions != 3 {
		t.Errorf("%d versions recorded (%v), want 3", versions, err)
	}

	// A schema from a newer mcpgate is refused, not written to blindly.
	if _, err := db.ExecContext(ctx, `INSERT INTO thing_migrations (version) VALUES (99)`); err != nil {
		t.Fatal(err)
	}
	err = Migrate(ctx, db, "thing_migrations", "things", migrations)
	if err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("Migrate on a newer schema: %v", err)
	}
}

func TestErrorKeepsTheErrorForIs(t *testing.T) {
	err := &Error{fmt.Errorf("postgres://a:b@h/d: %w", context.DeadlineExceeded)}
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), ":b@") {
		t.Errorf("%v: want it to wrap DeadlineExceeded without the password", err)
	}
}
