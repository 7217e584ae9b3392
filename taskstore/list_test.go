package taskstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

func ids(tasks []Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func testListFilters(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	byTitle := map[string]string{}
	for _, n := range []NewTask{
		{Title: "100% done", Tags: []string{"Work", "urgent"}},
		{Title: "100 percent", Description: "not a literal percent sign", Tags: []string{"work"}, Status: StatusInProgress},
		{Title: "snake_case name", Status: StatusDone},
		{Title: "snakeXcase name", Tags: []string{"home"}},
		{Title: `back\slash`, Status: StatusCancelled},
		{Title: "plain", Description: "a NEEDLE in the description", Tags: []string{"home", "work"}},
		{Title: "Ünïcode ÄPFEL"},
	} {
		byTitle[n.Title] = mustCreate(t, s, n).ID
	}

	for _, tt := range []struct {
		name string
		opts ListOptions
		want []string // titles, in any order
	}{
		{"all", ListOptions{}, []string{"100% done", "100 percent", "snake_case name", "snakeXcase name", `back\slash`, "plain", "Ünïcode ÄPFEL"}},
		{"status", ListOptions{Status: StatusInProgress}, []string{"100 percent"}},
		{"status done", ListOptions{Status: StatusDone}, []string{"snake_case name"}},
		{"percent is literal", ListOptions{Query: "%"}, []string{"100% done"}},
		{"percent inside text", ListOptions{Query: "100%"}, []string{"100% done"}},
		{"underscore is literal", ListOptions{Query: "_"}, []string{"snake_case name"}},
		{"underscore inside text", ListOptions{Query: "e_c"}, []string{"snake_case name"}},
		{"backslash is literal", ListOptions{Query: `\`}, []string{`back\slash`}},
		{"case-insensitive", ListOptions{Query: "SNAKE"}, []string{"snake_case name", "snakeXcase name"}},
		{"description", ListOptions{Query: "needle"}, []string{"plain"}},
		{"title or description", ListOptions{Query: "percent"}, []string{"100 percent"}},
		{"query trimmed", ListOptions{Query: "  plain  "}, []string{"plain"}},
		{"non-ASCII, same case", ListOptions{Query: "ÄPFEL"}, []string{"Ünïcode ÄPFEL"}},
		{"no match", ListOptions{Query: "zebra"}, nil},
		{"tag ignores case", ListOptions{Tag: "WORK"}, []string{"100% done", "100 percent", "plain"}},
		{"tag is whole", ListOptions{Tag: "wor"}, nil},
		{"tag and status", ListOptions{Tag: "work", Status: StatusPending}, []string{"100% done", "plain"}},
		{"tag and query", ListOptions{Tag: "home", Query: "name"}, []string{"snakeXcase name"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := s.List(ctx, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, task := range r.Tasks {
				got = append(got, task.ID)
			}
			for _, title := range tt.want {
				want = append(want, byTitle[title])
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) || r.Total != len(want) || r.NextCursor != "" {
				t.Errorf("got %d tasks (total %d, cursor %q), want %v", len(got), r.Total, r.NextCursor, tt.want)
			}
		})
	}
}

func testListOrderAndPagination(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	for i := range 23 {
		mustCreate(t, s, NewTask{Title: fmt.Sprintf("task %d", i), Tags: []string{fmt.Sprint("mod", i%2)}})
	}
	// Tasks created in the same millisecond are ordered by id, so a page
	// boundary inside a run of equal created_at must neither repeat nor
	// skip any of them.
	for i := range 12 {
		tied := s.d.time(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
		_, err := s.db.Exec(s.d.sql(`INSERT INTO tasks (id, title, tags, created_at, updated_at) VALUES (?, ?, '["mod0"]', ?, ?)`),
			newID(), fmt.Sprint("tied ", i), tied, tied)
		if err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.List(ctx, ListOptions{Limit: MaxListLimit})
	if err != nil || all.Total != 35 || len(all.Tasks) != 35 || all.NextCursor != "" {
		t.Fatalf("List(limit 100): %d tasks, total %d, cursor %q, %v", len(all.Tasks), all.Total, all.NextCursor, err)
	}
	if !slices.IsSortedFunc(all.Tasks, func(a, b Task) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	}) {
		t.Errorf("not ordered newest first, then by id descending: %v", ids(all.Tasks))
	}
	if def, _ := s.List(ctx, ListOptions{}); len(def.Tasks) != DefaultListLimit || def.NextCursor == "" {
		t.Errorf("default limit: %d tasks", len(def.Tasks))
	}

	for _, tt := range []struct {
		name  string
		opts  ListOptions
		total int
	}{
		{"all by 1", ListOptions{Limit: 1}, 35},
		{"all by 5", ListOptions{Limit: 5}, 35},
		{"all by 7, an exact multiple", ListOptions{Limit: 7}, 35},
		{"all by 34", ListOptions{Limit: 34}, 35},
		{"filtered by 4", ListOptions{Tag: "mod0", Limit: 4}, 24},
		{"filtered, one page", ListOptions{Status: StatusPending, Query: "tied", Limit: 100}, 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var walked []string
			opts := tt.opts
			for pages := 0; ; pages++ {
				if pages > 40 {
					t.Fatal("pagination does not end")
				}
				r, err := s.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				if r.Total != tt.total {
					t.Errorf("page %d: total %d, want %d", pages, r.Total, tt.total)
				}
				if len(r.Tasks) == 0 || len(r.Tasks) > opts.Limit {
					t.Fatalf("page %d has %d tasks", pages, len(r.Tasks))
				}
				walked = append(walked, ids(r.Tasks)...)
				if r.NextCursor == "" {
					break
				}
				opts.Cursor = r.NextCursor
			}
			// The pages, joined, are exactly the unpaged list.
			full, _ := s.List(ctx, ListOptions{Status: tt.opts.Status, Tag: tt.opts.Tag, Query: tt.opts.Query, Limit: MaxListLimit})
			if !slices.Equal(walked, ids(full.Tasks)) {
				t.Errorf("walked %d tasks %v\nwant %d tasks %v", len(walked), walked, len(full.Tasks), ids(full.Tasks))
			}
		})
	}
}

// Keyset pages do not shift when tasks are added or removed between
// calls, as offset pages would.
func testPaginationIsStableUnderWrites(t *testing.T, b backend) {
	ctx := context.Background()
	s := openStore(t, b)
	for i := range 9 {
		mustCreate(t, s, NewTask{Title: fmt.Sprint("task ", i)})
	}
	before, _ := s.List(ctx, ListOptions{Limit: MaxListLimit})
	p1, err := s.List(ctx, ListOptions{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	// A later millisecond: a task created in the cursor task's own
	// millisecond could sort after it by id, and rightly appear.
	time.Sleep(2 * time.Millisecond)
	mustCreate(t, s, NewTask{Title: "newer than every page"})
	if err := s.Delete(ctx, p1.Tasks[2].ID); err != nil { // the cursor's own task
		t.Fatal(err)
	}
	rest, err := s.List(ctx, ListOptions{Limit: MaxListLimit, Cursor: p1.NextCursor})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids(rest.Tasks), ids(before.Tasks[3:]); !slices.Equal(got, want) {
		t.Errorf("after writes, the next page is %v, want %v", got, want)
	}
}

func testListErrors(t *testing.T, b backend) {
	s := openStore(t, b)
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tt := range []struct {
		name  string
		opts  ListOptions
		words string
	}{
		{"limit 0 is the default", ListOptions{Limit: 0}, ""},
		{"limit too high", ListOptions{Limit: 101}, "limit must be between 1 and 100 (got 101)"},
		{"negative limit", ListOptions{Limit: -1}, "limit must be between 1 and 100 (got -1)"},
		{"unknown status", ListOptions{Status: "open"}, `status must be one of pending, in_progress, done, cancelled (got "open")`},
		{"long query", ListOptions{Query: strings.Repeat("q", 501)}, "query must be at most 500 characters"},
		{"cursor not base64", ListOptions{Cursor: "not a cursor!"}, `cursor "not a cursor!" is not valid: pass next_cursor from the previous page unchanged`},
		{"cursor without id", ListOptions{Cursor: b64("2025-01-01T00:00:00.000Z")}, "cursor"},
		{"cursor with a bad id", ListOptions{Cursor: b64("2025-01-01T00:00:00.000Z task_SHOUTING00000000")}, "cursor"},
		{"cursor with a bad time", ListOptions{Cursor: b64("2025-13-01T00:00:00.000Z task_0000000000000000")}, "cursor"},
		{"cursor with another time format", ListOptions{Cursor: b64("2025-01-01T00:00:00Z task_0000000000000000")}, "cursor"},
		{"valid cursor", ListOptions{Cursor: b64("2025-01-01T00:00:00.000Z task_0000000000000000")}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.List(context.Background(), tt.opts)
			checkErr(t, err, ErrInvalid, tt.words)
		})
	}
}
