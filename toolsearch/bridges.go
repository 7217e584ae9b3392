package toolsearch

import (
	"cmp"
	_ "embed"
	"slices"
	"strings"
	"sync"

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
	// BridgeEveryday adds the words tools use for everyday words and
	// phrases ([everydayTerms]: jot down and note, how big and size,
	// get rid of and delete), at a lower weight than the software map.
	BridgeEveryday
)

// Weights of the terms each bridge adds, against a query word's 1.
var (
	baseWeight       = 0.9 // an irregular form's base ("ran": run)
	synonymWeight    = 0.3
	derivationWeight = 0.5
	hypernymWeight   = 0.2
	domainWeight     = 0.8 // curated: nearly the word itself
	// everydayWeight is below domainWeight: the everyday list is broad
	// and a word in it may have a second sense. Measured on the dev
	// half (Recall@1 / @5) with the list's first two rounds: 0.3 0.378 /
	// 0.594, 0.4 0.372 / 0.594, 0.5 0.378 / 0.600, 0.6 0.378 / 0.594, 0.8
	// 0.383 / 0.594.
	everydayWeight = 0.5
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
		// A participle that filters is not bridged: its base would
		// bring back the operation it does not ask for.
		if tx.info[i].stop || !alpha(word) || participleFilter(tx, i) {
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
// phrase (its words joined by a space), the words tools use for it. The
// lists are read on first search, not when a program starts: a program
// that links toolsearch and never searches pays nothing (the everyday
// list takes about a millisecond).
var domainTerms = sync.OnceValue(func() map[string][]string { return parseDomain(domainText) })

//go:embed everyday.txt
var everydayText string

// everydayTerms are everyday words and phrases for what tools do, in the
// format of domain.txt, written without sight of any evaluation query.
var everydayTerms = sync.OnceValue(func() map[string][]string { return parseDomain(everydayText) })

// parseDomain reads domain.txt: a line per term, "TERM: WORDS"; #
// starts a comment. Both sides are split into words as a query is, so
// that a term written "to-do" is met by the words "to do" that a query
// saying it is read as.
func parseDomain(text string) map[string][]string {
	out := map[string][]string{}
	for line := range strings.Lines(text) {
		line, _, _ = strings.Cut(line, "#")
		term, targets, ok := strings.Cut(line, ":")
		term = strings.Join(words(term, nil), " ")
		if !ok || term == "" {
			continue
		}
		out[term] = append(out[term], words(targets, nil)...)
	}
	return out
}

// curated is a curated list of terms and the weight of the words it
// gives.
type curated struct {
	terms  map[string][]string
	weight float64
}

// curatedTermsOf adds to w the words that each list gives, at its
// weight, for each word and each pair of adjacent words of the query. A
// word and a pair's first word are also looked up by their base form,
// and a pronoun may come between a pair's words, so that a phrasal verb
// is known however it is said: "spun up", "setting it up". One walk of
// the query serves every list.
//
// A list may give the names of products for the kind of service a query
// means ("chat": slack, teams). When the query names its servers
// (named), a word that names only others is not added: "merge it on
// GitHub once the pipeline is green" must not bring in GitLab's tools
// for "pipeline".
func (ix *Index) curatedTermsOf(tx *analysis, w map[string]float64, lists []curated, named map[string]bool) {
	if len(lists) == 0 {
		return
	}
	add := func(term string) {
		for _, l := range lists {
			for _, o := range l.terms[term] {
				if named == nil || !ix.namesOnlyOthers(o, named) {
					ix.bridge(w, o, l.weight)
				}
			}
		}
	}
	ws := tx.words
	for i, word := range ws {
		base := word
		if alpha(word) {
			base = wn.Base(word)
		}
		if !tx.info[i].stop {
			add(word)
			if base != word {
				add(base)
			}
		}
		for j := i + 1; j < len(ws) && j <= i+2; j++ {
			if j == i+2 && !objectPronouns[ws[i+1]] {
				break
			}
			add(word + " " + ws[j])
			if base != word {
				add(base + " " + ws[j])
			}
		}
	}
}

// namesOnlyOthers reports whether word is the product a server is named
// after (see productOf) and names none of those in named. A later word
// of a name says what the server does ("chart" of antv-chart) and may
// mean just that.
func (ix *Index) namesOnlyOthers(word string, named map[string]bool) bool {
	product := false
	for _, s := range ix.serverParts[word] {
		if named[s] {
			return false
		}
		product = product || productOf(s) == word
	}
	return product
}

// objectPronouns may come between a phrasal verb's words ("clean it up").
var objectPronouns = map[string]bool{"it": true, "them": true, "this": true, "that": true, "these": true, "those": true, "everything": true, "me": true, "us": true}

// Pseudo-relevance feedback (Options.Feedback): the words that the best
// few tools of a first ranking share are added to the query for a
// second, as RM3 does for documents. It is off by default: on the Azure
// set it took Recall@1 from 0.801 to 0.743 (0.774 at a weight of 0.05),
// and on the dev half of the development set from 0.294 to 0.278, since
// the best tools of a catalog share their server's words more than the
// query's meaning.
//
// Feedback's tuning: the tools of the first ranking it reads, how many
// of them a word must be in, the words it adds at most, and their weight
// against a query word's 1 (times the word's share of the tools).
const (
	feedbackDocs  = 3
	feedbackMinIn = 2
	feedbackTerms = 6
)

var feedbackWeight = 0.3

// feedbackTermsOf adds to qt the terms that at least feedbackMinIn of
// the best feedbackDocs tools of first have and the query has not,
// weighted by how many have them and how rare they are.
func (ix *Index) feedbackTermsOf(first []scored, qt map[string]float64) bool {
	top := ix.best(first, nil, feedbackDocs)
	if len(top) < feedbackMinIn {
		return false
	}
	count := map[*term]int{}
	for _, r := range top {
		d := ix.docs[r.id]
		seen := map[*term]bool{}
		for _, t := range d.terms {
			if !seen[t] {
				seen[t] = true
				count[t]++
			}
		}
	}
	type cand struct {
		t *term
		w float64
	}
	var cands []cand
	for t, n := range count {
		if n < feedbackMinIn || t.name == "" || t.df == 0 {
			continue
		}
		if _, in := qt[t.name]; in {
			continue
		}
		cands = append(cands, cand{t, float64(n) / float64(len(top)) * idf(t.df, ix.live)})
	}
	if len(cands) == 0 {
		return false
	}
	slices.SortFunc(cands, func(a, b cand) int {
		return cmp.Or(cmp.Compare(b.w, a.w), strings.Compare(a.t.name, b.t.name))
	})
	maxW := cands[0].w
	for _, c := range cands[:min(len(cands), feedbackTerms)] {
		qt[c.t.name] = feedbackWeight * c.w / maxW
	}
	return true
}
