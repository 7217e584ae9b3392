package wordvec

import (
	"unicode"
	"unicode/utf8"
)

// maxRun bounds a run of letters and digits that is looked up: no word of
// a model is longer, and a longer run is split at its case changes only.
const maxRun = 64

// forEachRun calls fn for each run of letters and digits in text,
// lower-cased (ASCII letters only: the model's words are ASCII, so a word
// with any other letter is never found, whatever its case), with the
// offsets in it where a word starts at a case change: after a lower-case
// letter ("fileContents") or at the last capital of a run of them
// followed by a lower-case letter ("HTTPServer", "EC2Instance"). Digits
// stay with their letters. A rune that is neither a letter nor a digit
// (any ASCII punctuation or space, and any non-ASCII rune but letters
// and digits) ends a run. fn must not keep run or cuts.
func forEachRun(text string, fn func(run []byte, cuts []int)) {
	var buf [maxRun]byte
	var cutBuf [maxRun]int
	run, cuts := buf[:0], cutBuf[:0]
	var prev, prevPrev byte // the previous two ASCII classes in the run
	flush := func() {
		if len(run) > 0 {
			fn(run, cuts)
		}
		run, cuts, prev, prevPrev = buf[:0], cutBuf[:0], 0, 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(text[i:])
			i += size
			if !isLetterOrDigit(r) {
				flush()
				continue
			}
			// A non-ASCII letter makes the run unknown to the model;
			// keeping a marker in it says so without spelling it.
			if len(run) == maxRun {
				flush()
			}
			run = append(run, 0xff)
			prevPrev, prev = prev, 'x'
			continue
		}
		i++
		class := asciiClass(c)
		if class == 0 {
			flush()
			continue
		}
		if len(run) == maxRun {
			flush()
		}
		if class == 'A' && len(run) > 0 && prev == 'a' {
			cuts = append(cuts, len(run))
		}
		if class == 'a' && prev == 'A' && (prevPrev == 'A' || prevPrev == '0') && len(run) > 1 {
			cuts = append(cuts, len(run)-1)
		}
		if class == 'A' {
			c += 'a' - 'A'
		}
		run = append(run, c)
		prevPrev, prev = prev, class
	}
	flush()
}

// asciiClass is 'a' for a lower-case letter, 'A' for a capital, '0' for a
// digit and 0 for anything else.
func asciiClass(c byte) byte {
	switch {
	case 'a' <= c && c <= 'z':
		return 'a'
	case 'A' <= c && c <= 'Z':
		return 'A'
	case '0' <= c && c <= '9':
		return '0'
	}
	return 0
}

func isLetterOrDigit(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// forEachWord calls fn for each word of text the model may know: a run
// of letters and digits whole when it is one word or when the model
// knows it whole ("YouTube" is youtube), else its parts split at case
// changes ("getFileContents" is get, file, contents).
func (m *Model) forEachWord(text string, fn func(w []byte)) {
	forEachRun(text, func(run []byte, cuts []int) {
		if len(cuts) == 0 {
			fn(run)
			return
		}
		if _, ok := m.index[string(run)]; ok {
			fn(run)
			return
		}
		start := 0
		for _, c := range cuts {
			fn(run[start:c])
			start = c
		}
		fn(run[start:])
	})
}
