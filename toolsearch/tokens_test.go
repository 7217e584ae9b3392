package toolsearch

import (
	"testing"
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// estimateReference is EstimateTextTokens as it was first written, a rune
// at a time: the fast path for ASCII must count as it does.
func estimateReference(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsLetter(r):
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsLetter(r2) || unicode.IsUpper(r2) && !unicode.IsUpper(r) {
					break
				}
				j += sz
			}
			letters := utf8.RuneCountInString(s[i:j])
			switch {
			case r >= utf8.RuneSelf:
				n += letters
			case letters <= 12:
				n++
			default:
				n += (letters + 5) / 6
			}
			i = j
		case unicode.IsDigit(r):
			j := i + size
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			n += (j - i + 2) / 3
			i = j
		case r == ' ':
			i += size
		case unicode.IsSpace(r):
			j := i + size
			for j < len(s) && (s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
				j++
			}
			n++
			i = j
		default:
			j := i + size
			for j < len(s) {
				r2, sz := utf8.DecodeRuneInString(s[j:])
				if unicode.IsLetter(r2) || unicode.IsDigit(r2) || unicode.IsSpace(r2) {
					break
				}
				j += sz
			}
			n += (utf8.RuneCountInString(s[i:j]) + 3) / 4
			i = j
		}
	}
	return n
}

func checkEstimate(t *testing.T, s string) {
	t.Helper()
	if got, want := EstimateTextTokens(s), estimateReference(s); got != want {
		t.Fatalf("EstimateTextTokens(%q) = %d, want %d", s, got, want)
	}
}

// Every string of up to four of letters, digits, spaces and marks, ASCII
// and not, and long runs of each count as the reference counts them.
func TestEstimateAsReference(t *testing.T) {
	alphabet := []string{"a", "B", "1", " ", "\n", "\t", "\v", ".", "é", "É", "٣", "\u00a0", "\xff", "\u0085", "\"", "ǅ"}
	var each func(s string, n int)
	each = func(s string, n int) {
		checkEstimate(t, s)
		if n < 4 {
			for _, c := range alphabet {
				each(s+c, n+1)
			}
		}
	}
	each("", 0)
	long := []string{"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZabc", "1234567890", "!!!!!!!!!!", "éééééééééééééé"}
	for _, a := range long {
		for _, b := range long {
			checkEstimate(t, a+b+a)
		}
	}
}

// So do the tools of the evaluation corpus.
func TestEstimateCorpusAsReference(t *testing.T) {
	for _, e := range loadCorpus(t) {
		data, err := jsonv2.Marshal(e.Tool)
		if err != nil {
			t.Fatal(err)
		}
		checkEstimate(t, string(data))
	}
}

func FuzzEstimate(f *testing.F) {
	f.Add("Hello, World! 123 ÉCOLE \xff\n\t\"x\":{}")
	f.Fuzz(checkEstimate)
}
