package toolsearch

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"

	"github.com/mcpgate/mcpgate/mcp"
)

// Query is one search.
type Query struct {
	// Text is what the caller is looking for, in its own words.
	Text string
	// K is how many hits to return at most; zero means 10.
	K int
	// Servers, when above zero, ranks servers first and returns tools of
	// the best Servers servers only (two-stage ranking): for catalogs of
	// many servers whose tools look alike (every server has a "search").
	Servers int
	// Allow, when set, leaves out the tools it returns false for (those a
	// caller may not see).
	Allow func(name string) bool
}

// Hit is one tool found.
type Hit struct {
	Server string  `json:"server"`
	Name   string  `json:"name"`
	Score  float64 `json:"score"`
	// Tokens is the estimated token cost of the tool's full definition.
	Tokens int `json:"tokens"`
	// Related are tools worth offering beside this one: configured as
	// related, or often called with it.
	Related []string  `json:"related,omitempty"`
	Tool    *mcp.Tool `json:"-"`
}

// Search ranks the indexed tools for q, best first. Tools that share no
// word with the query are not returned, unless dense retrieval finds
// them.
func (ix *Index) Search(ctx context.Context, q Query) []Hit {
	k := q.K
	if k <= 0 {
		k = 10
	}
	var qvec []float32
	if ix.vectors != nil && q.Text != "" {
		qvec = ix.vectors.query(ctx, q.Text)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	scores := ix.bm25(q.Text)
	ranked := ix.rank(scores, q.Allow)
	if qvec != nil {
		ranked = ix.fuse(ranked, ix.vectors.nearest(qvec, ix.docs, q.Allow, 100))
	}
	if q.Servers > 0 {
		ranked = ix.twoStage(ranked, q.Servers)
	}
	if len(ranked) > k {
		ranked = ranked[:k]
	}
	hits := make([]Hit, len(ranked))
	for i, r := range ranked {
		d := ix.docs[r.id]
		hits[i] = Hit{Server: d.server, Name: d.key, Score: r.score, Tokens: d.tokens, Tool: d.tool, Related: ix.relatedLocked(d)}
	}
	return hits
}

type scored struct {
	id    int32
	score float64
}

// Tuning of the query side, chosen on half of a public evaluation set
// and checked on the other half (see internal/evalsearch).
var (
	// pairWeight is what a run-together pair of query words adds.
	pairWeight = 0.5
	// coverWeight rewards a tool whose name the query covers: names are
	// short and chosen with care, so a query that says every word of
	// one (weighted by rarity) very likely means that tool.
	coverWeight = 1.0
)

// queryTerms weighs the query's terms: each word once per use, the pairs
// of adjacent words run together, the parts of a word the index only
// knows apart ("cosmosdb": cosmos, db), and the words it implies
// (synonyms of common operations) at a fraction of a word, never more
// than the word itself has.
func (ix *Index) queryTerms(text string) map[string]float64 {
	terms := ix.an.terms(text, nil, false)
	w := make(map[string]float64, len(terms)*2)
	for _, t := range terms {
		w[t]++
		if ix.df(t) == 0 {
			for i := 2; i <= len(t)-2; i++ {
				a, b := t[:i], ix.an.stem(t[i:], false)
				if ix.df(a) > 0 && ix.df(b) > 0 {
					w[a]++
					w[b]++
					break
				}
			}
		}
	}
	for _, p := range ix.an.pairs(text, nil, false) {
		w[p] += pairWeight
	}
	for _, t := range terms {
		for _, x := range ix.expansions(t) {
			if w[x.term] < x.weight {
				w[x.term] = x.weight
			}
		}
	}
	return w
}

// df is how many live docs have a term.
func (ix *Index) df(s string) int {
	if t := ix.terms[s]; t != nil {
		return t.df
	}
	return 0
}

func idf(df, n int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// bm25 scores every doc that has a query term with BM25F: the term's
// frequencies in each field, weighted and normalised by the field's
// length, are summed before saturation, so a word repeated across fields
// counts less than distinct words. The score is then raised by how much
// of the tool's name the query covers.
func (ix *Index) bm25(text string) map[int32]float64 {
	if ix.live == 0 {
		return nil
	}
	var avg [numFields]float64
	var norm [numFields]float64
	for f := range numFields {
		avg[f] = ix.fieldLen[f] / float64(ix.live)
		norm[f] = ix.opts.Weights.of(f)
	}
	k1 := ix.opts.K1
	scores := map[int32]float64{}
	qt := ix.queryTerms(text)
	// In a fixed order: floating-point sums in map order differ in the
	// last digits from run to run, and ties would swap places.
	inQuery := map[*term]bool{}
	for _, s := range slices.Sorted(maps.Keys(qt)) {
		qw := qt[s]
		term := ix.terms[s]
		if term == nil || term.df == 0 {
			continue
		}
		inQuery[term] = true
		idf := idf(term.df, ix.live)
		for _, p := range term.postings {
			if !ix.current(p) {
				continue
			}
			d := ix.docs[p.doc]
			var tf float64
			for f := range numFields {
				if c := p.tf[f]; c > 0 {
					b := lengthNorm[f]
					l := 1.0
					if avg[f] > 0 {
						l = 1 - b + b*d.lens[f]/avg[f]
					}
					tf += norm[f] * float64(c) / l
				}
			}
			scores[p.doc] += qw * idf * tf * (k1 + 1) / (tf + k1)
		}
	}
	if coverWeight > 0 {
		for id, s := range scores {
			var have, all float64
			d := ix.docs[id]
			for _, t := range d.terms[:d.names] {
				idf := idf(t.df, ix.live)
				all += idf
				if inQuery[t] {
					have += idf
				}
			}
			if all > 0 {
				scores[id] = s * (1 + coverWeight*have/all)
			}
		}
	}
	return scores
}

// rank sorts scores best first; ties go to the shorter name, then by
// name, so that results are stable.
func (ix *Index) rank(scores map[int32]float64, allow func(string) bool) []scored {
	out := make([]scored, 0, len(scores))
	for id, s := range scores {
		if allow != nil && !allow(ix.docs[id].key) {
			continue
		}
		out = append(out, scored{id, s})
	}
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		ka, kb := ix.docs[a.id].key, ix.docs[b.id].key
		return cmp.Or(cmp.Compare(len(ka), len(kb)), cmp.Compare(ka, kb))
	})
	return out
}

