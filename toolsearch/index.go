package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

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
	postings map[string][]posting // term → docs that have it
	total    int                  // postings entries
	dead     int                  // postings entries of removed docs
	df       map[string]int       // live docs per term
	fieldLen [numFields]float64   // total length of each field over live docs
	live     int
	implied  map[string][]expansion // query term → terms it implies

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
	tokens  int      // estimated token cost of the full definition
	name    []string // the terms of the name field
	lens    [numFields]float64
	terms   map[string]*[numFields]uint16
}

type posting struct {
	doc int32
	gen uint32
	tf  *[numFields]uint16
}

// New returns an empty index.
func New(opts *Options) *Index {
	ix := &Index{
		an:       newAnalyzer(),
		byName:   map[string]int32{},
		byServer: map[string][]int32{},
		postings: map[string][]posting{},
		df:       map[string]int{},
		related:  newCoCalls(),
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
	ix.mu.Lock()
	defer ix.mu.Unlock()
	// removeLocked edits byServer[server] in place: walk a copy.
	for _, id := range slices.Clone(ix.byServer[server]) {
		ix.removeLocked(id)
	}
	delete(ix.byServer, server)
	ix.addEntriesLocked(entries, &server)
}

// Add indexes entries, replacing any with the same names.
func (ix *Index) Add(entries ...Entry) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.addEntriesLocked(entries, nil)
}

// addEntriesLocked indexes entries (under server, when set), each
// replacing any tool of the same name, whatever its server: the last one
// wins.
func (ix *Index) addEntriesLocked(entries []Entry, server *string) {
	built := make([]*doc, 0, len(entries))
	for i := range entries {
		e := entries[i]
		if server != nil {
			e.Server = *server
		}
		if e.Tool == nil {
			continue
		}
		d := ix.buildDoc(&e)
		if old, ok := ix.byName[d.key]; ok {
			ix.removeLocked(old)
		}
		ix.addLocked(d)
		built = append(built, d)
	}
	ix.compactLocked()
	if ix.vectors != nil {
		ix.vectors.want(built)
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
	ix.byServer[d.server] = append(ix.byServer[d.server], d.id)
	for t, tf := range d.terms {
		ix.postings[t] = append(ix.postings[t], posting{d.id, d.gen, tf})
		ix.df[t]++
	}
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
	for t := range d.terms {
		if ix.df[t]--; ix.df[t] <= 0 {
			delete(ix.df, t)
		}
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
	}
	ix.live--
}

// compactLocked drops the postings of removed docs once they are a
// quarter of the whole, so that a catalog that changes all day keeps its
// queries fast. A removed doc's id may already be reused: a posting
// belongs to a doc only if their generations match.
func (ix *Index) compactLocked() {
	if ix.dead == 0 || ix.dead*4 < ix.total {
		return
	}
	for t, ps := range ix.postings {
		ps = slices.DeleteFunc(ps, func(p posting) bool { return !ix.current(p) })
		if len(ps) == 0 {
			delete(ix.postings, t)
		} else {
			ix.postings[t] = ps
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

// buildDoc analyses an entry into its fields.
func (ix *Index) buildDoc(e *Entry) *doc {
	t := e.Tool
	d := &doc{key: cmp.Or(e.Name, t.Name), server: e.Server, tool: t, terms: map[string]*[numFields]uint16{}}
	meta, _ := t.Meta[MetaKey].(map[string]any)
	category := cmp.Or(e.Category, stringOf(meta["category"]))
	d.related = e.Related
	if len(d.related) == 0 {
		d.related = stringsOf(meta["related"])
	}
	keywords := e.Keywords
	if len(keywords) == 0 {
		keywords = stringsOf(meta["keywords"])
	}
	var buf []string
	count := func(f int, terms []string, length bool) {
		for _, term := range terms {
			tf := d.terms[term]
			if tf == nil {
				tf = new([numFields]uint16)
				d.terms[term] = tf
			}
			if tf[f] < math.MaxUint16 {
				tf[f]++
			}
		}
		if length {
			d.lens[f] += float64(len(terms))
		}
	}
	add := func(f int, text string) {
		buf = ix.an.terms(text, buf[:0], true)
		count(f, buf, true)
		if f <= fDescription {
			// Run-together pairs are extra evidence, not extra length.
			buf = ix.an.pairs(text, buf[:0], true)
			count(f, buf, false)
		}
	}
	name := stripServer(d.key, e.Server)
	add(fServer, e.Server)
	add(fName, name)
	// What the name abbreviates, spelt out by the tool's own text, is
	// part of the name: acr is "Azure Container Registry", kv "key-value".
	buf = ix.an.terms(strings.Join(spellOut(name, t.Title+" "+t.Description), " "), buf[:0], true)
	count(fName, buf, false)
	add(fTitle, t.Title)
	if t.Annotations != nil && t.Annotations.Title != t.Title {
		add(fTitle, t.Annotations.Title)
	}
	add(fSummary, summary(t.Description))
	add(fDescription, t.Description)
	forEachParam(t.InputSchema, func(name, desc string) {
		add(fParams, name)
		add(fParamDocs, desc)
	})
	add(fMeta, category)
	add(fMeta, strings.Join(keywords, " "))
	for term, tf := range d.terms {
		if tf[fName] > 0 {
			d.name = append(d.name, term)
		}
	}
	d.tokens = EstimateTokens(t)
	return d
}

// stripServer leaves out a gateway's server prefix from a published name,
// which the server field already holds.
func stripServer(name, server string) string {
	if server != "" && len(name) > len(server)+1 && strings.HasPrefix(name, server) {
		return name[len(server):]
	}
	return name
}

// summary is the first sentence of a description: what the tool does,
// before the details of how.
func summary(desc string) string {
	desc = strings.TrimSpace(desc)
	for i := 0; i < len(desc); i++ {
		switch desc[i] {
		case '\n':
			return desc[:i]
		case '.', '!', '?':
			if i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\n' || desc[i+1] == '\r' {
				return desc[:i]
			}
		}
	}
	return desc
}

// forEachParam walks the top-level properties of an input schema, in a
// stable order.
func forEachParam(schema any, f func(name, desc string)) {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		p, _ := props[k].(map[string]any)
		desc, _ := p["description"].(string)
		f(k, desc)
	}
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}

func stringsOf(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case string:
		return []string{v}
	}
	return nil
}
