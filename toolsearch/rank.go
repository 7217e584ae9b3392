package toolsearch

import (
	"cmp"
	"slices"
	"sync"
)

// accum is a search's scratch, reused through a pool: a score per doc id,
// dense, since a common word's postings reach thousands of docs and a
// map of them costs more than scoring them.
type accum struct {
	score []float64 // by doc id
	have  []float64 // by doc id: the idf of the query terms in its name
	seen  []bool    // by doc id: scored
	// lowered, by doc id: its score was lowered for a question (see
	// intent.apply).
	lowered []bool
	ids     []int32 // the docs scored
	out     []scored
}

var accums = sync.Pool{New: func() any { return new(accum) }}

// getAccum returns a cleared accum for n doc ids.
func getAccum(n int) *accum {
	a := accums.Get().(*accum)
	if len(a.score) < n {
		a.score = make([]float64, n)
		a.have = make([]float64, n)
		a.seen = make([]bool, n)
		a.lowered = make([]bool, n)
	}
	return a
}

func (a *accum) add(id int32, s float64) {
	if !a.seen[id] {
		a.seen[id] = true
		a.ids = append(a.ids, id)
	}
	a.score[id] += s
}

// release clears what was scored, far less than the whole, and returns a
// to the pool.
func (a *accum) release() {
	a.reset()
	accums.Put(a)
}

// reset clears what was scored, for another scoring of the same query.
func (a *accum) reset() {
	for _, id := range a.ids {
		a.score[id], a.have[id], a.seen[id], a.lowered[id] = 0, 0, false, false
	}
	a.ids = a.ids[:0]
	a.out = a.out[:0]
}

// order ranks a before b (-1) or after it (1): higher scores first, ties
// to the shorter name, then by name, so that results are stable. Names are
// unique, so it is a total order.
func (ix *Index) order(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	ka, kb := ix.docs[a.id].key, ix.docs[b.id].key
	return cmp.Or(cmp.Compare(len(ka), len(kb)), cmp.Compare(ka, kb))
}

// best returns the n first of cands in order, leaving out those allow
// refuses. It keeps the n best so far in a heap whose root is the worst of
// them: most candidates fall at one comparison with it, and allow is asked
// only about those that would get in.
func (ix *Index) best(cands []scored, allow func(string) bool, n int) []scored {
	h := make([]scored, 0, min(n, len(cands)))
	// worse says whether h[i] ranks after h[j]: the heap's order.
	worse := func(i, j int) bool { return ix.order(h[i], h[j]) > 0 }
	for _, c := range cands {
		if len(h) == n && ix.order(c, h[0]) >= 0 {
			continue
		}
		if allow != nil && !allow(ix.docs[c.id].key) {
			continue
		}
		if len(h) < n {
			h = append(h, c)
			for i := len(h) - 1; i > 0 && worse(i, (i-1)/2); i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
			continue
		}
		h[0] = c
		for i := 0; ; {
			w := i
			for _, j := range [2]int{2*i + 1, 2*i + 2} {
				if j < len(h) && worse(j, w) {
					w = j
				}
			}
			if w == i {
				break
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	slices.SortFunc(h, ix.order)
	return h
}

// allowed leaves out of cands, in place, those allow refuses.
func (ix *Index) allowed(cands []scored, allow func(string) bool) []scored {
	if allow == nil {
		return cands
	}
	return slices.DeleteFunc(cands, func(c scored) bool { return !allow(ix.docs[c.id].key) })
}

// twoStage keeps the tools of the best servers: a server is as good as
// its best tool plus a little for its second and third, so that a server
// with several matching tools outranks one lucky match. It keeps cands'
// order, whatever it is.
func (ix *Index) twoStage(cands []scored, servers int) []scored {
	type agg struct {
		name  string
		top   [3]float64 // the best scores, best first
		n     int
		score float64
	}
	var aggs []agg
	at := map[string]int{}
	last := -1
	for _, c := range cands {
		// Candidates come mostly server by server, as servers' tools are
		// added: the last one's aggregate saves most lookups.
		if s := ix.docs[c.id].server; last < 0 || aggs[last].name != s {
			i, ok := at[s]
			if !ok {
				i = len(aggs)
				at[s] = i
				aggs = append(aggs, agg{name: s})
			}
			last = i
		}
		a := &aggs[last]
		i := min(a.n, len(a.top))
		for ; i > 0 && c.score > a.top[i-1]; i-- {
			if i < len(a.top) {
				a.top[i] = a.top[i-1]
			}
		}
		if i < len(a.top) {
			a.top[i] = c.score
		}
		a.n++
	}
	for i := range aggs {
		a := &aggs[i]
		rest := 0.0
		for _, x := range a.top[1:min(a.n, len(a.top))] {
			rest += x
		}
		a.score = a.top[0] + 0.25*rest
	}
	slices.SortFunc(aggs, func(a, b agg) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.name, b.name))
	})
	aggs = aggs[:min(len(aggs), servers)]
	return slices.DeleteFunc(cands, func(c scored) bool {
		s := ix.docs[c.id].server
		return !slices.ContainsFunc(aggs, func(a agg) bool { return a.name == s })
	})
}

// rrfK is reciprocal rank fusion's constant, as its authors chose it.
const rrfK = 60

// fuse merges lexical and dense rankings by reciprocal rank: each list
// votes 1/(60+rank) for its tools. The fused score replaces BM25's; the
// result is in no particular order.
func (ix *Index) fuse(lexical, dense []scored) []scored {
	votes := map[int32]float64{}
	for i, r := range lexical {
		votes[r.id] += 1 / float64(rrfK+i+1)
	}
	for i, r := range dense {
		votes[r.id] += 1 / float64(rrfK+i+1)
	}
	out := make([]scored, 0, len(votes))
	for id, v := range votes {
		out = append(out, scored{id, v})
	}
	return out
}