// twoStage keeps the tools of the best servers: a server is as good as
// its best tool plus a little for each other good one, so that a server
// with several matching tools outranks one lucky match.
func (ix *Index) twoStage(ranked []scored, servers int) []scored {
	type agg struct {
		best, rest float64
		n          int
	}
	by := map[string]*agg{}
	for _, r := range ranked {
		s := ix.docs[r.id].server
		a := by[s]
		if a == nil {
			a = &agg{best: r.score}
			by[s] = a
		} else if a.n < 3 {
			a.rest += r.score
		}
		a.n++
	}
	names := make([]string, 0, len(by))
	for s := range by {
		names = append(names, s)
	}
	score := func(s string) float64 { return by[s].best + 0.25*by[s].rest }
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(score(b), score(a)), cmp.Compare(a, b))
	})
	if len(names) > servers {
		names = names[:servers]
	}
	return slices.DeleteFunc(ranked, func(r scored) bool { return !slices.Contains(names, ix.docs[r.id].server) })
}

// rrfK is reciprocal rank fusion's constant, as its authors chose it.
const rrfK = 60

// fuse merges lexical and dense rankings by reciprocal rank: each list
// votes 1/(60+rank) for its tools. The fused score replaces BM25's.
func (ix *Index) fuse(lexical, dense []scored) []scored {
	votes := map[int32]float64{}
	for i, r := range lexical {
		if i == 100 {
			break
		}
		votes[r.id] += 1 / float64(rrfK+i+1)
	}
	for i, r := range dense {
		votes[r.id] += 1 / float64(rrfK+i+1)
	}
	return ix.rank(votes, nil)
}
