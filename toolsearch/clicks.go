package toolsearch

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// Learning from use. When a caller searches and then calls one of the
// tools the search returned, the words of its query are evidence for that
// tool: whoever says "jot this down" and then calls the notes tool has
// taught the index what "jot" means there, which no synonym list knew.
// Clicks keeps that evidence per tenant (one tenant's callers never change
// another's ranking), bounded in size and fading with time, and
// [Clicks.Search] re-ranks with it.
//
// The evidence of a term for a tool is the share of the term's clicks
// that went to the tool, with one imaginary click elsewhere, so that a
// single click counts for half and many for nearly all: P(tool | term) =
// clicks(term, tool) / (clicks(term) + 1). A query's evidence for a tool
// is the mean over its terms, so a query whose every word led there
// before counts fully, and one that shares a single word of five with
// such a query a fifth as much. A word that led to many tools ("list")
// says little for any of them.
//
// A tool's score rises by Weight times its evidence times the best hit's
// score, a scale of the query's own: by default a tool clicked once for
// the same words gains half the best score, enough to overtake lexical
// neighbours within that margin and no more; clicked again and again, a
// whole best score. Tools that the query does not match at all are added
// on evidence of at least minAddEvidence: it is how the learnt meaning of
// a word reaches a query that shares none with the tool, and it takes
// more than a stray word (see minAddEvidence).

