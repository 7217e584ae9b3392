package lexicon

import "testing"

// FuzzLexicon asks for arbitrary words: no panic, a base for every word
// but the empty one, and related words within the contract.
func FuzzLexicon(f *testing.F) {
	for _, s := range []string{"deleting", "ran", "", "Ünïcödé\x00\xff", "ing", "s", "es", "ed", "est", "men", "a\tn", "a,b", "#", "zzzzzzzz", "aardvark", "évening"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, word string) {
		if b := Base(word); (b == "") != (word == "") {
			t.Errorf("Base(%q) = %q", word, b)
		}
		checkTerms(t, word, Related(word))
	})
}
