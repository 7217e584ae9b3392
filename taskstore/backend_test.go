package taskstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpgate/mcpgate/internal/testservice"
)

// backend is a database the store runs on.
type backend struct {
	name string
	// fresh returns what Open takes for a new, empty database: a file's
	// path, or a Postgres URL.
	fresh func(t *testing.T) string
}

// sqliteBackend is a new file in the test's temporary directory.
var sqliteBackend = backend{name: "sqlite", fresh: func(t *testing.T) string {
	return filepath.Join(t.TempDir(), "tasks.db")
}}

// backendTests are the store's tests that must hold on every backend.
var backendTests = []struct {
	name string
	test func(*testing.T, backend)
}{
	{"CRUD", testCRUD},
	{"Validation", testValidation},
	{"TagsAreTrimmedAndDeduplicated", testTagsAreTrimmedAndDeduplicated},
	{"StatusTransitionsAndCompletedAt", testStatusTransitionsAndCompletedAt},
	{"ModifyIgnoresStoreOwnedFields", testModifyIgnoresStoreOwnedFields},
	{"DataSurvivesReopen", testDataSurvivesReopen},
	{"CheckConstraints", testCheckConstraints},
	{"MigrationsAreIdempotent", testMigrationsAreIdempotent},
	{"ListFilters", testListFilters},
	{"ListOrderAndPagination", testListOrderAndPagination},
	{"PaginationIsStableUnderWrites", testPaginationIsStableUnderWrites},
	{"ListErrors", testListErrors},
	{"ReviewPromptShowsTheOpenTasksInProgressFirstThenByPriority", testReviewPromptShowsTheOpenTasksInProgressFirstThenByPriority},
	{"OpenTasksResourceIsTheOpenTasksAsMarkdown", testOpenTasksResourceIsTheOpenTasksAsMarkdown},
	{"OpenTasksResourceOfAnEmptyStore", testOpenTasksResourceOfAnEmptyStore},
	{"ToolsList", testToolsList},
	{"ToolCalls", testToolCalls},
	{"ConcurrentWritesOneStore", testConcurrentWritesOneStore},
	{"ConcurrentWritesTwoStores", testConcurrentWritesTwoStores},
	{"ConcurrentWritesTwoProcesses", testConcurrentWritesTwoProcesses},
	{"TasksWrittenThroughOneStoreAreReadThroughAnother", testTasksWrittenThroughOneStoreAreReadThroughAnother},
	{"TextTheDatabaseCannotHoldIsRefusedAsInvalid", testTextTheDatabaseCannotHoldIsRefusedAsInvalid},
	{"PostgresPasswordNeverShows", testPostgresPasswordNeverShows},
}

// TestOnEachBackend runs backendTests on a SQLite file each, and on a
// database each in one Postgres cluster (internal/testservice; skipped
// when Postgres is not installed, failed under MCPGATE_REQUIRE_SERVICES=1).
func TestOnEachBackend(t *testing.T) {
	run := func(t *testing.T, b backend) {
		for _, bt := range backendTests {
			t.Run(bt.name, func(t *testing.T) { bt.test(t, b) })
		}
	}
	t.Run("sqlite", func(t *testing.T) { run(t, sqliteBackend) })
	t.Run("postgres", func(t *testing.T) {
		pg := testservice.Postgres(t)
		var n atomic.Int64
		run(t, backend{name: "postgres", fresh: func(t *testing.T) string {
			return pg.CreateDatabase(fmt.Sprintf("tasks%d", n.Add(1)))
		}})
	})
}

