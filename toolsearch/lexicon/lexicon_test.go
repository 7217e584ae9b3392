package lexicon

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The cases are words of the software domain, and what WordNet 3.0
// actually says of them, not what a ranker might wish it said.
func TestBaseUndoesInflection(t *testing.T) {
	tests := []struct{ word, want, why string }{
		{"deleting", "delete", "a verb's -ing by the rule ing -> e"},
		{"deletes", "delete", "a verb's -s"},
		{"deleted", "delete", "a verb's -ed"},
		{"deletion", "deletion", "a lemma; delete is its derivation, not its base"},
		{"folders", "folder", "a noun's plural"},
		{"queries", "query", "ies -> y"},
		{"ran", "run", "verb.exc"},
		{"mice", "mouse", "noun.exc"},
		{"written", "write", "verb.exc, over the rare adjective written"},
		{"sent", "send", "verb.exc, over the untagged noun sent (a coin)"},
		{"taking", "take", "the noun taking is untagged"},
		{"running", "run", "a frequent noun, but -ing, and verb.exc has it"},
		{"building", "build", "a frequent noun, but -ing"},
		{"used", "use", "the adjective used is no noun or verb"},
		{"does", "do", "verb.exc before noun.exc (doe)"},
		{"data", "data", "a frequent noun stays, though noun.exc says datum"},
		{"number", "number", "a frequent noun stays, though number is numb+er"},
		{"seed", "seed", "a frequent noun stays, though seed is see+ed"},
		{"left", "left", "a frequent noun stays, though verb.exc says leave"},
		{"glasses", "glasses", "a frequent noun stays"},
		{"DELETING", "delete", "case is ignored"},
		{"evening", "even", "a known miss: -ing yields to a verb even+ing"},
		{"kubernetes", "kubernetes", "unknown to WordNet"},
		{"", "", "nothing"},
		{"Ünïcödé", "ünïcödé", "unknown, lower-cased"},
	}
	for _, tt := range tests {
		if got := Base(tt.word); got != tt.want {
			t.Errorf("Base(%q) = %q, want %q (%s)", tt.word, got, tt.want, tt.why)
		}
	}
}

