package taskstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on a page of List.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
	maxQueryLen      = 500
)

// ListOptions select and page the tasks List returns. The zero value lists
// the newest DefaultListLimit tasks.
type ListOptions struct {
	Status Status // only tasks with this status; "" for all
	Query  string // case-insensitive substring of the title or description
	Tag    string // only tasks with this tag, ignoring case
	Limit  int    // 1 to MaxListLimit; 0 means DefaultListLimit
	Cursor string // NextCursor of the previous page; "" for the first
}

// ListResult is one page of tasks, newest first.
type ListResult struct {
	Tasks      []Task
	NextCursor string // "" on the last page
	Total      int    // tasks matching the filters, on all pages
}

// List returns the tasks matching o, newest first. Pages are cut by
// keyset (the last task's created_at and id), not by offset, so tasks
// created or deleted between calls never shift a page into duplicates or
// gaps. Text search and the tag filter ignore case for ASCII letters
// only, as SQLite's LIKE and NOCASE do, on Postgres too.
func (s *Store) List(ctx context.Context, o ListOptions) (ListResult, error) {
	limit := o.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	if limit < 1 || limit > MaxListLimit {
		return ListResult{}, invalidf("limit must be between 1 and %d (got %d)", MaxListLimit, limit)
	}
	var where []string
	var args []any
	if o.Status != "" {
		if err := validStatus(o.Status); err != nil {
			return ListResult{}, err
		}
		where = append(where, `status = ?`)
		args = append(args, o.Status)
	}
	if q := strings.TrimSpace(o.Query); q != "" {
		if n := utf8.RuneCountInString(q); n > maxQueryLen {
			return ListResult{}, invalidf("query must be at most %d characters (got %d)", maxQueryLen, n)
		}
		if err := s.d.checkText("query", q); err != nil {
			return ListResult{}, err
		}
		where = append(where, s.d.contains)
		pattern := "%" + escapeLike(q) + "%"
		args = append(args, pattern, pattern)
	}
	if tag := strings.TrimSpace(o.Tag); tag != "" {
		if err := s.d.checkText("tag", tag); err != nil {
			return ListResult{}, err
		}
		where = append(where, s.d.hasTag)
		args = append(args, tag)
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}
	page, pageArgs := filter, args
	if o.Cursor != "" {
		created, id, err := decodeCursor(o.Cursor)
		if err != nil {
			return ListResult{}, err
		}
		if filter == "" {
			page = " WHERE "
		} else {
			page += " AND "
		}
		// A row value comparison matches the (created_at DESC, id DESC)
		// order exactly, ties on created_at included, and uses the index.
		page += `(created_at, id) < (?, ?)`
		pageArgs = append(args[:len(args):len(args)], s.d.time(created), id)
	}

	// One read transaction, so the total and the page see the same tasks.
	tx, err := s.db.BeginTx(ctx, s.d.readTx)
	if err != nil {
		return ListResult{}, fmt.Errorf("taskstore: begin: %w", err)
	}
	defer tx.Rollback()
	var res ListResult
	if err := tx.QueryRowContext(ctx, s.d.sql(`SELECT count(*) FROM tasks`+filter), args...).Scan(&res.Total); err != nil {
		return ListResult{}, fmt.Errorf("taskstore: count: %w", err)
	}
	// One row more than the page tells whether another page follows.
	rows, err := tx.QueryContext(ctx, s.d.sql(`SELECT `+taskColumns+` FROM tasks`+page+
		` ORDER BY created_at DESC, id DESC LIMIT ?`), append(pageArgs, limit+1)...)
	if err != nil {
		return ListResult{}, fmt.Errorf("taskstore: list: %w", err)
	}
	defer rows.Close()
	res.Tasks = make([]Task, 0, limit)
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return ListResult{}, err
		}
		res.Tasks = append(res.Tasks, t)
	}
	if err := rows.Err(); err != nil {
		return ListResult{}, fmt.Errorf("taskstore: list: %w", err)
	}
	if len(res.Tasks) > limit {
		res.Tasks = res.Tasks[:limit]
		last := res.Tasks[limit-1]
		res.NextCursor = encodeCursor(formatTime(last.CreatedAt), last.ID)
	}
	return res, nil
}

// escapeLike makes every character of s literal in a LIKE pattern with
// ESCAPE '\'.
func escapeLike(s string) string { return likeEscaper.Replace(s) }

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// A cursor is the created_at and id of the last task of a page, in
// base64 so callers treat it as opaque rather than editing it.
func encodeCursor(created, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(created + " " + id))
}

func decodeCursor(c string) (created time.Time, id string, err error) {
	bad := invalidf("cursor %q is not valid: pass next_cursor from the previous page unchanged, or omit cursor to start from the newest task", clip(c))
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", bad
	}
	text, id, ok := strings.Cut(string(b), " ")
	if !ok || !validID(id) {
		return time.Time{}, "", bad
	}
	created, err = parseTime(text)
	if err != nil || formatTime(created) != text {
		return time.Time{}, "", bad
	}
	return created, id, nil
}