// Two mcpgate replicas share one database: what one writes, the other
// reads, lists and changes, and the first sees the change.
func testTasksWrittenThroughOneStoreAreReadThroughAnother(t *testing.T, b backend) {
	ctx := context.Background()
	path := b.fresh(t)
	var stores [2]*Store
	for i := range stores {
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		stores[i] = s
	}
	one, other := stores[0], stores[1]
	created := mustCreate(t, one, NewTask{Title: "written by one", Description: "ünïcode and \\ %_", Priority: PriorityHigh, Tags: []string{"Shared", "x"}})
	got, err := other.Get(ctx, created.ID)
	if err != nil || !reflect.DeepEqual(got, created) {
		t.Fatalf("the other Store's Get = %+v, %v\nwant %+v", got, err, created)
	}
	if r, err := other.List(ctx, ListOptions{Tag: "shared", Query: "WRITTEN"}); err != nil || len(r.Tasks) != 1 || !reflect.DeepEqual(r.Tasks[0], created) {
		t.Fatalf("the other Store's List = %+v, %v", r, err)
	}
	done, err := other.Complete(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := one.Get(ctx, created.ID); err != nil || !reflect.DeepEqual(got, done) {
		t.Fatalf("after the other completed it, Get = %+v, %v\nwant %+v", got, err, done)
	}
	if err := one.Delete(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, created.ID); err == nil || !strings.Contains(err.Error(), "no task") {
		t.Fatalf("after one deleted it, the other's Get: %v", err)
	}
}

// Postgres's text holds neither NUL nor invalid UTF-8 and answers them
// with a database error; the store refuses them first as invalid input
// that names the field, and an id no task can have is not found. SQLite
// stores such text, as it always has.
func testTextTheDatabaseCannotHoldIsRefusedAsInvalid(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	existing := mustCreate(t, s, NewTask{Title: "existing"})
	pg := b.name == "postgres"
	tests := []struct {
		name   string
		do     func() error
		target error  // nil: succeeds
		words  string // in the error
	}{
		{"NUL in a title", func() error { _, err := s.Create(ctx, NewTask{Title: "a\x00b"}); return err },
			when(pg, ErrInvalid), "title must not contain the NUL character"},
		{"NUL in a description", func() error { _, err := s.Create(ctx, NewTask{Title: "t", Description: "\x00"}); return err },
			when(pg, ErrInvalid), "description must not contain the NUL character"},
		{"NUL in a tag", func() error { _, err := s.Create(ctx, NewTask{Title: "t", Tags: []string{"ok", "a\x00"}}); return err },
			when(pg, ErrInvalid), "tags[1] must not contain the NUL character"},
		{"NUL in an update", func() error {
			_, err := s.Update(ctx, existing.ID, Patch{Description: new("x\x00")})
			return err
		}, when(pg, ErrInvalid), "description must not contain"},
		{"NUL in a query", func() error { _, err := s.List(ctx, ListOptions{Query: "\x00"}); return err },
			when(pg, ErrInvalid), "query must not contain the NUL character"},
		{"invalid UTF-8 in a query", func() error { _, err := s.List(ctx, ListOptions{Query: "\xff"}); return err },
			when(pg, ErrInvalid), "query must be valid UTF-8"},
		{"NUL in a tag filter", func() error { _, err := s.List(ctx, ListOptions{Tag: "\x00"}); return err },
			when(pg, ErrInvalid), "tag must not contain"},
		{"NUL in an id to get", func() error { _, err := s.Get(ctx, "task_\x00"); return err }, ErrNotFound, "no task with id"},
		{"invalid UTF-8 in an id to get", func() error { _, err := s.Get(ctx, "task_\xff"); return err }, ErrNotFound, "no task with id"},
		{"NUL in an id to complete", func() error { _, err := s.Complete(ctx, "\x00"); return err }, ErrNotFound, "no task with id"},
		{"NUL in an id to delete", func() error { return s.Delete(ctx, "\x00") }, ErrNotFound, "no task with id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if tt.target == nil {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				return
			}
			if !errors.Is(err, tt.target) || !strings.Contains(err.Error(), tt.words) {
				t.Fatalf("error %v, want %v saying %q", err, tt.target, tt.words)
			}
		})
	}
}

// when is target when cond holds, else nil.
func when(cond bool, target error) error {
	if cond {
		return target
	}
	return nil
}

// A Postgres URL's password shows neither in Path, which mcpgate logs,
// nor in the error of a database that does not answer.
func testPostgresPasswordNeverShows(t *testing.T, b backend) {
	if b.name != "postgres" {
		t.Skip("a file has no password")
	}
	const secret = "hunter2-not-for-logs"
	u, err := url.Parse(b.fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret) // the test cluster trusts loopback: any password opens it
	s, err := Open(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p := s.Path(); strings.Contains(p, secret) || !strings.Contains(p, u.Host) {
		t.Errorf("Path() = %q: want the database named, without its password", p)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u.Host = l.Addr().String()
	l.Close() // nothing answers there now
	if _, err := Open(u.String()); err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), u.Host) {
		t.Errorf("Open of a database that does not answer: %v; want an error naming it without its password", err)
	}
}
