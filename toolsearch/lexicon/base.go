package lexicon

import "strings"

// WordNet's morphology ("morphy") finds a word's base per part of speech:
// an irregular form's base from the exception lists, else the first
// suffix rule whose result is a lemma of that part of speech, and the
// word itself where it is a lemma there. Base must pick one answer over
// all parts of speech, for a ranker that does not know which part of
// speech a query's word is. It prefers, in order:
//
//  1. a frequent noun or verb (one with a sense tagged in WordNet's
//     concordance) as it is, unless it ends in -ing: "data" stays (not
//     datum), "number" (not numb), "seed" (not see), "left" (not leave);
//     but "running" is run and "building" build, as a query means them;
//  2. an irregular form's base, verbs first: "ran" run, "does" do (not
//     doe), "mice" mouse, "written" write;
//  3. the suffix rules, verbs first, in a part of speech the word is not
//     a lemma of: "taking" take (taking the noun is rare), "used" use
//     (used the adjective follows its verb), "folders" folder; but
//     "deletion" stays (no rule applies);
//  4. the word as it is.
//
// The rules know nothing of words outside WordNet: "bing" is be+ing, and
// "evening" even+ing.

// morphyOrder is the order in which parts of speech are tried: a query
// asks a tool to do something, so verbs first.
var morphyOrder = [...]byte{'v', 'n', 'a', 'r'}

// suffixRules are WordNet's detachment rules, per part of speech, in its
// order: a word ending in suffix may be base+suffix.
var suffixRules = map[byte][]struct{ suffix, ending string }{
	'n': {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	'v': {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	'a': {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

func (t *table) base(w string) string {
	e, _ := t.entry(w)
	pos := e.field(fieldPOS)
	if strings.ContainsAny(pos, "NV") && !strings.HasSuffix(w, "ing") {
		return w
	}
	if exc := e.field(fieldExceptions); exc != "" {
		for _, p := range morphyOrder {
			for b := range strings.SplitSeq(exc, ",") {
				if len(b) > 2 && b[0] == p && b[1] == ':' {
					return b[2:]
				}
			}
		}
	}
	for _, p := range morphyOrder {
		if strings.IndexByte(pos, p) >= 0 {
			continue
		}
		for _, r := range suffixRules[p] {
			stem, ok := strings.CutSuffix(w, r.suffix)
			if !ok || stem == "" {
				continue
			}
			b := stem + r.ending
			if be, ok := t.entry(b); ok && strings.IndexByte(be.field(fieldPOS), p) >= 0 {
				return b
			}
		}
	}
	return w
}
