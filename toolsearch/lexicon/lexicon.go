// Package lexicon is an English lexicon for tool search, drawn from
// WordNet 3.0: the base form of a word ([Base]: "deleting" is delete,
// "ran" is run) and the words related to it ([Related]: delete is a kind
// of remove, and deletion is its noun), so that a query can find a tool
// that says the same thing in other words. It is offline and pure Go: the
// data (wordnet.gz, 0.76 MB) is embedded and read the first time either
// function is called (some 16 ms on one core; 2.6 MB stay in memory), so
// a program that never asks pays nothing but the binary's size. A call
// then takes about a microsecond.
//
// # Data
//
// Only words of lower-case ASCII letters and digits are kept, as a
// tokenizer splits text; multi-word lemmas ("jot_down", "take_away") are
// left out, since their words apart ("down", "away") would match
// anything. For each word: the parts of speech it is a lemma of, its
// irregular forms from WordNet's exception lists, and its related words
// (see [Relation]). Names are left out too: a sense counts only where
// WordNet writes the word in lower case ("java" the coffee, not "Java"
// the island).
//
// WordNet knows English, not software: "folder" is a booklet, not a
// directory, and "size" has no synonym. A ranker should weigh related
// words below the words of the query.
//
// internal/lexicongen writes wordnet.gz from Debian's wordnet-base
// package; its doc comment has the command. WordNet's licence asks for
// its notice on every copy: it is in WORDNET-LICENSE beside the data and
// at the head of the data itself, so it is in every binary too.
//
// The embedded file is gzip'd text, a line per word, sorted: the word,
// then tab-separated, the parts of speech it is a lemma of (n, v, a, r;
// N and V where a noun or verb sense is tagged in WordNet's concordance,
// that is, frequent), its exceptions ("v:run"), and comma-separated
// synonyms, derivations and hypernyms. Lines that start with # are
// comments.
package lexicon

