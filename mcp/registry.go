package mcp

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// registry holds one kind of registered item, keyed by name or URI. Reads
// take a sorted snapshot without locking, so listing and lookup never wait
// for a writer; writers rebuild the snapshot.
type registry[T any] struct {
	key  func(T) string
	mu   sync.Mutex
	snap atomic.Pointer[snapshot[T]]
}

type snapshot[T any] struct {
	sorted []T
	byKey  map[string]T
}

func newRegistry[T any](key func(T) string) *registry[T] {
	r := &registry[T]{key: key}
	r.snap.Store(&snapshot[T]{byKey: map[string]T{}})
	return r
}

func (r *registry[T]) load() *snapshot[T] { return r.snap.Load() }

func (r *registry[T]) len() int { return len(r.load().sorted) }

func (r *registry[T]) get(k string) (T, bool) {
	v, ok := r.load().byKey[k]
	return v, ok
}

// getBytes is get for a name read from a message, without copying it.
func (r *registry[T]) getBytes(k []byte) (T, bool) {
	v, ok := r.load().byKey[string(k)]
	return v, ok
}

// update applies add and remove under the writer lock and reports whether
// anything changed.
func (r *registry[T]) update(add []T, remove []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.load()
	byKey := make(map[string]T, len(old.byKey)+len(add))
	for k, v := range old.byKey {
		byKey[k] = v
	}
	changed := false
	for _, k := range remove {
		if _, ok := byKey[k]; ok {
			delete(byKey, k)
			changed = true
		}
	}
	for _, v := range add {
		byKey[r.key(v)] = v
		changed = true
	}
	if !changed {
		return false
	}
	sorted := make([]T, 0, len(byKey))
	for _, v := range byKey {
		sorted = append(sorted, v)
	}
	slices.SortFunc(sorted, func(a, b T) int { return cmp.Compare(r.key(a), r.key(b)) })
	r.snap.Store(&snapshot[T]{sorted: sorted, byKey: byKey})
	return true
}

// page returns the items after cursor, at most size of them, and the
// cursor of the next page ("" at the end). A cursor names the last key
// returned, so pages stay consistent when items are added or removed
// between calls: nothing is skipped or repeated.
func (r *registry[T]) page(cursor string, size int) ([]T, string, error) {
	items := r.load().sorted
	start := 0
	if cursor != "" {
		after, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		start, _ = slices.BinarySearchFunc(items, after, func(v T, k string) int { return cmp.Compare(r.key(v), k) })
		if start < len(items) && r.key(items[start]) == after {
			start++
		}
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = encodeCursor(r.key(items[end-1]))
	}
	return items[start:end], next, nil
}

const cursorPrefix = "mcpgate1:"

func encodeCursor(after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + after))
}

func decodeCursor(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), cursorPrefix) {
		return "", jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: the cursor %q is not one this server issued; pass nextCursor from the previous page unchanged, or omit it to start over", truncateString(c, 40))
	}
	return string(b[len(cursorPrefix):]), nil
}

func truncateString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
