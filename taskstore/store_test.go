package taskstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// openStore opens a store on a fresh database of b, closed when the
// test ends.
func openStore(t *testing.T, b backend) *Store {
	t.Helper()
	s, err := Open(b.fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func mustCreate(t *testing.T, s *Store, n NewTask) Task {
	t.Helper()
	task, err := s.Create(context.Background(), n)
	if err != nil {
		t.Fatalf("Create(%+v): %v", n, err)
	}
	return task
}

func testCRUD(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)

	created := mustCreate(t, s, NewTask{Title: "  Write the report  ", Description: "  keep\nthis  ", Tags: []string{"work", " Q3 "}})
	if !validID(created.ID) {
		t.Errorf("id %q is not task_ and 16 of [a-z0-9]", created.ID)
	}
	want := Task{ID: created.ID, Title: "Write the report", Description: "  keep\nthis  ", Status: StatusPending,
		Priority: PriorityMedium, Tags: []string{"work", "Q3"}, CreatedAt: created.CreatedAt, UpdatedAt: created.CreatedAt}
	if !reflect.DeepEqual(created, want) {
		t.Errorf("created %+v\nwant    %+v", created, want)
	}
	if d := time.Since(created.CreatedAt); d < 0 || d > time.Minute || created.CreatedAt.Location() != time.UTC {
		t.Errorf("created_at %v", created.CreatedAt)
	}

	got, err := s.Get(ctx, created.ID)
	if err != nil || !reflect.DeepEqual(got, created) {
		t.Fatalf("Get = %+v, %v\nwant %+v", got, err, created)
	}

	time.Sleep(2 * time.Millisecond) // so updated_at visibly moves
	updated, err := s.Update(ctx, created.ID, Patch{Title: new("Write the Q3 report"), Priority: new(PriorityHigh), Tags: &[]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Title != "Write the Q3 report" || updated.Priority != PriorityHigh || len(updated.Tags) != 0 || updated.Tags == nil ||
		updated.Description != created.Description || !updated.CreatedAt.Equal(created.CreatedAt) || !updated.UpdatedAt.After(created.UpdatedAt) {
		t.Errorf("updated %+v", updated)
	}
	if got, _ := s.Get(ctx, created.ID); !reflect.DeepEqual(got, updated) {
		t.Errorf("after Update, Get = %+v\nwant %+v", got, updated)
	}

	// An update that changes nothing leaves updated_at alone, which is
	// what makes update_task idempotent.
	same, err := s.Update(ctx, created.ID, Patch{Title: new("Write the Q3 report")})
	if err != nil || !reflect.DeepEqual(same, updated) {
		t.Errorf("no-op update = %+v, %v", same, err)
	}

	if err := s.Delete(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, created.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if err := s.Delete(ctx, created.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
}

func testValidation(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	existing := mustCreate(t, s, NewTask{Title: "existing"})
	for _, tt := range []struct {
		name  string
		task  NewTask
		words string // the error must contain this; "" means no error
	}{
		{"empty title", NewTask{Title: ""}, "title must be 1 to 500 characters"},
		{"blank title", NewTask{Title: " \t\n "}, "title must be 1 to 500 characters after trimming spaces (got 0)"},
		{"long title", NewTask{Title: strings.Repeat("x", 501)}, "title must be 1 to 500 characters after trimming spaces (got 501)"},
		{"500 characters, 1000 bytes", NewTask{Title: strings.Repeat("é", 500)}, ""},
		{"trimmed to 500", NewTask{Title: "  " + strings.Repeat("x", 500) + "  "}, ""},
		{"invalid UTF-8 title", NewTask{Title: "a\xffb"}, "title must be valid UTF-8"},
		{"long description", NewTask{Title: "t", Description: strings.Repeat("d", 20001)}, "description must be at most 20000 characters (got 20001)"},
		{"longest description", NewTask{Title: "t", Description: strings.Repeat("d", 20000)}, ""},
		{"unknown status", NewTask{Title: "t", Status: "finished"}, `status must be one of pending, in_progress, done, cancelled (got "finished")`},
		{"unknown priority", NewTask{Title: "t", Priority: "urgent"}, `priority must be one of low, medium, high (got "urgent")`},
		{"empty tag", NewTask{Title: "t", Tags: []string{"a", " "}}, "tags[1] must be 1 to 100 characters"},
		{"long tag", NewTask{Title: "t", Tags: []string{strings.Repeat("t", 101)}}, "tags[0] must be 1 to 100 characters"},
		{"too many tags", NewTask{Title: "t", Tags: manyTags(101)}, "tags may hold at most 100 tags (got 101)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Create(ctx, tt.task)
			checkErr(t, err, ErrInvalid, tt.words)
		})
	}

	for _, tt := range []struct {
		name   string
		id     string
		patch  Patch
		target error
		words  string
	}{
		{"nothing to change", existing.ID, Patch{}, ErrInvalid, "nothing to update: give at least one of title, description, status, priority or tags"},
		{"blank title", existing.ID, Patch{Title: new("  ")}, ErrInvalid, "title must be 1 to 500"},
		{"unknown status", existing.ID, Patch{Status: new(Status("open"))}, ErrInvalid, `status must be one of pending, in_progress, done, cancelled (got "open")`},
		{"unknown priority", existing.ID, Patch{Priority: new(Priority(""))}, ErrInvalid, `priority must be one of low, medium, high (got "")`},
		{"unknown id", "task_doesnotexist00", Patch{Title: new("x")}, ErrNotFound, `no task with id "task_doesnotexist00"`},
	} {
		t.Run("update "+tt.name, func(t *testing.T) {
			_, err := s.Update(ctx, tt.id, tt.patch)
			checkErr(t, err, tt.target, tt.words)
		})
	}
	// A rejected update changes nothing.
	if got, _ := s.Get(ctx, existing.ID); !reflect.DeepEqual(got, existing) {
		t.Errorf("after rejected updates: %+v", got)
	}
	_, err := s.Complete(ctx, "task_x")
	checkErr(t, err, ErrNotFound, `no task with id "task_x"`)
	_, err = s.Get(ctx, strings.Repeat("y", 1000))
	checkErr(t, err, ErrNotFound, `no task with id "yyyy`)
	if err != nil && len(err.Error()) > 100 {
		t.Errorf("a long id is echoed in full: %d bytes", len(err.Error()))
	}
}

func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = "tag" + string(rune('a'+i/26)) + string(rune('a'+i%26))
	}
	return tags
}

func checkErr(t *testing.T, err, target error, words string) {
	t.Helper()
	if words == "" {
		if err != nil {
			t.Errorf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, target) || !strings.Contains(err.Error(), words) {
		t.Errorf("error %v; want %v containing %q", err, target, words)
	}
}

func testTagsAreTrimmedAndDeduplicated(t *testing.T, b backend) {
	task := mustCreate(t, openStore(t, b), NewTask{Title: "t", Tags: []string{" Bug", "bug ", "UI", "ui", "Bug"}})
	if !reflect.DeepEqual(task.Tags, []string{"Bug", "UI"}) {
		t.Errorf("tags %q", task.Tags)
	}
}

func testStatusTransitionsAndCompletedAt(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	task := mustCreate(t, s, NewTask{Title: "t"})
	tick := func() { time.Sleep(2 * time.Millisecond) } // timestamps have millisecond precision

	steps := []struct {
		name string
		do   func() (Task, error)
		want Status
		// completed: "set" (newly set to updated_at), "kept" (unchanged
		// from the step before) or "none".
		completed string
		touched   bool // updated_at moved
	}{
		{"start", func() (Task, error) { return s.Update(ctx, task.ID, Patch{Status: new(StatusInProgress)}) }, StatusInProgress, "none", true},
		{"finish by update", func() (Task, error) { return s.Update(ctx, task.ID, Patch{Status: new(StatusDone)}) }, StatusDone, "set", true},
		{"complete a done task", func() (Task, error) { return s.Complete(ctx, task.ID) }, StatusDone, "kept", false},
		{"edit a done task", func() (Task, error) { return s.Update(ctx, task.ID, Patch{Description: new("notes")}) }, StatusDone, "kept", true},
		{"reopen", func() (Task, error) { return s.Update(ctx, task.ID, Patch{Status: new(StatusPending)}) }, StatusPending, "none", true},
		{"complete", func() (Task, error) { return s.Complete(ctx, task.ID) }, StatusDone, "set", true},
		{"cancel", func() (Task, error) { return s.Update(ctx, task.ID, Patch{Status: new(StatusCancelled)}) }, StatusCancelled, "none", true},
		{"complete a cancelled task", func() (Task, error) { return s.Complete(ctx, task.ID) }, StatusDone, "set", true},
	}
	prev := task
	for _, st := range steps {
		tick()
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Status != st.want {
			t.Errorf("%s: status %s, want %s", st.name, got.Status, st.want)
		}
		switch st.completed {
		case "set":
			if got.CompletedAt.IsZero() || !got.CompletedAt.Equal(got.UpdatedAt) {
				t.Errorf("%s: completed_at %v, updated_at %v", st.name, got.CompletedAt, got.UpdatedAt)
			}
		case "kept":
			if got.CompletedAt.IsZero() || !got.CompletedAt.Equal(prev.CompletedAt) {
				t.Errorf("%s: completed_at %v, want the earlier %v", st.name, got.CompletedAt, prev.CompletedAt)
			}
		case "none":
			if !got.CompletedAt.IsZero() {
				t.Errorf("%s: completed_at %v, want none", st.name, got.CompletedAt)
			}
		}
		if moved := !got.UpdatedAt.Equal(prev.UpdatedAt); moved != st.touched {
			t.Errorf("%s: updated_at moved = %v, want %v", st.name, moved, st.touched)
		}
		if stored, _ := s.Get(ctx, task.ID); !reflect.DeepEqual(stored, got) {
			t.Errorf("%s: stored %+v\nreturned %+v", st.name, stored, got)
		}
		prev = got
	}

	done := mustCreate(t, s, NewTask{Title: "already done", Status: StatusDone})
	if done.CompletedAt.IsZero() || !done.CompletedAt.Equal(done.CreatedAt) {
		t.Errorf("created done: completed_at %v, created_at %v", done.CompletedAt, done.CreatedAt)
	}
}

func testModifyIgnoresStoreOwnedFields(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	task := mustCreate(t, s, NewTask{Title: "t"})
	got, err := s.Modify(ctx, task.ID, func(t *Task) error {
		t.ID, t.CreatedAt, t.CompletedAt = "task_other", time.Unix(0, 0), time.Unix(0, 0)
		t.Title = "changed"
		return nil
	})
	if err != nil || got.ID != task.ID || !got.CreatedAt.Equal(task.CreatedAt) || !got.CompletedAt.IsZero() || got.Title != "changed" {
		t.Errorf("Modify = %+v, %v", got, err)
	}
	boom := errors.New("boom")
	if _, err := s.Modify(ctx, task.ID, func(t *Task) error { t.Title = "lost"; return boom }); err != boom {
		t.Errorf("fn's error: %v", err)
	}
	if stored, _ := s.Get(ctx, task.ID); stored.Title != "changed" {
		t.Errorf("a failed Modify was written: %+v", stored)
	}
}

func testDataSurvivesReopen(t *testing.T, b backend) {
	ctx := context.Background()
	path := b.fresh(t)
	if b.name == "sqlite" {
		path = filepath.Join(t.TempDir(), "nested", "dirs", "tasks.db")
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a := mustCreate(t, s, NewTask{Title: "a", Description: "details", Priority: PriorityLow, Tags: []string{"x", "y"}})
	done := mustCreate(t, s, NewTask{Title: "b"})
	done, err = s.Complete(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, want := range []Task{a, done} {
		if got, err := s.Get(ctx, want.ID); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("after reopen: %+v, %v\nwant %+v", got, err, want)
		}
	}
	if runtime.GOOS != "windows" && b.name == "sqlite" {
		for p, mode := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700, filepath.Dir(filepath.Dir(path)): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != mode {
				t.Errorf("%s: mode %v, want %v (%v)", p, fi.Mode().Perm(), mode, err)
			}
		}
	}
}

func TestOpenPathsThatNeedEscaping(t *testing.T) {
	names, dirName := []string{"with space.db", "what?.db", "hash#.db", "percent%20.db", "tasks.db?mode=ro"}, "odd dir?#"
	if runtime.GOOS == "windows" { // where '?' cannot be in a file name
		names, dirName = []string{"with space.db", "hash#.db", "percent%20.db"}, "odd dir#"
	}
	for _, name := range names {
		dir := filepath.Join(t.TempDir(), dirName)
		s, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mustCreate(t, s, NewTask{Title: "t"})
		s.Close()
		// The database is the file named, not one SQLite derived from a
		// misread URI.
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != name {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("%s: the directory holds %q", name, names)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(""); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("Open(\"\"): %v", err)
	}
	if _, err := Open(dir); err == nil {
		t.Errorf("Open(a directory) succeeded")
	}
	notDB := filepath.Join(dir, "notes.txt")
	os.WriteFile(notDB, []byte(strings.Repeat("this is not a database\n", 100)), 0o600)
	if _, err := Open(notDB); err == nil || !strings.Contains(err.Error(), "not a database") {
		t.Errorf("Open(a text file): %v", err)
	}
}

func TestPragmas(t *testing.T) {
	s := openStore(t, sqliteBackend)
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "10000"} {
		var got string
		if err := s.db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", pragma, got, err, want)
		}
	}
}

func testCheckConstraints(t *testing.T, b backend) {
	s := openStore(t, b)
	ts := s.d.time(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	failed := map[string]string{"sqlite": "CHECK constraint failed", "postgres": "violates check constraint"}[b.name]
	for _, tt := range []struct {
		name, status, priority, tags string
		completed                    bool
	}{
		{"status", "bogus", "low", "[]", false},
		{"priority", "pending", "urgent", "[]", false},
		{"tags not an array", "pending", "low", `{"a":1}`, false},
		{"done without completed_at", "done", "low", "[]", false},
		{"completed_at without done", "pending", "low", "[]", true},
	} {
		var completed any
		if tt.completed {
			completed = ts
		}
		_, err := s.db.Exec(s.d.sql(`INSERT INTO tasks (id, title, status, priority, tags, created_at, updated_at, completed_at)
			VALUES ('task_0000000000000000', 't', ?, ?, ?, ?, ?, ?)`), tt.status, tt.priority, tt.tags, ts, ts, completed)
		if err == nil || !strings.Contains(err.Error(), failed) {
			t.Errorf("%s: %v, want %q", tt.name, err, failed)
		}
	}
}

func testMigrationsAreIdempotent(t *testing.T, b backend) {
	path := b.fresh(t)
	schema := map[string]struct {
		migrations             []string
		versions, index, newer string
	}{
		"sqlite": {sqliteMigrations, `SELECT version FROM schema_migrations ORDER BY version`,
			`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'tasks' AND sql IS NOT NULL`,
			`INSERT INTO schema_migrations (version, applied_at) VALUES (99, '2030-01-01T00:00:00.000Z')`},
		"postgres": {postgresMigrations, `SELECT version FROM taskstore_migrations ORDER BY version`,
			`SELECT indexname FROM pg_indexes WHERE tablename = 'tasks' AND indexname <> 'tasks_pkey'`,
			`INSERT INTO taskstore_migrations (version) VALUES (99)`},
	}[b.name]
	for range 3 {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		mustCreate(t, s, NewTask{Title: "t"})
		var versions []int
		rows, err := s.db.Query(schema.versions)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var v int
			rows.Scan(&v)
			versions = append(versions, v)
		}
		rows.Close()
		if n := len(schema.migrations); len(versions) != n || versions[0] != 1 || versions[len(versions)-1] != n {
			t.Errorf("the schema's versions are %v, want 1..%d", versions, n)
		}
		var index string
		if err := s.db.QueryRow(schema.index).Scan(&index); err != nil || index != "tasks_newest" {
			t.Errorf("index %q, %v", index, err)
		}
		s.Close()
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.List(context.Background(), ListOptions{}); err != nil || r.Total != 3 {
		t.Errorf("after three opens: %d tasks, %v", r.Total, err)
	}

	// A schema from a newer mcpgate is refused, not written to blindly.
	if _, err := s.db.Exec(schema.newer); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("Open of a newer schema: %v", err)
	}
}
