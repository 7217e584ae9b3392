package toolsearch

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
)

// Text is analysed the same way for tools and queries: split into words
// at case changes, underscores, dashes, dots and anything else that is not
// a letter or digit (so get_fileContents, get-file-contents and
// getFileContents all say get, file, contents), lower-cased, stop words
// dropped, and each word reduced to its Snowball English stem so that
// "registries" finds "registry" and "listing" finds "list".

// words splits s into lower-case words at case changes and at every rune
// that is not a letter or a digit. A run of capitals stays one word
// ("HTTPServer" is http, server) and digits stay with their letters
// ("s3", "ec2"). A run split at case changes is also given whole
// ("MySQL" is my, sql and mysql; "GitHub" git, hub and github), since
// people write those names both ways.
func words(s string, out []string) []string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return wordsUnicode(s, out)
		}
	}
	return wordsASCII(s, out)
}

// wordsASCII is words for ASCII text, nearly all of it: its words are
// slices of one lower-case copy of s (or of s itself), so that splitting
// a description allocates once at most, not once a word.
func wordsASCII(s string, out []string) []string {
	lower := strings.ToLower(s) // s itself when it has no capital
	// Where the word and the run under way start (run -1 between runs),
	// and how many words of the run were split off before the word.
	start, run, parts := 0, -1, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isAlnum(s[i]) {
			switch {
			case run < 0:
				start, run = i, i
			case isUpper(s[i]) && start < i:
				// As in wordsUnicode, which says why.
				prev, next := s[i-1], byte(0)
				if i+1 < len(s) {
					next = s[i+1]
				}
				if isLower(prev) || (isUpper(prev) || isDigit(prev)) && isLower(next) {
					out = append(out, lower[start:i])
					parts++
					start = i
				}
			}
			continue
		}
		if run >= 0 {
			out = append(out, lower[start:i])
			if parts > 0 {
				out = append(out, lower[run:i])
			}
			run, parts = -1, 0
		}
	}
	return out
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) }

// wordsUnicode is words for any text. Its words are slices of one string
// of s's letters and digits, lower-cased, for the same reason.
func wordsUnicode(s string, out []string) []string {
	var lower strings.Builder
	lower.Grow(len(s))
	// The words as spans of lower, made strings once it is complete (on
	// the stack unless there are many).
	var spanBuf [64][2]int
	spans := spanBuf[:0]
	start, run, parts := 0, -1, 0 // as in wordsASCII, in lower
	var prev rune
	for i, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if run >= 0 {
				spans = append(spans, [2]int{start, lower.Len()})
				if parts > 0 {
					spans = append(spans, [2]int{run, lower.Len()})
				}
				run, parts = -1, 0
			}
			prev = r
			continue
		}
		if run < 0 {
			start, run = lower.Len(), lower.Len()
		} else if unicode.IsUpper(r) && start < lower.Len() {
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			// A lower-case letter before, or a capital followed by a
			// lower-case letter after a run of capitals or a digit
			// ("EC2Instance"), starts a word.
			if unicode.IsLower(prev) || (unicode.IsUpper(prev) || unicode.IsDigit(prev)) && unicode.IsLower(next) {
				spans = append(spans, [2]int{start, lower.Len()})
				parts++
				start = lower.Len()
			}
		}
		lower.WriteRune(unicode.ToLower(r))
		prev = r
	}
	if run >= 0 {
		spans = append(spans, [2]int{start, lower.Len()})
		if parts > 0 {
			spans = append(spans, [2]int{run, lower.Len()})
		}
	}
	ls := lower.String()
	for _, sp := range spans {
		out = append(out, ls[sp[0]:sp[1]])
	}
	return out
}

// fillerWords, with the Snowball list of English function words, are the filler of requests made
// to an assistant ("please", "I want to", "can you"); they say nothing
// about which tool is meant.
var fillerWords = map[string]bool{
	"please": true, "can": true, "could": true, "would": true, "want": true,
	"need": true, "like": true, "let": true, "help": true, "using": true,
	"via": true, "also": true, "e": true, "g": true, "etc": true, "eg": true,
	"ie": true, "will": true, "may": true, "might": true, "must": true,
	"shall": true, "us": true, "im": true,
}

