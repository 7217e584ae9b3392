package toolsearch

import (
	"cmp"
	"slices"
	"sync"
)

// coCalls counts how often two tools are called together (in one session,
// close in time), from the audit log or live traffic, to offer one beside
// the other.
type coCalls struct {
	mu    sync.Mutex
	pairs map[string]map[string]int
}

func newCoCalls() *coCalls { return &coCalls{pairs: map[string]map[string]int{}} }

// minCoCalls is how often two tools must have been called together before
// one is offered with the other: once may be chance.
const minCoCalls = 2

// maxRelated bounds the related tools offered with one hit.
const maxRelated = 5

// AddCoCall records that tools a and b were called together (by name, as
// the index knows them).
func (ix *Index) AddCoCall(a, b string) {
	if a == b || a == "" || b == "" {
		return
	}
	c := ix.related
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range [2][2]string{{a, b}, {b, a}} {
		m := c.pairs[p[0]]
		if m == nil {
			if len(c.pairs) >= 1<<16 {
				return // a bound on memory; the first tools seen keep theirs
			}
			m = map[string]int{}
			c.pairs[p[0]] = m
		}
		m[p[1]]++
	}
}

// Related returns the tools offered beside name: configured ones first,
// then those most often called with it.
func (ix *Index) Related(name string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.byName[name]
	if !ok {
		return nil
	}
	return ix.relatedLocked(ix.docs[id])
}

func (ix *Index) relatedLocked(d *doc) []string {
	// Configured names are offered only while those tools are indexed.
	out := make([]string, 0, len(d.related))
	for _, name := range d.related {
		if _, live := ix.byName[name]; live && name != d.key && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	c := ix.related
	c.mu.Lock()
	m := c.pairs[d.key]
	type kv struct {
		name string
		n    int
	}
	var often []kv
	for name, n := range m {
		if n >= minCoCalls {
			often = append(often, kv{name, n})
		}
	}
	c.mu.Unlock()
	slices.SortFunc(often, func(a, b kv) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.name, b.name)) })
	for _, x := range often {
		if _, live := ix.byName[x.name]; live && !slices.Contains(out, x.name) {
			out = append(out, x.name)
		}
	}
	if len(out) > maxRelated {
		out = out[:maxRelated]
	}
	return out
}
