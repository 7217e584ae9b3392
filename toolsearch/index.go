package toolsearch

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpgate/mcpgate/mcp"
)

// Index is a search index of tools, safe for concurrent use: searches run
// in parallel, and updates (a whole server's tools at a time, as an
// upstream's tools/list changes) take a short write lock.
type Index struct {
	opts Options

	mu       sync.RWMutex
	an       *analyzer
	docs     []*doc           // by id; nil once removed
	free     []int32          // ids of removed docs, for reuse
	gen      uint32           // tells a reused id's doc from the removed one
	byName   map[string]int32 // key → id
	byServer map[string][]int32
	// serverParts are the servers each word of a name names (see
	// namedServers).
	serverParts map[string][]string
	terms       map[string]*term   // the vocabulary, with each term's postings
	total       int                // postings entries
	dead        int                // postings entries of removed docs
	fieldLen    [numFields]float64 // total length of each field over live docs
	live        int
	implied     map[string][]expansion // query term → terms it implies

	related *coCalls
	vectors *vectorSet
}

// Options tune an Index; the zero value is good.
type Options struct {
	// Weights of each field; zero fields take the defaults.
	Weights Weights
	// K1 is BM25's term-frequency saturation; zero means 1.2.
	K1 float64
	// Embedder, when set, adds dense retrieval fused with BM25. The
	// index keeps answering with BM25 alone while it is absent, slow or
	// down.
	Embedder Embedder
	// NoBridges are the lexical bridges left out (see [Bridge]); zero
	// means all are used. For measuring what each buys.
	NoBridges Bridge
	// Feedback turns on pseudo-relevance feedback: a second ranking
	// with the words the first's best tools share. Off by default: it
	// lowered recall on every set measured (see bridges.go).
	Feedback bool
}

// Weights are the BM25F weights of a tool's fields.
type Weights struct {
	Server, Name, Title, Summary, Description, Params, ParamDocs, Meta float64
}

// DefaultWeights favour the words a tool's author chose most carefully:
// its name and title, then the first sentence of its description.
var DefaultWeights = Weights{
	Server: 1.5, Name: 3, Title: 2, Summary: 2, Description: 0.5, Params: 0.8, ParamDocs: 0.4, Meta: 1.5,
}

const (
	fServer = iota
	fName
	fTitle
	fSummary
	fDescription
	fParams
	fParamDocs
	fMeta
	numFields
)

// lengthNorm is BM25F's b per field: long free text is normalised by its
// length, short labels barely.
var lengthNorm = [numFields]float64{0.3, 0.3, 0.3, 0.5, 0.75, 0.5, 0.75, 0.5}

// Entry is one tool to index.
type Entry struct {
	// Server is the server that owns the tool.
	Server string
	// Name is the key of the tool in the index and in hits: the tool's
	// name as the caller of the index knows it (a gateway's published
	// name). Empty means Tool.Name.
	Name string
	// Tool is the definition, kept as it is and returned with hits.
	Tool *mcp.Tool
	// Category and Related are configured metadata; Keywords are extra
	// words to find the tool by. Empty ones are read from the tool's
	// _meta[MetaKey] (category, related, keywords).
	Category string
	Related  []string
	Keywords []string
}

// MetaKey is the _meta key of configured tool metadata (category,
// related tools, keywords), as a gateway publishes it.
const MetaKey = "io.mcpgate/tool"

type doc struct {
	id      int32
	gen     uint32
	key     string
	server  string
	tool    *mcp.Tool
	related []string
	// tokens is the estimated token cost of the full definition, plus
	// one; zero until tokensOf first estimates it.
	tokens atomic.Int32
	lens   [numFields]float64
	// terms are the doc's terms, those of its name first; a doc points
	// at the index's terms rather than naming them, so that scoring a
	// name and removing a doc look nothing up.
	terms []*term
	names int // terms[:names] are the terms of the name field
	// params are the parameters that take a kind of value a query may
	// carry (see fit), at most maxParams; required counts every
	// required parameter.
	params   []param
	required int
	// freqs are the term frequencies from analysis, until the doc is
	// added.
	freqs []termFreq
}

// term is one term of the vocabulary: how many live docs have it, and
// which docs had it (some perhaps removed since).
type term struct {
	name     string // the stem, for feedback (see feedbackTerms)
	df       int
	postings []posting
	// dropped says compaction took the term out of the vocabulary: a
	// doc analysed before may point at it still (see lookUp).
	dropped bool
}

