package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// People quote what a tool is to be given, not what it is to do: a title
// (create an issue "Crash when uploading avatar"), a message, a search
// string, an error seen; and a #tag names a channel or an element
// ("#incident-room", "#submit") the same way. Read as words of the request, a quoted title
// finds tools that upload files. So a query's quoted spans count for
// quotedWeight a word, are not bridged and make no pairs; a query that
// is all quotes is read as it is, as it says nothing else.

// quotedWeight is what a word inside quotes counts, against a word
// outside them; chosen on the development set's dev half and the Azure
// set (see internal/evalsearch).
var quotedWeight = 0.25

// maxQuoted bounds a quoted span, in bytes: a quote left open does not
// swallow the rest of a long query.
const maxQuoted = 200

// quotePairs are the quotes that open and close a span. A quote opens
// at the start of a word (a double quote anywhere), and a single quote
// closes only at the end of one, so that "what's" and "the users' files"
// open nothing.
var quotePairs = []struct {
	open, close rune
	single      bool
}{
	{'"', '"', false},
	{'“', '”', false},
	{'„', '“', false},
	{'«', '»', false},
	{'`', '`', false},
	{'\'', '\'', true},
	{'‘', '’', true},
}

// splitQuoted returns text with its quoted spans and #tags blanked, and
// their text, each followed by a space.
func splitQuoted(text string) (rest, quoted string) {
	var b []byte // text with spans blanked, once there is one
	var q strings.Builder
	for i := 0; i < len(text); {
		from, to, end, ok := spanAt(text, i)
		if !ok {
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
			continue
		}
		if b == nil {
			b = []byte(text)
		}
		q.WriteString(text[from:to])
		q.WriteByte(' ')
		for j := i; j < end; j++ {
			b[j] = ' '
		}
		i = end
	}
	if b == nil {
		return text, ""
	}
	return string(b), q.String()
}

// spanAt says whether a quoted span or a #tag starts at text[i], and if
// so where its text starts and ends and where it ends, closing quote
// included.
func spanAt(text string, i int) (from, to, end int, ok bool) {
	r, n := utf8.DecodeRuneInString(text[i:])
	if i > 0 && !opensWord(text[:i]) {
		// Only a double quote may open inside a word: say"x" is rare,
		// and the apostrophes of what's and users' are not quotes.
		if r != '"' {
			return 0, 0, 0, false
		}
	}
	if r == '#' {
		to := tagEnd(text, i+n)
		return i + n, to, to, to > i+n
	}
	for _, p := range quotePairs {
		if r != p.open {
			continue
		}
		if c := closing(text, i+n, p.close, p.single); c >= 0 {
			_, cn := utf8.DecodeRuneInString(text[c:])
			return i + n, c, c + cn, true
		}
	}
	return 0, 0, 0, false
}

// tagEnd returns where a #tag whose name starts at from ends: before the
// punctuation or space after it. A tag's name starts with a letter ("#77"
// is a number): otherwise there is none and tagEnd returns from.
func tagEnd(text string, from int) int {
	if r, _ := utf8.DecodeRuneInString(text[from:]); from == len(text) || !unicode.IsLetter(r) {
		return from
	}
	end := from
	for j := from; j < len(text); {
		r, n := utf8.DecodeRuneInString(text[j:])
		if unicode.IsSpace(r) {
			break
		}
		j += n
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			end = j
		} else if r != '-' && r != '_' && r != '.' {
			break
		}
	}
	return end
}

// opensWord says whether a single quote after before starts a word: it
// follows a space or an opening bracket.
func opensWord(before string) bool {
	r, _ := utf8.DecodeLastRuneInString(before)
	return unicode.IsSpace(r) || strings.ContainsRune("([{", r)
}

// closing returns where the quote c that closes a span opened before
// from is, or -1: within maxQuoted bytes, with something between, and
// for a single quote at the end of a word.
func closing(text string, from int, c rune, single bool) int {
	limit := min(len(text), from+maxQuoted)
	for j := from; j < limit; {
		r, n := utf8.DecodeRuneInString(text[j:])
		if r == c && j > from && (!single || endsWord(text[j+n:])) {
			return j
		}
		j += n
	}
	return -1
}

// endsWord says whether a single quote before after ends a word: it is
// followed by the end, a space or punctuation.
func endsWord(after string) bool {
	if after == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(after)
	return unicode.IsSpace(r) || unicode.IsPunct(r)
}
