package toolsearch

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// A tool becomes a doc of the index: its fields (see Weights) analysed
// into terms, with each term's frequency in each field and each field's
// length, and the parameters a query's values may fit.

// docFreqs counts a doc's terms as it is analysed; kept from one doc to
// the next, so that its map and slices are allocated once.
type docFreqs struct {
	lx   lexicon
	at   map[string]int // term → index in list
	list []termFreq
	lens [numFields]float64
	// Scratch: a text's analysis, the title's and the description's,
	// and words.
	text, title, desc analysis
	words, text2      []string
}

func (c *docFreqs) reset() {
	clear(c.at)
	c.list = c.list[:0]
	c.lens = [numFields]float64{}
}

// count adds terms to field f; length says whether they count in the
// field's length.
func (c *docFreqs) count(f int, terms []string, length bool) {
	for _, term := range terms {
		i, ok := c.at[term]
		if !ok {
			i = len(c.list)
			c.at[term] = i
			c.list = append(c.list, termFreq{term: term})
		}
		if tf := &c.list[i].tf; tf[f] < math.MaxUint16 {
			tf[f]++
		}
	}
	if length {
		c.lens[f] += float64(len(terms))
	}
}

// freqs returns the counted terms, those of the name first.
func (c *docFreqs) freqs() (list []termFreq, names int) {
	list = make([]termFreq, 0, len(c.list))
	for _, x := range c.list {
		if x.tf[fName] > 0 {
			list = append(list, x)
		}
	}
	names = len(list)
	for _, x := range c.list {
		if x.tf[fName] == 0 {
			list = append(list, x)
		}
	}
	return list, names
}

// buildDoc analyses an entry into its fields, with c as scratch and c.lx
// to look words up.
func buildDoc(e *Entry, c *docFreqs) *doc {
	t := e.Tool
	d := &doc{key: cmp.Or(e.Name, t.Name), server: e.Server, tool: t}
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
	c.reset()
	tx := &c.text
	// Run-together pairs are extra evidence, not extra length.
	counts := func(f int, terms, pairs []string) {
		c.count(f, terms, true)
		c.count(f, pairs, false)
	}
	add := func(f int, s string) {
		c.lx.analyze(s, f <= fDescription, tx)
		counts(f, tx.terms, tx.pairs)
	}
	name := stripServer(d.key, e.Server)
	add(fServer, e.Server)
	add(fName, name)
	// The title and the description are analysed once for spellOut, the
	// summary and themselves.
	c.lx.analyze(t.Title, true, &c.title)
	c.lx.analyze(t.Description, true, &c.desc)
	// What the name abbreviates, spelt out by the tool's own text, is
	// part of the name: acr is "Azure Container Registry", kv "key-value".
	c.text2 = append(append(c.text2[:0], c.title.words...), c.desc.words...)
	c.words = words(name, c.words[:0])
	c.lx.analyze(strings.Join(spellOutWords(c.words, c.text2), " "), false, tx)
	c.count(fName, tx.terms, false)
	counts(fTitle, c.title.terms, c.title.pairs)
	if t.Annotations != nil && t.Annotations.Title != t.Title {
		add(fTitle, t.Annotations.Title)
	}
	// The summary's words are the description's first (it ends at a
	// mark that ends a word too): checked, as it costs little.
	sum := summary(t.Description)
	c.words = words(sum, c.words[:0])
	if n := len(c.words); n <= len(c.desc.words) && slices.Equal(c.words, c.desc.words[:n]) {
		terms, pairs := c.desc.prefix(n)
		counts(fSummary, terms, pairs)
	} else {
		add(fSummary, sum)
	}
	counts(fDescription, c.desc.terms, c.desc.pairs)
	required := requiredOf(t.InputSchema)
	d.required = len(required)
	forEachParam(t.InputSchema, func(name string, schema map[string]any) {
		add(fParams, name)
		if p := paramOf(tx.words, schema); (p.kinds != 0 || p.shapes != nil) && len(d.params) < maxParams {
			p.required = slices.Contains(required, name)
			d.params = append(d.params, p)
		}
		add(fParamDocs, stringOf(schema["description"]))
	})
	add(fMeta, category)
	add(fMeta, strings.Join(keywords, " "))
	d.freqs, d.names = c.freqs()
	d.lens = c.lens
	return d
}

// tokensOf is d's estimated token cost. It is estimated the first time it
// is asked for, not as d is built: the estimate marshals the whole
// definition, a fifth of the work of building a doc, and most tools of a
// large catalog are never a hit. Searches may race to store it; either
// estimate will do.
func (d *doc) tokensOf() int {
	if n := d.tokens.Load(); n > 0 {
		return int(n - 1)
	}
	n := EstimateTokens(d.tool)
	d.tokens.Store(int32(min(n, math.MaxInt32-1) + 1))
	return n
}

// stripServer leaves out a gateway's server prefix from a published name,
// which the server field already holds: a whole word of it only, so that
// server "s" leaves "start_job" as it is.
func stripServer(name, server string) string {
	if server != "" && len(name) > len(server)+1 && strings.HasPrefix(name, server) && !isLowerAlnum(name[len(server)]) {
		return name[len(server):]
	}
	return name
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || isDigit(c) }

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

// requiredOf returns the names of the required properties of a schema.
func requiredOf(schema any) []string {
	m, _ := schema.(map[string]any)
	return stringsOf(m["required"])
}

// forEachParam walks the top-level properties of an input schema, in a
// stable order, with each one's schema.
func forEachParam(schema any, f func(name string, p map[string]any)) {
	m, _ := schema.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		p, _ := props[k].(map[string]any)
		f(k, p)
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