func isStop(w string) bool {
	return english.IsStopWord(w) || fillerWords[w]
}

// stem reduces a lower-case word to its stem. Words with digits, and
// short words (acronyms such as "aks", "sql", "vm"), are kept as they are:
// stemming "aks" to "ak" would only merge unrelated words.
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return w
		}
	}
	return english.Stem(w, false)
}

// analyzer turns text into terms, with a cache of what each word is (its
// stem, whether it is a stop word): the same few thousand words recur
// across a catalog and its queries, and stemming is costly. Only indexing
// adds to the cache, queries only read it (see lexicon).
type analyzer struct {
	// mu lets indexing analyse (many batches at once, reading words,
	// under RLock) outside the index's lock, and keeps them apart from
	// merge (under Lock), which adds what a batch learnt. Queries read
	// words under the index's read lock: merge holds its write lock too.
	mu    sync.RWMutex
	words map[string]word
}

// word is what the analyzer knows of a lower-case word.
type word struct {
	stem string
	stop bool
}

// maxWords bounds the cache.
const maxWords = 1 << 20

func newAnalyzer() *analyzer { return &analyzer{words: map[string]word{}} }

// lexicon is how one analysis looks words up: in the analyzer's cache,
// read only, then in learnt, where the words new to it go until merge. A
// query's has no learnt: it adds nothing.
type lexicon struct {
	words, learnt map[string]word
}

// lexicon returns a lexicon reading a's words; learn says it adds new ones
// to them at once (for a's owner alone: New's tables, tests).
func (a *analyzer) lexicon(learn bool) lexicon {
	if learn {
		return lexicon{a.words, a.words}
	}
	return lexicon{words: a.words}
}

// learner returns a lexicon that keeps what it learns apart, for merge.
// Call it under a.mu's read lock, and use it until that is released.
func (a *analyzer) learner() lexicon { return lexicon{a.words, map[string]word{}} }

// merge adds what a learner learnt to a's words. Call it under a.mu's
// lock and the index's write lock.
func (a *analyzer) merge(learnt map[string]word) {
	for w, x := range learnt {
		if len(a.words) >= maxWords {
			return
		}
		a.words[w] = x
	}
}

// word looks w up.
func (l lexicon) word(w string) word {
	if x, ok := l.words[w]; ok {
		return x
	}
	if x, ok := l.learnt[w]; ok {
		return x
	}
	if l.learnt == nil {
		return word{stem: stem(w), stop: isStop(w)}
	}
	// w is often a slice of a long text, which neither the cache nor the
	// index (a stem may be w itself) must keep alive.
	w = strings.Clone(w)
	x := word{stem: stem(w), stop: isStop(w)}
	if len(l.words)+len(l.learnt) < maxWords {
		l.learnt[w] = x
	}
	return x
}

// wordOf is word for w's bytes: looking up a []byte converted in the
// index expression allocates nothing.
func (l lexicon) wordOf(w []byte) word {
	if x, ok := l.words[string(w)]; ok {
		return x
	}
	return l.word(string(w))
}

func (a *analyzer) stem(w string, learn bool) string { return a.lexicon(learn).word(w).stem }

// analysis is what analyze makes of one text, kept from one text to the
// next so that its slices are allocated once.
type analysis struct {
	words  []string
	info   []word
	terms  []string // the stems of words that are not stop words
	pairs  []string // see pairs
	pairAt []int    // pairs[i] is of words[pairAt[i]] and the next
	cat    []byte
}