// ClickOptions tune a [Clicks]; the zero value is good.
type ClickOptions struct {
	// Terms bounds the query terms remembered per tenant; zero means 4096.
	// Past it the weakest terms are forgotten.
	Terms int
	// ToolsPerTerm bounds the tools remembered per term; zero means 16.
	// Past it the weakest tool of the term is forgotten.
	ToolsPerTerm int
	// HalfLife is how long a click takes to count half as much; zero
	// means a week.
	HalfLife time.Duration
	// Weight is how far click evidence raises a tool: by at most Weight
	// times the best hit's score. Zero means 1.
	Weight float64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Clicks is a click model of an [Index]: per tenant, which query terms
// led to calls of which tools. It is safe for concurrent use.
type Clicks struct {
	ix   *Index
	opts ClickOptions

	mu      sync.Mutex
	tenants map[string]map[string]*termClicks // tenant → term → its clicks
}

// termClicks are one term's clicks, as of at: reading them later brings
// them up to date (see decay) first.
type termClicks struct {
	at    time.Time
	total float64
	tools []toolClicks // few (ToolsPerTerm): a scan beats a map
}

type toolClicks struct {
	name string
	w    float64
}

const (
	// minAddEvidence is the evidence on which a tool the query does not
	// match is added to its hits: every word of the query led there once
	// (0.5), or half of them twice and nowhere else (0.33); not one word
	// of three that led there once (0.17).
	minAddEvidence = 0.3
	// clickCandidates is how many hits are re-ranked: a clicked tool
	// further down is added on its evidence alone.
	clickCandidates = 50
	// maxClickTerms bounds the terms of one query that are recorded:
	// more say nothing new, and a long query must not sweep the model.
	maxClickTerms = 24
	// forgotten is the weight below which a click is dropped: a click
	// after seven half-lives.
	forgotten = 1.0 / 128
)

// NewClicks returns an empty click model for ix.
func NewClicks(ix *Index, opts *ClickOptions) *Clicks {
	c := &Clicks{ix: ix, tenants: map[string]map[string]*termClicks{}}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	o.Terms = cmp.Or(max(o.Terms, 0), 4096)
	o.ToolsPerTerm = cmp.Or(max(o.ToolsPerTerm, 0), 16)
	o.HalfLife = cmp.Or(max(o.HalfLife, 0), 7*24*time.Hour)
	if !(o.Weight > 0) {
		o.Weight = 1
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return c
}

// Record notes that a caller of tenant searched for query and then called
// tool, one of the hits, now.
func (c *Clicks) Record(tenant, query, tool string) {
	c.RecordAt(tenant, query, tool, c.opts.Now())
}

// RecordAt is [Clicks.Record] for a click made at at: replaying clicks
// that were stored gives the model that recording them live gave, in
// whatever order they come (but for the bounds, which forget the weakest
// of what is there when they fill). A click older than a term's latest
// counts for what it would weigh by then, not for a whole click; one
// older than [Clicks.Horizon] for nothing.
func (c *Clicks) RecordAt(tenant, query, tool string, at time.Time) {
	terms := c.terms(query)
	if len(terms) == 0 || tool == "" {
		return
	}
	now := c.opts.Now()
	if c.factor(at, now) < forgotten {
		return // live, it would have faded out by now
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.tenants[tenant]
	if m == nil {
		m = map[string]*termClicks{}
		c.tenants[tenant] = m
	}
	for _, t := range terms {
		tc := m[t]
		if tc == nil {
			if len(m) >= c.opts.Terms {
				c.forgetWeakest(m, later(now, at))
			}
			tc = &termClicks{at: at}
			m[t] = tc
		}
		if at.After(tc.at) {
			c.decay(tc, at)
		}
		// The term's weights are as of tc.at: an older click weighs what
		// it would have faded to by then.
		if w := c.factor(at, tc.at); w >= forgotten {
			c.add(tc, tool, w)
		}
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Horizon is how old a click may be and still count: seven half-lives,
// after which it weighs less than forgotten. Older clicks need not be
// kept, nor replayed.
func (c *Clicks) Horizon() time.Duration { return 7 * c.opts.HalfLife }

// add counts a click of weight w of tc's term on tool, forgetting the
// term's weakest tool if it has no room.
func (c *Clicks) add(tc *termClicks, tool string, w float64) {
	tc.total += w
	for i := range tc.tools {
		if tc.tools[i].name == tool {
			tc.tools[i].w += w
			return
		}
	}
	if len(tc.tools) >= c.opts.ToolsPerTerm {
		weakest := 0
		for i, x := range tc.tools {
			if x.w < tc.tools[weakest].w {
				weakest = i
			}
		}
		tc.total -= tc.tools[weakest].w
		tc.tools = slices.Delete(tc.tools, weakest, weakest+1)
	}
	tc.tools = append(tc.tools, toolClicks{tool, w})
}

// forgetWeakest drops the eighth of a tenant's terms with the least
// clicks now, so that a full model is swept once per Terms/8 new terms
// rather than for each.
func (c *Clicks) forgetWeakest(m map[string]*termClicks, now time.Time) {
	type kv struct {
		term  string
		total float64
	}
	all := make([]kv, 0, len(m))
	for t, tc := range m {
		all = append(all, kv{t, tc.total * c.factor(tc.at, now)})
	}
	slices.SortFunc(all, func(a, b kv) int { return cmp.Or(cmp.Compare(a.total, b.total), cmp.Compare(a.term, b.term)) })
	for _, x := range all[:max(1, len(all)/8)] {
		delete(m, x.term)
	}
}

// factor is what a weight of at is worth at now.
func (c *Clicks) factor(at, now time.Time) float64 {
	dt := now.Sub(at)
	if dt <= 0 {
		return 1
	}
	return math.Exp2(-float64(dt) / float64(c.opts.HalfLife))
}

// decay brings tc's weights up to now, dropping clicks too faint to
// matter.
func (c *Clicks) decay(tc *termClicks, now time.Time) {
	f := c.factor(tc.at, now)
	if f == 1 {
		return
	}
	tc.at = now
	tc.total = 0
	tc.tools = slices.DeleteFunc(tc.tools, func(x toolClicks) bool { return x.w*f < forgotten })
	for i := range tc.tools {
		tc.tools[i].w *= f
		tc.total += tc.tools[i].w
	}
}

// Reset forgets every click of tenant.
func (c *Clicks) Reset(tenant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tenants, tenant)
}

// evidence is, for each tool the terms of query led to, how strongly they
// did (see the top of the file): in (0, 1).
func (c *Clicks) evidence(tenant, query string) map[string]float64 {
	c.mu.Lock()
	empty := len(c.tenants[tenant]) == 0
	c.mu.Unlock()
	if empty {
		return nil // without analysing the query
	}
	terms := c.terms(query)
	if len(terms) == 0 {
		return nil
	}
	now := c.opts.Now()
	var ev map[string]float64
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.tenants[tenant]
	for _, t := range terms {
		tc := m[t]
		if tc == nil {
			continue
		}
		c.decay(tc, now)
		if len(tc.tools) == 0 {
			delete(m, t)
			continue
		}
		if ev == nil {
			ev = map[string]float64{}
		}
		for _, x := range tc.tools {
			ev[x.name] += x.w / (tc.total + 1) / float64(len(terms))
		}
	}
	return ev
}

// terms are the distinct terms of a query as the index analyses it, its
// values left out: a repository's or a file's name says which one, not
// which tool.
func (c *Clicks) terms(query string) []string {
	text, _ := queryValues(query, nil)
	c.ix.mu.RLock()
	terms := c.ix.an.terms(text, nil, false)
	c.ix.mu.RUnlock()
	slices.Sort(terms)
	terms = slices.Compact(terms)
	if len(terms) > maxClickTerms {
		terms = terms[:maxClickTerms]
	}
	return terms
}

// Search is [Index.Search] re-ranked with what tenant's clicks taught:
// see the top of the file.
func (c *Clicks) Search(ctx context.Context, tenant string, q Query) []Hit {
	ev := c.evidence(tenant, q.Text)
	if len(ev) == 0 {
		return c.ix.Search(ctx, q)
	}
	k := q.K
	if k <= 0 {
		k = 10
	}
	wide := q
	wide.K = max(k, clickCandidates)
	hits := c.ix.Search(ctx, wide)
	top := 1.0
	if len(hits) > 0 && hits[0].Score > 0 {
		top = hits[0].Score
	}
	servers := map[string]bool{} // with Query.Servers, the servers kept
	for i := range hits {
		servers[hits[i].Server] = true
		if e, ok := ev[hits[i].Name]; ok {
			hits[i].Score += c.opts.Weight * e * top
			delete(ev, hits[i].Name)
		}
	}
	// In a fixed order, for results that do not change from run to run.
	for _, name := range slices.Sorted(maps.Keys(ev)) {
		if e := ev[name]; e >= minAddEvidence && (q.Allow == nil || q.Allow(name)) {
			if h, ok := c.ix.hit(name); ok && (q.Servers <= 0 || servers[h.Server]) {
				h.Score = c.opts.Weight * e * top
				hits = append(hits, h)
			}
		}
	}
	// Stable: equal scores keep the index's order of ties.
	slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(k, len(hits))]
}

// hit is the hit of the tool indexed under name, unscored.
func (ix *Index) hit(name string) (Hit, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.byName[name]
	if !ok {
		return Hit{}, false
	}
	d := ix.docs[id]
	return Hit{Server: d.server, Name: d.key, Tokens: d.tokensOf(), Tool: d.tool, Related: ix.relatedLocked(d)}, true
}
