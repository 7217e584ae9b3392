package taskstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/mcpgate/mcpgate/internal/postgres"
	"github.com/mcpgate/mcpgate/internal/sqlitefile"
)

// Store is a task database. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string // for messages: a Postgres URL's password is hidden
	d    *dialect
	// writer admits one write transaction of this process at a time.
	// SQLite allows one writer anyway, and its busy handler waits by
	// sleeping and polling; queueing here instead keeps writers of one
	// process in order and leaves busy_timeout to arbitrate between
	// processes.
	writer chan struct{}
}

// Open opens the task database at path, creating the file and its parent
// directories (mode 0700) as needed, and brings its schema up to date.
// A postgres:// or postgresql:// URL in place of the path opens the
// tasks in that Postgres database instead, creating its tables as
// needed; several mcpgate processes may share it as they may share a
// file.
func Open(path string) (*Store, error) {
	if postgres.IsURL(path) {
		return openPostgres(path)
	}
	// Every transaction that is not read-only takes the write lock at
	// BEGIN (_txlock=immediate): a deferred one that upgrades later can
	// fail with SQLITE_BUSY without the busy handler ever being
	// consulted. foreign_keys is per connection, like busy_timeout.
	db, abs, err := sqlitefile.Open(path, url.Values{"_pragma": {"foreign_keys(1)"}, "_txlock": {"immediate"}})
	if err != nil {
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	// Readers do not block one another in WAL mode; a few connections
	// serve concurrent tool calls without opening one per call.
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{db: db, path: abs, d: sqliteDialect, writer: make(chan struct{}, 1)}
	ctx, cancel := context.WithTimeout(context.Background(), 2*sqlitefile.BusyTimeout)
	defer cancel()
	// A connection runs the DSN's pragmas as it opens, so this is where a
	// file that is not a database is found out.
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openPostgres is Open for a Postgres URL.
func openPostgres(url string) (*Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*sqlitefile.BusyTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	if err := postgres.Migrate(ctx, db, "taskstore_migrations", "taskstore", postgresMigrations); err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, path: postgres.Redact(url), d: postgresDialect, writer: make(chan struct{}, 1)}, nil
}

// Path returns the absolute path of the database file, or the URL of a
// Postgres database with its password hidden.
func (s *Store) Path() string { return s.path }

// Close closes the database. Calls in progress may fail.
func (s *Store) Close() error { return s.db.Close() }

// write runs fn in a write transaction and commits it if fn succeeds;
// fn's error is returned as is.
func (s *Store) write(ctx context.Context, fn func(*sql.Tx) error) error {
	select {
	case s.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writer }()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("taskstore: begin: %w", err)
	}
	defer tx.Rollback()
	if s.d.lock != nil {
		if err := s.d.lock(ctx, tx); err != nil {
			return fmt.Errorf("taskstore: lock: %w", err)
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("taskstore: commit: %w", err)
	}
	return nil
}

// NewTask is what Create needs to make a task. Zero Status and Priority
// mean pending and medium.
type NewTask struct {
	Title       string
	Description string
	Status      Status
	Priority    Priority
	Tags        []string
}

// Create stores a new task and returns it.
func (s *Store) Create(ctx context.Context, n NewTask) (Task, error) {
	t := Task{
		ID:          newID(),
		Title:       n.Title,
		Description: n.Description,
		Status:      cmp.Or(n.Status, StatusPending),
		Priority:    cmp.Or(n.Priority, PriorityMedium),
		Tags:        n.Tags,
	}
	if err := normalize(&t); err != nil {
		return Task{}, err
	}
	if err := s.d.storable(&t); err != nil {
		return Task{}, err
	}
	err := s.write(ctx, func(tx *sql.Tx) error {
		// Stamped under the write lock, so created_at follows the order
		// in which tasks are stored, the order List pages by.
		t.CreatedAt = now()
		t.UpdatedAt = t.CreatedAt
		if t.Status == StatusDone {
			t.CompletedAt = t.CreatedAt
		}
		_, err := tx.ExecContext(ctx, s.d.sql(`INSERT INTO tasks (id, title, description, status, priority, tags, created_at, updated_at, completed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.ID, t.Title, t.Description, t.Status, t.Priority, tagsJSON(t.Tags),
			s.d.time(t.CreatedAt), s.d.time(t.UpdatedAt), s.d.nullTime(t.CompletedAt))
		if err != nil {
			return fmt.Errorf("taskstore: insert: %w", err)
		}
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	return t, nil
}

// Get returns the task with the given id.
func (s *Store) Get(ctx context.Context, id string) (Task, error) {
	return getTask(ctx, s.d, s.db, id)
}

// Patch lists the fields Update changes; nil fields are left alone, so an
// empty string or an empty tag list clears a field.
type Patch struct {
	Title       *string
	Description *string
	Status      *Status
	Priority    *Priority
	Tags        *[]string // replaces the whole list
}

func (p Patch) empty() bool {
	return p.Title == nil && p.Description == nil && p.Status == nil && p.Priority == nil && p.Tags == nil
}

func (p Patch) apply(t *Task) error {
	if p.Title != nil {
		t.Title = *p.Title
	}
	if p.Description != nil {
		t.Description = *p.Description
	}
	if p.Status != nil {
		t.Status = *p.Status
	}
	if p.Priority != nil {
		t.Priority = *p.Priority
	}
	if p.Tags != nil {
		t.Tags = slices.Clone(*p.Tags)
	}
	return nil
}

// Update changes the fields p sets and returns the task as stored.
func (s *Store) Update(ctx context.Context, id string, p Patch) (Task, error) {
	if p.empty() {
		return Task{}, invalidf("nothing to update: give at least one of title, description, status, priority or tags")
	}
	return s.Modify(ctx, id, p.apply)
}

// Complete marks a task done. Completing a task that is already done
// changes nothing, so its completion time stays the first one.
func (s *Store) Complete(ctx context.Context, id string) (Task, error) {
	return s.Modify(ctx, id, func(t *Task) error {
		t.Status = StatusDone
		return nil
	})
}

// Modify reads a task, lets fn change it and writes it back, all in one
// write transaction, so no concurrent change (from this process or
// another) is lost in between. An error from fn aborts the change and is
// returned as is. fn must not call the Store: the write lock is held.
//
// The store keeps the id and the timestamps: UpdatedAt moves only when a
// field really changed, and CompletedAt is set when the status becomes
// done and cleared when it leaves done.
func (s *Store) Modify(ctx context.Context, id string, fn func(*Task) error) (Task, error) {
	var out Task
	err := s.write(ctx, func(tx *sql.Tx) error {
		old, err := getTask(ctx, s.d, tx, id)
		if err != nil {
			return err
		}
		t := old
		t.Tags = slices.Clone(old.Tags)
		if err := fn(&t); err != nil {
			return err
		}
		if err := normalize(&t); err != nil {
			return err
		}
		if err := s.d.storable(&t); err != nil {
			return err
		}
		t.ID, t.CreatedAt, t.UpdatedAt, t.CompletedAt = old.ID, old.CreatedAt, old.UpdatedAt, old.CompletedAt
		if t.Title == old.Title && t.Description == old.Description && t.Status == old.Status &&
			t.Priority == old.Priority && slices.Equal(t.Tags, old.Tags) {
			out = old
			return nil
		}
		// Never move backwards, even if the wall clock does.
		if t.UpdatedAt = now(); t.UpdatedAt.Before(old.UpdatedAt) {
			t.UpdatedAt = old.UpdatedAt
		}
		switch {
		case t.Status != StatusDone:
			t.CompletedAt = time.Time{}
		case old.Status != StatusDone:
			t.CompletedAt = t.UpdatedAt
		}
		_, err = tx.ExecContext(ctx, s.d.sql(`UPDATE tasks SET title = ?, description = ?, status = ?, priority = ?, tags = ?,
			updated_at = ?, completed_at = ? WHERE id = ?`),
			t.Title, t.Description, t.Status, t.Priority, tagsJSON(t.Tags),
			s.d.time(t.UpdatedAt), s.d.nullTime(t.CompletedAt), t.ID)
		if err != nil {
			return fmt.Errorf("taskstore: update: %w", err)
		}
		out = t
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	return out, nil
}

// Delete removes a task for good.
func (s *Store) Delete(ctx context.Context, id string) error {
	if s.d.checkText("id", id) != nil {
		return &notFoundError{id: clip(id)}
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.d.sql(`DELETE FROM tasks WHERE id = ?`), id)
		if err != nil {
			return fmt.Errorf("taskstore: delete: %w", err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			return &notFoundError{id: clip(id)}
		}
		return nil
	})
}

const taskColumns = `id, title, description, status, priority, tags, created_at, updated_at, completed_at`

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getTask(ctx context.Context, d *dialect, q queryer, id string) (Task, error) {
	if d.checkText("id", id) != nil {
		return Task{}, &notFoundError{id: clip(id)} // no task has an id the database cannot hold
	}
	t, err := scanTask(q.QueryRowContext(ctx, d.sql(`SELECT `+taskColumns+` FROM tasks WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, &notFoundError{id: clip(id)}
	}
	return t, err
}

// scanTask reads the columns of taskColumns from a *sql.Row or *sql.Rows.
func scanTask(row interface{ Scan(...any) error }) (Task, error) {
	var (
		t                           Task
		tags                        string
		created, updated, completed any // text in SQLite, timestamptz in Postgres
	)
	if err := row.Scan(&t.ID, &t.Title, &t.Description, &t.Status, &t.Priority, &tags, &created, &updated, &completed); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return Task{}, err
		}
		return Task{}, fmt.Errorf("taskstore: read: %w", err)
	}
	var errs [4]error
	t.CreatedAt, errs[0] = timeValue(created)
	t.UpdatedAt, errs[1] = timeValue(updated)
	t.CompletedAt, errs[2] = timeValue(completed)
	errs[3] = json.Unmarshal([]byte(tags), &t.Tags)
	if err := errors.Join(errs[:]...); err != nil {
		return Task{}, fmt.Errorf("taskstore: task %s is stored in a form this version cannot read: %w", t.ID, err)
	}
	if t.Tags == nil {
		t.Tags = []string{}
	}
	return t, nil
}

func tagsJSON(tags []string) string {
	if tags == nil {
		return "[]"
	}
	b, _ := json.Marshal(tags) // a []string always encodes
	return string(b)
}
