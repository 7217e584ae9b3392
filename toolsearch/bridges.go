package toolsearch

import (
	_ "embed"
	"strings"

	wn "github.com/mcpgate/mcpgate/toolsearch/lexicon"
)

// Lexical bridges: words a query does not say but means. People ask in
// their own words ("jot this down", "make the picture smaller"); tools
// are described in their authors'. Each bridge adds terms to a query at
// a fraction of a word's weight, so that a tool using the query's own
// words still ranks first.

// A Bridge is one way of adding what a query means to what it says.
type Bridge uint

const (
	// BridgeWordNet adds each query word's base form and its related
	// words from WordNet 3.0 (toolsearch/lexicon): synonyms of its
	// common senses, derivations (deletion, delete), and for a verb what
	// it is a kind of (delete is a kind of remove).
	BridgeWordNet Bridge = 1 << iota
	// BridgeDomain adds the other names of a software term from a
	// curated map ([domainTerms]: pr and pull request, k8s and
	// kubernetes, repo and repository).
	BridgeDomain
)

// Weights of the terms each bridge adds, against a query word's 1.
var (
	baseWeight       = 0.9 // an irregular form's base ("ran": run)
	synonymWeight    = 0.3
	derivationWeight = 0.5
	hypernymWeight   = 0.2
	domainWeight     = 0.8 // curated: nearly the word itself
	// knownWordScale scales the related words of a query word that the
	// index has itself.
	knownWordScale = 0.3
)

// maxRelatedPerWord bounds the related words one query word adds: the
// first (most common senses first) that the index has at all.
const maxRelatedPerWord = 8

// wordNetTerms adds to w the terms WordNet relates to each of the
// query's words (not stop words) that the index has.
func (ix *Index) wordNetTerms(tx *analysis, w map[string]float64) {
	for i, word := range tx.words {
		if tx.info[i].stop || !alpha(word) {
			continue
		}
		if b := wn.Base(word); b != word {
			ix.bridge(w, b, baseWeight)
		}
		// A word the catalog uses says what it means there; its
		// relatives count for less. A word it does not use can only be
		// found through them.
		scale := 1.0
		if ix.df(tx.info[i].stem) > 0 {
			scale = knownWordScale
		}
		n := 0
		for _, r := range wn.Related(word) {
			if n == maxRelatedPerWord {
				break
			}
			weight := synonymWeight
			switch r.Kind {
			case wn.Derivation:
				weight = derivationWeight
			case wn.Hypernym:
				weight = hypernymWeight
			}
			if ix.bridge(w, r.Word, weight*scale) {
				n++
			}
		}
	}
}

// bridge gives the stem of word at least weight in w, when the index has
// it, and reports whether it does.
func (ix *Index) bridge(w map[string]float64, word string, weight float64) bool {
	s := ix.an.stem(word, false)
	if ix.df(s) == 0 {
		return false
	}
	if w[s] < weight {
		w[s] = weight
	}
	return true
}

//go:embed domain.txt
var domainText string

// domainTerms are the curated software terms: for each word or two-word
// phrase (its words joined by a space), the words tools use for it.
var domainTerms = parseDomain(domainText)

// parseDomain reads domain.txt: a line per term, "TERM: WORDS"; #
// starts a comment.
func parseDomain(text string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		term, words, ok := strings.Cut(line, ":")
		term = strings.Join(strings.Fields(strings.ToLower(term)), " ")
		if !ok || term == "" {
			continue
		}
		out[term] = append(out[term], strings.Fields(strings.ToLower(words))...)
	}
	return out
}

// domainTermsOf adds to w the words of the other names of each word and
// each pair of adjacent words of the query that the map knows.
func (ix *Index) domainTermsOf(tx *analysis, w map[string]float64) {
	for i, word := range tx.words {
		for _, o := range domainTerms[word] {
			ix.bridge(w, o, domainWeight)
		}
		if i+1 < len(tx.words) {
			for _, o := range domainTerms[word+" "+tx.words[i+1]] {
				ix.bridge(w, o, domainWeight)
			}
		}
	}
}