// analyze splits s into words once for both its terms and, when pairs is
// set, its pairs.
func (l lexicon) analyze(s string, pairs bool, t *analysis) {
	t.words = words(s, t.words[:0])
	t.info, t.terms, t.pairs, t.pairAt = t.info[:0], t.terms[:0], t.pairs[:0], t.pairAt[:0]
	for _, w := range t.words {
		x := l.word(w)
		t.info = append(t.info, x)
		if !x.stop {
			t.terms = append(t.terms, x.stem)
		}
	}
	if !pairs {
		return
	}
	ws := t.words
	for i := 0; i+1 < len(ws); i++ {
		if t.info[i].stop || t.info[i+1].stop || !alpha(ws[i]) || !alpha(ws[i+1]) {
			continue
		}
		if len(ws[i+1]) > len(ws[i]) && strings.HasSuffix(ws[i+1], ws[i]) {
			continue // a run's last part beside the whole run, as words gives it
		}
		t.cat = append(append(t.cat[:0], ws[i]...), ws[i+1]...)
		t.pairs = append(t.pairs, l.wordOf(t.cat).stem)
		t.pairAt = append(t.pairAt, i)
	}
}

// prefix returns the terms and pairs of the first n words.
func (t *analysis) prefix(n int) (terms, pairs []string) {
	k := 0
	for _, x := range t.info[:n] {
		if !x.stop {
			k++
		}
	}
	p := 0
	for p < len(t.pairAt) && t.pairAt[p]+1 < n {
		p++
	}
	return t.terms[:k], t.pairs[:p]
}

// terms appends the terms of s to out; learn says whether new words may
// be cached.
func (a *analyzer) terms(s string, out []string, learn bool) []string {
	var t analysis
	a.lexicon(learn).analyze(s, false, &t)
	return append(out, t.terms...)
}

// pairs appends the terms made of adjacent words of s run together:
// "Event Grid" also says eventgrid and "key vault" keyvault, so that
// names that write compounds as one word ("eventgrid_topic_list") meet
// text that writes them as two, and two words side by side in a query
// count more where they are side by side in the tool too.
func (a *analyzer) pairs(s string, out []string, learn bool) []string {
	var t analysis
	a.lexicon(learn).analyze(s, true, &t)
	return append(out, t.pairs...)
}

func alpha(w string) bool {
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return w != ""
}

// spellOut finds, for each word of a tool's name that its text does not
// use as it is, the words of the text it abbreviates: initials of
// consecutive words ("aks": Azure Kubernetes Service), the start of a
// word ("config": configuration), or two such parts run together
// ("appconfig": app, configuration). Only the tool's own text is used, so
// nothing is guessed from outside it.
func spellOut(name, text string) []string {
	return spellOutWords(words(name, nil), words(text, nil))
}

// spellOutWords is spellOut of the words of a name and of a text.
func spellOutWords(name, tw []string) []string {
	// A scan of the text's words, not a set of them: only a name's few
	// words are looked up, and prefixOf scans them anyway.
	seen := func(w string) bool { return slices.Contains(tw, w) }
	var out []string
	for _, w := range name {
		if seen(w) || !alpha(w) || len(w) < 2 {
			continue
		}
		if ws := initials(w, tw); ws != nil {
			out = append(out, ws...)
			continue
		}
		if x := prefixOf(w, tw); x != "" {
			out = append(out, x)
			continue
		}
		for i := 2; i <= len(w)-2; i++ {
			a, b := w[:i], w[i:]
			xa, xb := a, b
			if !seen(a) {
				xa = prefixOf(a, tw)
			}
			if !seen(b) {
				xb = prefixOf(b, tw)
			}
			if xa != "" && xb != "" {
				out = append(out, xa, xb)
				break
			}
		}
	}
	return out
}

// initials returns the consecutive words of text whose first letters
// spell acr, stop words allowed inside ("speech to text" is stt).
func initials(acr string, text []string) []string {
	if len(acr) < 2 || len(acr) > 5 {
		return nil
	}
	for i := 0; i+len(acr) <= len(text); i++ {
		ok := true
		for j := range len(acr) {
			if text[i+j] == "" || text[i+j][0] != acr[j] {
				ok = false
				break
			}
		}
		if ok && !isStop(text[i]) {
			return text[i : i+len(acr)]
		}
	}
	return nil
}

// prefixOf returns the shortest word of text that starts with p and is
// longer, for p of three letters or more.
func prefixOf(p string, text []string) string {
	if len(p) < 3 {
		return ""
	}
	best := ""
	for _, w := range text {
		if len(w) > len(p) && strings.HasPrefix(w, p) && (best == "" || len(w) < len(best)) {
			best = w
		}
	}
	return best
}
