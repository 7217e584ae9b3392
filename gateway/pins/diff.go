package pins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Diff describes how b differs from a, field by field: text fields as a
// word diff ("[-removed-]{+added+}", unchanged runs shortened), schemas
// and annotations as the lines of their indented JSON that changed.
// Invisible characters are spelt out (<U+200B>). Empty when a and b are
// the same definition.
func Diff(a, b Definition) string {
	var out strings.Builder
	for _, f := range []struct {
		name string
		a, b string
	}{{"name", a.Name, b.Name}, {"title", a.Title, b.Title}, {"description", a.Description, b.Description}} {
		if f.a != f.b {
			fmt.Fprintf(&out, "%s: %s\n", f.name, wordDiff(f.a, f.b))
		}
	}
	for _, f := range []struct {
		name string
		a, b json.RawMessage
	}{{"inputSchema", a.InputSchema, b.InputSchema}, {"outputSchema", a.OutputSchema, b.OutputSchema}, {"annotations", a.Annotations, b.Annotations}} {
		if !bytes.Equal(f.a, f.b) {
			fmt.Fprintf(&out, "%s:\n%s", f.name, lineDiff(indent(f.a), indent(f.b)))
		}
	}
	return out.String()
}

func indent(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		return []string{string(raw)}
	}
	return strings.Split(buf.String(), "\n")
}

var words = regexp.MustCompile(`\s+|[^\s]+`)

// wordDiff marks the words of b that are not in a, and the reverse.
func wordDiff(a, b string) string {
	ops := diff(words.FindAllString(a, -1), words.FindAllString(b, -1))
	var out strings.Builder
	for i, op := range ops {
		text := visible(strings.Join(op.tokens, ""))
		switch op.kind {
		case '=':
			// Unchanged text is cut to 40 characters either side of a
			// change: the change is what the reader needs.
			r := []rune(text)
			first, last := i == 0, i == len(ops)-1
			switch {
			case first && last:
			case first && len(r) > 40:
				text = "…" + string(r[len(r)-40:])
			case last && len(r) > 40:
				text = string(r[:40]) + "…"
			case len(r) > 80:
				text = string(r[:40]) + "…" + string(r[len(r)-40:])
			}
			out.WriteString(text)
		case '-':
			out.WriteString("[-" + text + "-]")
		case '+':
			out.WriteString("{+" + text + "+}")
		}
	}
	return out.String()
}

// lineDiff lists the lines removed from a and added in b.
func lineDiff(a, b []string) string {
	var out strings.Builder
	for _, op := range diff(a, b) {
		if op.kind == '=' {
			continue
		}
		for _, l := range op.tokens {
			fmt.Fprintf(&out, "  %c %s\n", op.kind, visible(l))
		}
	}
	return out.String()
}

// visible spells out the invisible characters of s.
func visible(s string) string {
	if !strings.ContainsFunc(s, invisible) {
		return s
	}
	var out strings.Builder
	for _, r := range s {
		if invisible(r) {
			fmt.Fprintf(&out, "<U+%04X>", r)
		} else {
			out.WriteRune(r)
		}
	}
	return out.String()
}

// op is a run of tokens kept ('='), removed ('-') or added ('+').
type op struct {
	kind   byte
	tokens []string
}

// maxDiffCells bounds the longest-common-subsequence table: past it the
// middle that differs is shown as removed and added whole.
const maxDiffCells = 1 << 20

// diff is a token diff: the common prefix and suffix, and between them
// a longest common subsequence.
func diff(a, b []string) []op {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []op
	add := func(kind byte, t ...string) {
		if len(t) == 0 {
			return
		}
		if n := len(ops); n > 0 && ops[n-1].kind == kind {
			ops[n-1].tokens = append(ops[n-1].tokens, t...)
			return
		}
		ops = append(ops, op{kind, append([]string(nil), t...)})
	}
	add('=', a[:p]...)
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	if len(ma)*len(mb) > maxDiffCells {
		add('-', ma...)
		add('+', mb...)
	} else {
		// lcs[i][j] is the LCS length of ma[i:] and mb[j:].
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				add('=', ma[i])
				i, j = i+1, j+1
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				add('-', ma[i])
				i++
			default:
				add('+', mb[j])
				j++
			}
		}
	}
	add('=', a[len(a)-s:]...)
	return ops
}