func TestRelatedWordsComeFromWordNet(t *testing.T) {
	tests := []struct {
		word string
		want []Term // all of them, in order
	}{
		{"delete", []Term{{"cancel", Synonym}, {"deletion", Derivation}, {"remove", Hypernym}, {"take", Hypernym}, {"withdraw", Hypernym}}},
		// An inflected form has its base's related words, without the base.
		{"deleting", []Term{{"cancel", Synonym}, {"deletion", Derivation}, {"remove", Hypernym}, {"take", Hypernym}, {"withdraw", Hypernym}}},
		{"Deleted", []Term{{"cancel", Synonym}, {"deletion", Derivation}, {"remove", Hypernym}, {"take", Hypernym}, {"withdraw", Hypernym}}},
		{"deletion", []Term{{"omission", Synonym}, {"delete", Derivation}}},
		// A jot is a jotting; "note" and "write down" are not reached
		// (jot_down is a multi-word lemma, left out).
		{"jot", []Term{{"jotting", Synonym}, {"jotter", Derivation}, {"write", Hypernym}}},
		{"photo", []Term{{"photograph", Synonym}, {"exposure", Synonym}, {"picture", Synonym}, {"pic", Synonym}}},
		// WordNet 3.0 knows no computing folder: no directory.
		{"folder", []Term{{"booklet", Synonym}, {"brochure", Synonym}, {"leaflet", Synonym}, {"pamphlet", Synonym}, {"fold", Derivation}}},
		// Size has no synonym; its first verb sense is to coat with size.
		{"size", []Term{{"sizing", Derivation}, {"coat", Hypernym}, {"surface", Hypernym}}},
		{"storage", []Term{{"storehouse", Synonym}, {"depot", Synonym}, {"entrepot", Synonym}, {"store", Synonym}}},
		{"remove", []Term{{"take", Synonym}, {"withdraw", Synonym}, {"remotion", Derivation}, {"remover", Derivation}, {"removal", Derivation}}},
		{"data", []Term{{"information", Synonym}}},
		{"kubernetes", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Related(tt.word); !slices.Equal(got, tt.want) {
			t.Errorf("Related(%q) = %v\nwant %v", tt.word, got, tt.want)
		}
	}
}

func TestRelatedIncludes(t *testing.T) {
	tests := []struct {
		word    string
		has     []Term
		hasNone []string
	}{
		{"picture", []Term{{"image", Synonym}, {"depict", Synonym}, {"show", Synonym}, {"picturing", Derivation}, {"imagine", Hypernym}}, []string{"picture", "photo"}},
		{"image", []Term{{"picture", Synonym}, {"icon", Synonym}, {"imaging", Derivation}}, nil},
		{"store", []Term{{"storage", Synonym}, {"memory", Synonym}, {"keep", Hypernym}}, nil},
		{"list", []Term{{"listing", Synonym}, {"enumerate", Hypernym}, {"itemize", Hypernym}}, nil},
		{"show", []Term{{"display", Synonym}, {"demo", Synonym}}, []string{"list", "get"}},
		{"find", []Term{{"discover", Synonym}, {"detect", Synonym}}, []string{"search"}},
		{"search", []Term{{"seek", Synonym}, {"look", Synonym}, {"searcher", Derivation}}, []string{"find"}},
		{"update", []Term{{"updating", Derivation}, {"modify", Hypernym}}, []string{"update"}},
		{"send", []Term{{"mail", Synonym}, {"post", Synonym}, {"sender", Derivation}}, nil},
		{"query", []Term{{"question", Synonym}, {"inquiry", Synonym}, {"ask", Hypernym}}, nil},
		{"create", []Term{{"make", Synonym}, {"creation", Derivation}}, nil},
		// Names are left out: "java" is the coffee, not the island
		// (Djawa) or the programming language.
		{"java", []Term{{"coffee", Synonym}}, []string{"djawa"}},
		// The inflected form's own senses first, then its base's.
		{"running", []Term{{"tally", Synonym}, {"runner", Derivation}, {"speed", Hypernym}}, []string{"run", "running"}},
		{"building", []Term{{"edifice", Synonym}, {"construct", Synonym}, {"builder", Derivation}}, []string{"build"}},
	}
	for _, tt := range tests {
		got := Related(tt.word)
		for _, want := range tt.has {
			if !slices.Contains(got, want) {
				t.Errorf("Related(%q) = %v lacks %v", tt.word, got, want)
			}
		}
		for _, not := range tt.hasNone {
			if slices.ContainsFunc(got, func(t Term) bool { return t.Word == not }) {
				t.Errorf("Related(%q) = %v has %q", tt.word, got, not)
			}
		}
	}
}

// Every word of the table answers within the documented bounds.
func TestEveryWordKeepsTheContract(t *testing.T) {
	tb := data()
	if len(tb.lines) < 80_000 {
		t.Fatalf("the table has %d words; WordNet gives some 81,000", len(tb.lines))
	}
	for i := range tb.lines {
		w, _, _ := strings.Cut(tb.line(i), "\t")
		checkTerms(t, w, Related(w))
		if b := Base(w); b == "" {
			t.Errorf("Base(%q) is empty", w)
		}
	}
}

func checkTerms(t *testing.T, word string, terms []Term) {
	t.Helper()
	if len(terms) > MaxRelated {
		t.Errorf("Related(%q) has %d terms, past MaxRelated", word, len(terms))
	}
	lw, b := strings.ToLower(word), Base(word)
	seen := map[string]bool{}
	for _, term := range terms {
		switch {
		case term.Word == "" || term.Word == lw || term.Word == b:
			t.Errorf("Related(%q) has %q (the word, its base %q, or nothing)", word, term.Word, b)
		case seen[term.Word]:
			t.Errorf("Related(%q) has %q twice", word, term.Word)
		case term.Kind < Synonym || term.Kind > Hypernym:
			t.Errorf("Related(%q) has %q as %v", word, term.Word, term.Kind)
		}
		seen[term.Word] = true
	}
}

// WordNet's licence asks for its notice on every copy of the data: the
// embedded data carries it, so every binary does.
func TestTheEmbeddedDataCarriesWordNetsNotice(t *testing.T) {
	for _, want := range []string{
		"# WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.\n",
		"# THIS SOFTWARE AND DATABASE IS PROVIDED \"AS IS\" AND PRINCETON\n",
		"# Princeton University and LICENSEE agrees to preserve same.\n",
	} {
		if !strings.Contains(data().text, want) {
			t.Errorf("the embedded data lacks %q", want)
		}
	}
}

func gz(t *testing.T, text string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestParseRejectsBrokenData(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not gzip", "plain text, not gzip", "gzip: invalid header"},
		{"empty", "", "not gzip"},
		{"truncated", gz(t, "a\tn\nb\tn\n")[:20], "unexpected EOF"},
		{"only comments", gz(t, "# a comment\n"), "no words"},
		{"unsorted", gz(t, "b\tn\na\tn\n"), `"a\tn": want a word, a tab`},
		{"twice", gz(t, "a\tn\na\tv\n"), `"a\tv": want a word, a tab`},
		{"no parts of speech", gz(t, "a\n"), `"a": want a word, a tab`},
		{"last line unterminated", gz(t, "a\tn\nb\tn"), "unterminated line"},
	}
	for _, tt := range tests {
		_, err := parse(tt.data)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: parse: %v; want an error with %q", tt.name, err, tt.want)
		}
	}
	if _, err := parse(gz(t, "# header\na\tn\nb\tv\t\tc\n")); err != nil {
		t.Errorf("a good table: %v", err)
	}
}

func TestRelationsHaveNames(t *testing.T) {
	got := fmt.Sprint(Synonym, Derivation, Hypernym, Relation(0))
	if want := "synonym derivation hypernym Relation(0)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func ExampleRelated() {
	for _, t := range Related("deleting") {
		fmt.Println(t.Word, t.Kind)
	}
	// Output:
	// cancel synonym
	// deletion derivation
	// remove hypernym
	// take hypernym
	// withdraw hypernym
}

func ExampleBase() {
	fmt.Println(Base("folders"), Base("ran"), Base("taking"), Base("deletion"))
	// Output: folder run take deletion
}
