package taskstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Status is where a task stands in its life.
type Status string

// The statuses a task can have. Any status may follow any other: people
// reopen finished work and revive cancelled work.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusDone       Status = "done"
	StatusCancelled  Status = "cancelled"
)

// Priority is how urgent a task is.
type Priority string

// The priorities a task can have.
const (
	PriorityLow    Priority = "low"
	PriorityMedium Priority = "medium"
	PriorityHigh   Priority = "high"
)

// Limits on a task's fields, counted in characters (not bytes) because
// that is what SQLite's length() counts in the CHECK constraints.
const (
	MaxTitleLen       = 500
	MaxDescriptionLen = 20000
	MaxTags           = 100
	MaxTagLen         = 100
)

// Task is one stored task. Times are UTC with millisecond precision, the
// precision of the stored text.
type Task struct {
	ID          string
	Title       string
	Description string
	Status      Status
	Priority    Priority
	Tags        []string // never nil
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // zero unless Status is StatusDone
}

// ErrNotFound is matched (with errors.Is) by the error for an unknown id.
var ErrNotFound = errors.New("task not found")

// ErrInvalid is matched (with errors.Is) by every error that rejects a
// caller's input, as opposed to a failure of the database.
var ErrInvalid = errors.New("invalid input")

type notFoundError struct{ id string }

func (e *notFoundError) Error() string        { return fmt.Sprintf("no task with id %q", e.id) }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

var (
	statuses   = []Status{StatusPending, StatusInProgress, StatusDone, StatusCancelled}
	priorities = []Priority{PriorityLow, PriorityMedium, PriorityHigh}
)

func validStatus(s Status) error {
	for _, v := range statuses {
		if s == v {
			return nil
		}
	}
	return invalidf("status must be one of pending, in_progress, done, cancelled (got %q)", clip(string(s)))
}

func validPriority(p Priority) error {
	for _, v := range priorities {
		if p == v {
			return nil
		}
	}
	return invalidf("priority must be one of low, medium, high (got %q)", clip(string(p)))
}

// normalize trims and checks the caller-editable fields of t in place, so
// the Go API enforces what the tools' schemas promise. The database's
// CHECK constraints stay as the last line of defence.
func normalize(t *Task) error {
	t.Title = strings.TrimSpace(t.Title)
	if !utf8.ValidString(t.Title) {
		return invalidf("title must be valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(t.Title); n == 0 || n > MaxTitleLen {
		return invalidf("title must be 1 to %d characters after trimming spaces (got %d)", MaxTitleLen, n)
	}
	if !utf8.ValidString(t.Description) {
		return invalidf("description must be valid UTF-8 text")
	}
	if n := utf8.RuneCountInString(t.Description); n > MaxDescriptionLen {
		return invalidf("description must be at most %d characters (got %d)", MaxDescriptionLen, n)
	}
	if err := validStatus(t.Status); err != nil {
		return err
	}
	if err := validPriority(t.Priority); err != nil {
		return err
	}
	tags, err := normalizeTags(t.Tags)
	if err != nil {
		return err
	}
	t.Tags = tags
	return nil
}

// normalizeTags trims tags and drops repeats, ignoring case, because the
// tag filter of List ignores case too: "Bug" and "bug" are one tag.
func normalizeTags(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, tag := range in {
		tag = strings.TrimSpace(tag)
		if !utf8.ValidString(tag) {
			return nil, invalidf("tags[%d] must be valid UTF-8 text", i)
		}
		if n := utf8.RuneCountInString(tag); n == 0 || n > MaxTagLen {
			return nil, invalidf("tags[%d] must be 1 to %d characters after trimming spaces (got %d)", i, MaxTagLen, n)
		}
		key := strings.ToLower(tag)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, tag)
	}
	if len(out) > MaxTags {
		return nil, invalidf("tags may hold at most %d tags (got %d)", MaxTags, len(out))
	}
	return out, nil
}

// clip shortens an echoed bad value so an error message stays readable.
func clip(s string) string {
	const limit = 40
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}

const (
	idPrefix   = "task_"
	idLen      = 16
	idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// newID returns "task_" and 16 random characters from [a-z0-9], about 82
// bits: collisions are not worth a retry loop.
func newID() string {
	b := make([]byte, 0, len(idPrefix)+idLen)
	b = append(b, idPrefix...)
	var buf [32]byte
	for len(b) < cap(b) {
		rand.Read(buf[:]) // never fails since Go 1.24
		for _, c := range buf {
			// 252 is the largest multiple of 36 below 256; rejecting the
			// bytes above it keeps every character equally likely.
			if c < 252 && len(b) < cap(b) {
				b = append(b, idAlphabet[c%36])
			}
		}
	}
	return string(b)
}

func validID(id string) bool {
	if len(id) != len(idPrefix)+idLen || !strings.HasPrefix(id, idPrefix) {
		return false
	}
	for _, c := range []byte(id[len(idPrefix):]) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// timeLayout is RFC 3339 with exactly three fractional digits: fixed width,
// so the stored text sorts in time order and keyset pagination can compare
// it as text.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) { return time.Parse(timeLayout, s) }

// now is the store's clock, truncated to what the stored text keeps so a
// task returned by a write equals the task read back later.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