type termFreq struct {
	term string
	t    *term // the term in the vocabulary, when it was there already
	tf   [numFields]uint16
}

// posting holds its term's frequencies in each field inline: scoring
// reads them for every doc of a term, and a pointer would cost a cache
// miss each.
type posting struct {
	doc int32
	gen uint32
	tf  [numFields]uint16
}

// New returns an empty index.
func New(opts *Options) *Index {
	ix := &Index{
		an:          newAnalyzer(),
		byName:      map[string]int32{},
		byServer:    map[string][]int32{},
		serverParts: map[string][]string{},
		terms:       map[string]*term{},
		related:     newCoCalls(),
	}

	if opts != nil {
		ix.opts = *opts
	}
	w := &ix.opts.Weights
	d := DefaultWeights
	for _, p := range []struct{ v, def *float64 }{
		{&w.Server, &d.Server}, {&w.Name, &d.Name}, {&w.Title, &d.Title}, {&w.Summary, &d.Summary},
		{&w.Description, &d.Description}, {&w.Params, &d.Params}, {&w.ParamDocs, &d.ParamDocs}, {&w.Meta, &d.Meta},
	} {
		if *p.v == 0 {
			*p.v = *p.def
		}
	}
	ix.buildImplied()
	if ix.opts.K1 == 0 {
		ix.opts.K1 = 1.2
	}
	if ix.opts.Embedder != nil {
		ix.vectors = newVectorSet(ix.opts.Embedder)
	}
	return ix
}

func (w *Weights) of(f int) float64 {
	return [numFields]float64{w.Server, w.Name, w.Title, w.Summary, w.Description, w.Params, w.ParamDocs, w.Meta}[f]
}

// SetServer replaces every tool of server with entries (none removes the
// server). Entries' Server fields are set to server.
func (ix *Index) SetServer(server string, entries []Entry) {
	docs, learnt := ix.analyzeEntries(entries, &server)
	ix.an.mu.Lock()
	defer ix.an.mu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, l := range learnt {
		ix.an.merge(l)
	}
	// removeLocked edits byServer[server] in place: walk a copy.
	for _, id := range slices.Clone(ix.byServer[server]) {
		ix.removeLocked(id)
	}
	delete(ix.byServer, server)
	ix.addDocsLocked(docs)
}

// Add indexes entries, replacing any with the same names.
func (ix *Index) Add(entries ...Entry) {
	docs, learnt := ix.analyzeEntries(entries, nil)
	ix.an.mu.Lock()
	defer ix.an.mu.Unlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, l := range learnt {
		ix.an.merge(l)
	}
	ix.addDocsLocked(docs)
}

// analyzeEntries builds the docs of entries (under server, when set),
// leaving out those without a tool. It runs outside the index's lock, so
// that searches go on meanwhile, on every core for a batch large enough
// (analysis is most of the work of an update), and returns the words each
// core learnt apart.
func (ix *Index) analyzeEntries(entries []Entry, server *string) ([]*doc, []map[string]word) {
	ix.an.mu.RLock()
	defer ix.an.mu.RUnlock()
	docs := make([]*doc, len(entries))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(entries)/entriesPerWorker))
	learnt := make([]map[string]word, workers)
	analyze := func(w int) {
		c := scratch.Get().(*docFreqs)
		defer scratch.Put(c)
		c.lx = ix.an.learner()
		for i := w; i < len(entries); i += workers {
			e := entries[i]
			if server != nil {
				e.Server = *server
			}
			if e.Tool != nil {
				docs[i] = buildDoc(&e, c)
			}
		}
		learnt[w] = c.lx.learnt
		c.lx = lexicon{}
		ix.lookUp(docs[w:], workers)
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Go(func() { analyze(w) })
	}
	analyze(0)
	wg.Wait()
	return slices.DeleteFunc(docs, func(d *doc) bool { return d == nil }), learnt
}

// lookUp finds the terms of every step-th doc that are in the vocabulary
// already, most of them, under the read lock: a lookup less for each
// under the write lock, which searches wait for.
func (ix *Index) lookUp(docs []*doc, step int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for i := 0; i < len(docs); i += step {
		if d := docs[i]; d != nil {
			for j := range d.freqs {
				d.freqs[j].t = ix.terms[d.freqs[j].term]
			}
		}
	}
}

