package toolsearch

import (
	"slices"
	"strings"

	wn "github.com/mcpgate/mcpgate/toolsearch/lexicon"
)

// What a query asks for beyond its words: a participle that says which
// things ("closed PRs"), not what to do; a server it names; whether it
// asks (a question) or tells.

// participleWeight is what a participle that filters counts (see
// participleFilter), against a word's 1: 0.2 measured best on the
// development set's dev half (0.5 and 0.8 found one tool fewer in the
// first five).
var participleWeight = 0.2

// participleFilter says whether words[i] is a past participle that
// describes what to look for ("closed PRs", "created after May") rather
// than asks for its operation ("close PR 5").
func participleFilter(tx *analysis, i int) bool {
	w := tx.words[i]
	if len(w) < 5 || !strings.HasSuffix(w, "ed") || !alpha(w) || wn.Base(w) == w || i+1 >= len(tx.words) {
		return false
	}
	next := tx.words[i+1]
	switch next {
	case "after", "before", "since", "between", "by", "within", "during", "until":
		return true
	}
	return !tx.info[i+1].stop && alpha(next)
}

// A query that names a server ("... on github", "in GitLab") means that
// server's tools, yet BM25 saturates: a tool elsewhere that says the
// query's other words often enough outranks them. So the tools of a
// server the query names get serverBoost more (half again: 0.25 to 1.0
// measured within a query of each other on the development set's dev
// half, 0.5 best by MRR; Azure unchanged). A server is named by its name
// or a part of it ("gitlab" names gitlab-zereight), unless that part is a
// word the other servers' tools use widely (more than genericShare of
// all tools): a server named "search" is not named by "search the web".
// Nor is a server named by a later word of its name that the dictionary
// knows: that says what it does ("my calendar" is any calendar, not
// google-calendar's), where the first word is the product.
var (
	serverBoost  = 0.5
	genericShare = 0.05
)

// namedServers are the servers the query names; nil for none. A name
// may come split at a case change ("GitLab": git, lab), so adjacent
// words are tried run together too.
func (ix *Index) namedServers(text string) map[string]bool {
	var named map[string]bool
	ws := words(text, nil)
	for i, w := range ws {
		if i > 0 && ix.serverParts[ws[i-1]+w] != nil {
			w = ws[i-1] + w
		}
		for _, server := range ix.serverParts[w] {
			if other := ix.df(ix.an.stem(w, false)) - len(ix.byServer[server]); float64(other) > genericShare*float64(ix.live) {
				continue
			}
			if w != productOf(server) && len(wn.Related(w)) > 0 {
				continue
			}
			if named == nil {
				named = map[string]bool{}
			}
			named[server] = true
		}
	}
	return named
}

// productOf is the first word of a server's name that can name it: the
// product it is named after ("gitlab" of gitlab-zereight), where later
// words say what it does ("calendar" of google-calendar).
func productOf(server string) string {
	if parts := nameParts(server); len(parts) > 0 {
		return parts[0]
	}
	return ""
}

// nameParts are the words of a server's name that can name it.
func nameParts(server string) []string {
	var parts []string
	for _, p := range words(server, nil) {
		if len(p) >= 3 && !isStop(p) && !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	return parts
}

// A question asks to be told, not for something to be done: "what's
// stored under session:98231" wants redis's get, not its set; "did many
// customers sign up?" wants a query, not delete-many. So for a question
// the tools named by a write operation the query does not say (nor imply:
// "make" implies create) score writePenalty less: 0.5 and 0.7 measured the
// same on the development set's dev half, 0.15 and 0.3 less well.
var writePenalty = 0.5

// writeOps are the operations of tools that change things.
var writeOps = []string{"create", "add", "update", "set", "delete", "remove", "edit", "write", "insert", "upload", "send", "post", "put", "patch", "modify", "drop", "destroy", "cancel", "close", "archive", "move", "rename"}

// writeStems are writeOps as the index has them. Stemmed here, once: a
// search may not teach the analyzer words (it holds the index's read
// lock only).
var writeStems = func() []string {
	out := make([]string, len(writeOps))
	for i, op := range writeOps {
		out[i] = stem(op)
	}
	return out
}()

// questionWords start a question; requestWords start a request put as
// one ("can you open a ticket?").
var questionWords = []string{"what", "whats", "what's", "which", "who", "whose", "where", "when", "why", "how", "is", "are", "was", "were", "do", "does", "did", "has", "have", "any", "anything", "anyone"}

// question says whether text asks rather than tells: it starts with a
// question word, or ends with a question mark and is not a request.
func question(text string) bool {
	ws := strings.Fields(strings.ToLower(text))
	if len(ws) == 0 {
		return false
	}
	first := strings.Trim(ws[0], ",.!?:;\"'")
	if slices.Contains(questionWords, first) {
		return true
	}
	return strings.HasSuffix(strings.TrimSpace(text), "?") && !slices.Contains(requestWords, first)
}

var requestWords = []string{"can", "could", "would", "will", "please", "pls"}

// intent is what a query asks for beyond its words.
type intent struct {
	// filters are terms that only filter (see participleFilter): they
	// count in the score, but not as covering a tool's name.
	filters map[string]bool
	// named are the servers the query names (see namedServers).
	named map[string]bool
	// unsaid are, for a question, the write operations it does not say.
	unsaid []*term
}

// intentOf is what text asks for beyond its words: the servers it names
// (named, from namedServers) and, if it is a question, the write
// operations that the terms qt do not have.
func (ix *Index) intentOf(text string, qt map[string]float64, named map[string]bool) intent {
	in := intent{named: named}
	if question(text) {
		for _, s := range writeStems {
			if _, said := qt[s]; !said && ix.terms[s] != nil {
				in.unsaid = append(in.unsaid, ix.terms[s])
			}
		}
	}
	return in
}

// apply raises the scores in acc of the named servers' tools, and lowers
// those of tools whose name has an unsaid write operation, once each.
// It walks those servers' tools and those operations' postings, not
// every tool scored: a common word scores most of a large catalog.
func (in intent) apply(ix *Index, acc *accum) {
	for server := range in.named {
		for _, id := range ix.byServer[server] {
			if acc.seen[id] {
				acc.score[id] *= 1 + serverBoost
			}
		}
	}
	for _, t := range in.unsaid {
		for _, p := range t.postings {
			if p.tf[fName] > 0 && acc.seen[p.doc] && !acc.lowered[p.doc] && ix.current(p) {
				acc.lowered[p.doc] = true
				acc.score[p.doc] *= 1 - writePenalty
			}
		}
	}
}