import (
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

//go:embed wordnet.gz
var compressed string

// Relation is how a [Term] relates to the word asked about.
type Relation uint8

const (
	// Synonym: the two share one of the word's commonest senses (at
	// most three per part of speech: delete, cancel).
	Synonym Relation = iota + 1
	// Derivation: a form derived from the same stem, in any sense
	// (delete, deletion; store, storage).
	Derivation
	// Hypernym: a verb that the word's first verb sense is a kind of
	// (delete, remove).
	Hypernym
)

func (r Relation) String() string {
	switch r {
	case Synonym:
		return "synonym"
	case Derivation:
		return "derivation"
	case Hypernym:
		return "hypernym"
	}
	return fmt.Sprintf("Relation(%d)", r)
}

// Term is a word related to another.
type Term struct {
	Word string
	Kind Relation
}

// MaxRelated bounds the terms [Related] returns. Fewer than one word in a
// thousand has more; those lose the terms of their rarest senses.
const MaxRelated = 24

// Related returns the words related to word: its synonyms, then its
// derivations, then its hypernyms, each in the order of the senses that
// gave them (the commonest first), and then, for an inflected form, those
// of its [Base] ("running" gives run's after its own). Each word comes
// once, under the first relation that gives it, and neither word nor its
// base is among them; at most [MaxRelated]. Case is ignored; an unknown
// word gives none.
func Related(word string) []Term {
	t := data()
	w := strings.ToLower(word)
	e, _ := t.entry(w)
	b := t.base(w)
	var be entry
	if b != w {
		be, _ = t.entry(b)
	}
	rel, brel := e.related(), be.related()
	if rel == "" && brel == "" {
		return nil
	}
	out := make([]Term, 0, min(MaxRelated, strings.Count(rel, ",")+strings.Count(brel, ",")+6))
	out = appendRelated(out, rel, w, b)
	return appendRelated(out, brel, w, b)
}

// appendRelated appends the terms of an entry's related fields to out,
// but for w, b and those out has.
func appendRelated(out []Term, rel, w, b string) []Term {
	kind := Synonym
	for field := range strings.SplitSeq(rel, "\t") {
		for r := range strings.SplitSeq(field, ",") {
			if len(out) == MaxRelated {
				return out
			}
			if r != "" && r != w && r != b && !slices.ContainsFunc(out, func(t Term) bool { return t.Word == r }) {
				out = append(out, Term{Word: r, Kind: kind})
			}
		}
		kind++
	}
	return out
}

// Base returns the base form of word, lower-cased, by WordNet's
// morphology: "deleting" is delete, "folders" folder, "ran" run, "mice"
// mouse, "taking" take. A lemma in its own right stays itself:
// "deletion" (its verb is its [Derivation]), "data", "number" (not more
// numb). See base.go for the rules. A word it cannot place comes back as
// it is, lower-cased.
func Base(word string) string {
	return data().base(strings.ToLower(word))
}

// data is the table, read on first use. Embedded data that does not
// parse is a broken build, which the package's tests catch, so it panics
// as regexp.MustCompile does.
var data = sync.OnceValue(func() *table {
	t, err := parse(compressed)
	if err != nil {
		panic("toolsearch/lexicon: embedded wordnet.gz: " + err.Error())
	}
	return t
})

// table is the decompressed text and where each word's line starts, in
// the text's (sorted) order: 4 bytes a word beside the text, where a map
// would take ten times that.
type table struct {
	text  string
	lines []uint32
}

// parse decompresses and indexes gz.
func parse(gz string) (*table, error) {
	if len(gz) < 4 {
		return nil, errors.New("not gzip")
	}
	zr, err := gzip.NewReader(strings.NewReader(gz))
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	// gzip's trailer has the text's size (mod 2^32), so the text is
	// read into one allocation.
	b.Grow(int(min(binary.LittleEndian.Uint32([]byte(gz[len(gz)-4:])), 1<<26)))
	if _, err := io.Copy(&b, io.LimitReader(zr, 1<<26)); err != nil {
		return nil, err
	}
	t := &table{text: b.String()}
	if len(t.text) >= 1<<32-1 {
		return nil, errors.New("too large")
	}
	t.lines = make([]uint32, 0, strings.Count(t.text, "\n"))
	prev := ""
	for at := 0; at < len(t.text); {
		end := strings.IndexByte(t.text[at:], '\n')
		if end < 0 {
			return nil, fmt.Errorf("byte %d: unterminated line", at)
		}
		line := t.text[at : at+end]
		if !strings.HasPrefix(line, "#") {
			word, _, ok := strings.Cut(line, "\t")
			if !ok || word <= prev {
				return nil, fmt.Errorf("byte %d: %q: want a word, a tab and its parts of speech, in sorted order", at, line)
			}
			prev = word
			t.lines = append(t.lines, uint32(at))
		}
		at += end + 1
	}
	if len(t.lines) == 0 {
		return nil, errors.New("no words")
	}
	return t, nil
}

// entry is a word's line.
type entry string

// fields are an entry's tab-separated fields.
const (
	fieldWord = iota
	fieldPOS
	fieldExceptions
	fieldRelated // synonyms, derivations, hypernyms
)

func (e entry) field(i int) string {
	s := string(e)
	for range i {
		_, rest, ok := strings.Cut(s, "\t")
		if !ok {
			return ""
		}
		s = rest
	}
	f, _, _ := strings.Cut(s, "\t")
	return f
}

// related is the synonyms, derivations and hypernyms fields, tab
// separated.
func (e entry) related() string {
	s := string(e)
	for range fieldRelated {
		_, rest, ok := strings.Cut(s, "\t")
		if !ok {
			return ""
		}
		s = rest
	}
	return s
}

// entry finds word's line.
func (t *table) entry(word string) (entry, bool) {
	lo, hi := 0, len(t.lines)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		line := t.line(m)
		w, _, _ := strings.Cut(line, "\t")
		switch {
		case w == word:
			return entry(line), true
		case w < word:
			lo = m + 1
		default:
			hi = m
		}
	}
	return "", false
}

func (t *table) line(i int) string {
	at := int(t.lines[i])
	end := strings.IndexByte(t.text[at:], '\n')
	return t.text[at : at+end]
}