// scratch keeps docFreqs from one batch to the next: most batches are
// small, and their scratch would be most of what they allocate.
var scratch = sync.Pool{New: func() any { return &docFreqs{at: map[string]int{}} }}

// entriesPerWorker is the fewest entries worth another core: a tool takes
// tens of microseconds to analyse, a goroutine one to start.
const entriesPerWorker = 8

// addDocsLocked indexes docs, each replacing any tool of the same name,
// whatever its server: the last one wins.
func (ix *Index) addDocsLocked(docs []*doc) {
	for _, d := range docs {
		if old, ok := ix.byName[d.key]; ok {
			ix.removeLocked(old)
		}
		ix.addLocked(d)
	}
	ix.compactLocked()
	if ix.vectors != nil {
		ix.vectors.want(docs)
	}
}

// Len is the number of tools indexed.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.live
}

// Tool returns the entry indexed under name.
func (ix *Index) Tool(name string) (server string, t *mcp.Tool, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	id, ok := ix.byName[name]
	if !ok {
		return "", nil, false
	}
	d := ix.docs[id]
	return d.server, d.tool, true
}

func (ix *Index) addLocked(d *doc) {
	if n := len(ix.free); n > 0 {
		d.id = ix.free[n-1]
		ix.free = ix.free[:n-1]
		ix.docs[d.id] = d
	} else {
		d.id = int32(len(ix.docs))
		ix.docs = append(ix.docs, d)
	}
	ix.gen++
	d.gen = ix.gen
	ix.byName[d.key] = d.id
	if len(ix.byServer[d.server]) == 0 {
		for _, p := range nameParts(d.server) {
			ix.serverParts[p] = append(ix.serverParts[p], d.server)
		}
	}
	ix.byServer[d.server] = append(ix.byServer[d.server], d.id)
	d.terms = make([]*term, len(d.freqs))
	for i, f := range d.freqs {
		t := f.t
		if t == nil || t.dropped {
			t = ix.terms[f.term]
		}
		if t == nil {
			t = &term{name: f.term}
			ix.terms[f.term] = t
		}
		t.df++
		t.postings = append(t.postings, posting{d.id, d.gen, f.tf})
		d.terms[i] = t
	}
	d.freqs = nil
	ix.total += len(d.terms)
	for f := range numFields {
		ix.fieldLen[f] += d.lens[f]
	}
	ix.live++
}

func (ix *Index) removeLocked(id int32) {
	d := ix.docs[id]
	if d == nil {
		return
	}
	for _, t := range d.terms {
		t.df--
	}
	for f := range numFields {
		ix.fieldLen[f] -= d.lens[f]
	}
	ix.dead += len(d.terms)
	ix.docs[id] = nil
	ix.free = append(ix.free, id)
	if ix.byName[d.key] == id {
		delete(ix.byName, d.key)
	}
	if ids := ix.byServer[d.server]; ids != nil {
		ix.byServer[d.server] = slices.DeleteFunc(ids, func(x int32) bool { return x == id })
		if len(ix.byServer[d.server]) == 0 {
			delete(ix.byServer, d.server)
			for _, p := range nameParts(d.server) {
				ix.serverParts[p] = slices.DeleteFunc(ix.serverParts[p], func(s string) bool { return s == d.server })
				if len(ix.serverParts[p]) == 0 {
					delete(ix.serverParts, p)
				}
			}
		}
	}
	ix.live--
}

// compactLocked drops the postings of removed docs once they are a
// quarter of the whole, and the terms no doc has any more, so that a
// catalog that changes all day keeps its queries fast and its vocabulary
// bounded. A removed doc's id may already be reused: a posting belongs
// to a doc only if their generations match.
func (ix *Index) compactLocked() {
	if ix.dead == 0 || ix.dead*4 < ix.total {
		return
	}
	for s, t := range ix.terms {
		t.postings = slices.DeleteFunc(t.postings, func(p posting) bool { return !ix.current(p) })
		if len(t.postings) == 0 {
			delete(ix.terms, s)
			t.dropped = true
		}
	}
	ix.total -= ix.dead
	ix.dead = 0
}

// current says whether a posting is of a live doc.
func (ix *Index) current(p posting) bool {
	d := ix.docs[p.doc]
	return d != nil && d.gen == p.gen
}
