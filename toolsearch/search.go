package toolsearch

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/mcpgate/mcpgate/mcp"
)

// Query is one search.
type Query struct {
	// Text is what the caller is looking for, in its own words. Only its
	// first [MaxQueryLen] characters are read.
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

// MaxQueryLen is how many characters of [Query.Text] a search reads.
// What people ask an assistant for fits in far fewer; the bound keeps a
// hostile or runaway query (megabytes of text) from costing seconds of
// analysis: a search's cost grows with its words.
const MaxQueryLen = 4096

// clipQuery returns text's first MaxQueryLen characters, cut at the last
// space within them so that no word is cut in two.
func clipQuery(text string) string {
	if len(text) <= MaxQueryLen {
		return text // bytes bound characters
	}
	n := 0
	for i := range text {
		if n == MaxQueryLen {
			if j := strings.LastIndexAny(text[:i], " \t\n"); j > 0 {
				return text[:j]
			}
			return text[:i]
		}
		n++
	}
	return text
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
	q.Text = clipQuery(q.Text)
	var qvec []float32
	if ix.vectors != nil && q.Text != "" {
		qvec = ix.vectors.query(ctx, q.Text)
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	acc := getAccum(len(ix.docs))
	defer acc.release()
	// Candidates stay unordered until the end: ordering them all would
	// cost more than scoring them.
	cands := ix.bm25(q.Text, acc)
	allow := q.Allow
	if qvec != nil {
		cands = ix.fuse(ix.best(cands, allow, 100), ix.vectors.nearest(qvec, ix.docs, allow, 100))
		allow = nil
	}
	if q.Servers > 0 {
		cands = ix.twoStage(ix.allowed(cands, allow), q.Servers)
		allow = nil
	}
	ranked := ix.best(cands, allow, k)
	hits := make([]Hit, len(ranked))
	for i, r := range ranked {
		d := ix.docs[r.id]
		hits[i] = Hit{Server: d.server, Name: d.key, Score: r.score, Tokens: d.tokensOf(), Tool: d.tool, Related: ix.relatedLocked(d)}
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
	// kindWordWeight is what the words of a query value's kind get (see
	// kindWords): implied, as operations are (see operationWeight).
	kindWordWeight = 0.3
	// fitWeight rewards a tool whose parameters take the query's values
	// (see fit), as coverWeight one whose name it says.
	fitWeight = 0.5
)

// queryTerms weighs the query's terms: each word once per use, the pairs
// of adjacent words run together, the parts of a word the index only
// knows apart ("cosmosdb": cosmos, db), and the words it implies
// (synonyms of common operations) at a fraction of a word, never more
// than the word itself has. The query's values (see queryValues) are not
// in text, blanked out: each stands for the parameters that take its
// kind, and implies the words of its kind.
//
// It also returns the terms that only filter (see participleFilter): they
// count in the score, but not as covering a tool's name.
func (ix *Index) queryTerms(text string, values []value, named map[string]bool) (map[string]float64, map[string]bool) {
	rest, quoted := splitQuoted(text)
	rest = negations.Replace(rest)
	var tx analysis
	ix.an.lexicon(false).analyze(rest, true, &tx)
	if len(tx.terms) == 0 {
		// All quotes: the quotes are what the query says.
		ix.an.lexicon(false).analyze(text, true, &tx)
		quoted = ""
	}
	terms := tx.terms
	w := make(map[string]float64, len(terms)*2)
	var filters map[string]bool
	for i, x := range tx.info {
		if x.stop {
			continue
		}
		t := x.stem
		if participleFilter(&tx, i) {
			if _, said := w[t]; !said {
				if filters == nil {
					filters = map[string]bool{}
				}
				filters[t] = true
			}
			w[t] += participleWeight
			continue
		}
		delete(filters, t)
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
	for _, p := range tx.pairs {
		w[p] += pairWeight
	}
	for _, t := range terms {
		for _, x := range ix.expansions(t) {
			if w[x.term] < x.weight {
				w[x.term] = x.weight
			}
		}
	}
	var lists []curated
	if ix.opts.NoBridges&BridgeDomain == 0 {
		lists = append(lists, curated{domainTerms(), domainWeight})
	}
	if ix.opts.NoBridges&BridgeEveryday == 0 {
		lists = append(lists, curated{everydayTerms(), everydayWeight})
	}
	ix.curatedTermsOf(&tx, w, lists, named)
	if ix.opts.NoBridges&BridgeWordNet == 0 {
		ix.wordNetTerms(&tx, w)
	}
	if quoted != "" {
		var qx analysis
		ix.an.lexicon(false).analyze(quoted, false, &qx)
		for _, t := range qx.terms {
			w[t] += quotedWeight
		}
	}
	for _, v := range values {
		for _, kw := range kindWords[v.kind] {
			if s := ix.an.stem(kw, false); w[s] < kindWordWeight {
				w[s] = kindWordWeight
			}
		}
	}
	return w, filters
}

// negations joins a negated verb into one word, as people also type it
// ("won't start": wont start), so that the curated lists can name it;
// split at its apostrophe it would be "won" and "t".
var negations = strings.NewReplacer("n't", "nt", "n’t", "nt", "N'T", "NT", "N’T", "NT")

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
// of the tool's name the query covers. It returns the docs scored, in no
// particular order.
func (ix *Index) bm25(text string, acc *accum) []scored {
	if ix.live == 0 {
		return nil
	}
	// A value is not a word: a path's "dev" does not name shopify-dev.
	rest, values := queryValues(text, nil)
	named := ix.namedServers(rest)
	qt, filters := ix.queryTerms(rest, values, named)
	in := ix.intentOf(text, qt, named)
	in.filters = filters
	out := ix.score(qt, values, in, acc)
	if ix.opts.Feedback && ix.feedbackTermsOf(out, qt) {
		acc.reset()
		out = ix.score(qt, values, in, acc)
	}
	return out
}

// score is bm25 for weighed query terms and values, with what the query
// asks for beyond its words (see intent).
func (ix *Index) score(qt map[string]float64, values []value, in intent, acc *accum) []scored {
	var avg [numFields]float64
	var norm [numFields]float64
	for f := range numFields {
		avg[f] = ix.fieldLen[f] / float64(ix.live)
		norm[f] = ix.opts.Weights.of(f)
	}
	k1 := ix.opts.K1
	// In a fixed order: floating-point sums in map order differ in the
	// last digits from run to run, and ties would swap places.
	for _, s := range slices.Sorted(maps.Keys(qt)) {
		qw := qt[s]
		term := ix.terms[s]
		if term == nil || term.df == 0 {
			continue
		}
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
			acc.add(p.doc, qw*idf*tf*(k1+1)/(tf+k1))
			if p.tf[fName] > 0 && !in.filters[s] {
				acc.have[p.doc] += idf
			}
		}
	}
	in.apply(ix, acc)
	out := acc.out[:0]
	for _, id := range acc.ids {
		s := acc.score[id]
		// A doc whose name has no query term keeps its score as it is
		// (times 1): only the others need their name's whole weight.
		if have := acc.have[id]; coverWeight > 0 && have > 0 {
			var all float64
			d := ix.docs[id]
			for _, t := range d.terms[:d.names] {
				all += idf(t.df, ix.live)
			}
			s *= 1 + coverWeight*have/all
		}
		if len(values) > 0 {
			d := ix.docs[id]
			s *= 1 + fitWeight*fit(values[:min(len(values), maxValues)], d.params, d.required)
		}
		out = append(out, scored{id, s})
	}
	acc.out = out
	return out
}
