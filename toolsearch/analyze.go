package toolsearch

import (
	"strings"
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
	var b, run strings.Builder
	parts := 0
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
			parts++
		}
	}
	endRun := func() {
		flush()
		if parts > 1 {
			out = append(out, run.String())
		}
		run.Reset()
		parts = 0
	}
	var prev rune
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && b.Len() > 0 {
				next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
				// A lower-case letter before, or a capital followed by a
				// lower-case letter after a run of capitals or a digit
				// ("EC2Instance"), starts a word.
				if unicode.IsLower(prev) || (unicode.IsUpper(prev) || unicode.IsDigit(prev)) && unicode.IsLower(next) {
					flush()
				}
			}
			lr := unicode.ToLower(r)
			b.WriteRune(lr)
			run.WriteRune(lr)
		default:
			endRun()
		}
		prev = r
	}
	endRun()
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

// analyzer turns text into terms, with a cache of stems: the same few
// thousand words recur across a catalog and its queries. Only indexing
// (under the index's write lock) adds to the cache; queries, which run
// concurrently, only read it.
type analyzer struct {
	stems map[string]string
}

func newAnalyzer() *analyzer { return &analyzer{stems: map[string]string{}} }

// terms appends the terms of s to out; learn says whether new stems may
// be cached.
func (a *analyzer) terms(s string, out []string, learn bool) []string {
	var buf [32]string
	for _, w := range words(s, buf[:0]) {
		if isStop(w) {
			continue
		}
		out = append(out, a.stem(w, learn))
	}
	return out
}

func (a *analyzer) stem(w string, learn bool) string {
	st, ok := a.stems[w]
	if !ok {
		st = stem(w)
		if learn && len(a.stems) < 1<<20 {
			a.stems[w] = st
		}
	}
	return st
}

// pairs appends the terms made of adjacent words of s run together:
// "Event Grid" also says eventgrid and "key vault" keyvault, so that
// names that write compounds as one word ("eventgrid_topic_list") meet
// text that writes them as two, and two words side by side in a query
// count more where they are side by side in the tool too.
func (a *analyzer) pairs(s string, out []string, learn bool) []string {
	var buf [32]string
	ws := words(s, buf[:0])
	for i := 0; i+1 < len(ws); i++ {
		if isStop(ws[i]) || isStop(ws[i+1]) || !alpha(ws[i]) || !alpha(ws[i+1]) {
			continue
		}
		if len(ws[i+1]) > len(ws[i]) && strings.HasSuffix(ws[i+1], ws[i]) {
			continue // a run's last part beside the whole run, as words gives it
		}
		out = append(out, a.stem(ws[i]+ws[i+1], learn))
	}
	return out
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
	tw := words(text, nil)
	seen := make(map[string]bool, len(tw))
	for _, w := range tw {
		seen[w] = true
	}
	var out []string
	for _, w := range words(name, nil) {
		if seen[w] || !alpha(w) || len(w) < 2 {
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
			if !seen[a] {
				xa = prefixOf(a, tw)
			}
			if !seen[b] {
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
