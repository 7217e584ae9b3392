package config

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"
)

// parseJSON reads JSON into the YAML parser's node tree, so that one
// decoder serves both formats. JSON does not go through the YAML parser
// because that parser rejects valid JSON that config writers produce:
// "\/" escapes and surrogate pairs ("\ud83d\ude00", Python's default).
// Comments and trailing commas are allowed, as in VS Code's mcp.json;
// loose lists where they are.
func parseJSON(data []byte, lines *lineIndex) (root *yaml.Node, loose []looseMark, diag *Diagnostic) {
	clean, loose := stripJSONC(data)
	dec := jsontext.NewDecoder(bytes.NewReader(clean), jsontext.AllowDuplicateNames(true))
	var read func() (*yaml.Node, error)
	read = func() (*yaml.Node, error) {
		start := skipJSONSpace(clean, int(dec.InputOffset()))
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		line, col := lines.pos(start)
		n := &yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: col}
		switch tok.Kind() {
		case '{', '[':
			n.Kind, n.Tag, n.Style = yaml.MappingNode, "!!map", yaml.FlowStyle
			end := jsontext.Kind('}')
			if tok.Kind() == '[' {
				n.Kind, n.Tag, end = yaml.SequenceNode, "!!seq", ']'
			}
			for dec.PeekKind() != end {
				c, err := read()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, c)
			}
			if _, err := dec.ReadToken(); err != nil {
				return nil, err
			}
		case '"':
			n.Tag, n.Value, n.Style = "!!str", tok.String(), yaml.DoubleQuotedStyle
		case '0':
			n.Tag, n.Value = "!!int", tok.String()
			if bytes.ContainsAny([]byte(n.Value), ".eE") {
				n.Tag = "!!float"
			}
		case 't', 'f':
			n.Tag, n.Value = "!!bool", tok.String()
		default:
			n.Tag, n.Value = "!!null", "null"
		}
		return n, nil
	}
	top, err := read()
	if err == nil {
		_, err = dec.ReadToken()
		if err == nil {
			err = errors.New("more after the end of the top-level value")
		} else if err == io.EOF {
			return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{top}}, loose, nil
		}
	}
	return nil, nil, jsonError(err, data, lines, dec.InputOffset())
}

func jsonError(err error, data []byte, lines *lineIndex, off int64) *Diagnostic {
	msg := err.Error()
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		off, msg = se.ByteOffset, se.Err.Error()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		off, msg = int64(len(data)), "the file ends in the middle of a value"
	}
	line, col := lines.pos(int(min(off, int64(len(data)))))
	return &Diagnostic{Pos: Pos{line, col}, Msg: "invalid JSON: " + msg,
		Hint: "check for a missing comma, quote or closing bracket just before this place"}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n', ',', ':':
			i++
		default:
			return i
		}
	}
	return i
}

// looseMark is a place where a file leaves strict JSON (RFC 8259): what
// mcpgate reads, but Claude Desktop and other strict readers refuse.
type looseMark struct {
	off  int
	what string // "a comment", "a trailing comma", "a byte order mark"
}

// stripJSONC blanks comments and trailing commas with spaces, keeping
// every other byte where it was so that offsets still name the same line
// and column in the original, and says where it blanked them.
func stripJSONC(data []byte) (clean []byte, loose []looseMark) {
	b := bytes.Clone(data)
	blank := func(i, j int) {
		loose = append(loose, looseMark{i, "a comment"})
		for ; i < j; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	lastComma := -1
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			lastComma = -1
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			j := bytes.IndexByte(b[i:], '\n')
			if j < 0 {
				j = len(b) - i
			}
			blank(i, i+j)
			i += j - 1
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				return b, loose // the decoder reports the stray '/'
			}
			blank(i, i+2+j+2)
			i += 2 + j + 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				b[lastComma] = ' '
				loose = append(loose, looseMark{lastComma, "a trailing comma"})
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return b, loose
}

// looseFix is what to do about each kind of looseMark.
var looseFix = map[string]string{
	"a comment":         "delete the comment",
	"a trailing comma":  "delete the comma",
	"a byte order mark": "save the file as UTF-8 without a byte order mark (BOM)",
}

// looseWarning is one warning at the first place where a .json file is
// not strict JSON, listing the others. mcpgate reads such a file, but a
// .json file is usually also read by Claude Desktop or another client,
// which refuses all of it and so starts none of its servers. A .jsonc
// file says what it is, and VS Code reads its mcp.json ("servers", not
// "mcpServers") as JSON with comments.
func looseWarning(file string, root *yaml.Node, loose []looseMark, lines *lineIndex) *Diagnostic {
	if len(loose) == 0 || strings.ToLower(filepath.Ext(file)) != ".json" || vscodeFile(root) {
		return nil
	}
	slices.SortFunc(loose, func(a, b looseMark) int { return cmp.Compare(a.off, b.off) })
	line, col := lines.pos(loose[0].off)
	msg, fix := "not strict JSON: "+loose[0].what, looseFix[loose[0].what]
	if rest := loose[1:]; len(rest) > 0 {
		const shown = 5 // enough to fix a few at once, short enough to read
		var at []string
		for _, m := range rest[:min(len(rest), shown)] {
			l, c := lines.pos(m.off)
			at = append(at, fmt.Sprintf("%d:%d", l, c))
		}
		if len(rest) > shown {
			at = append(at, "...")
		}
		msg += fmt.Sprintf(" (and %d more place%s: %s)", len(rest), plural(len(rest)), strings.Join(at, ", "))
		fix += ", and the same at the other places"
	}
	return &Diagnostic{File: file, Pos: Pos{line, col}, Msg: msg,
		Hint: "mcpgate reads it, but Claude Desktop and other clients that read the file as strict JSON refuse all of it: " + fix}
}

// vscodeFile reports whether the file is VS Code's mcp.json: servers
// under "servers", not "mcpServers".
func vscodeFile(doc *yaml.Node) bool {
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return false
	}
	m, servers := doc.Content[0], false
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case "mcpServers":
			return false
		case "servers":
			servers = true
		}
	}
	return servers
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// lineIndex turns byte offsets into lines and columns counted in
// characters, as the YAML parser and editors count them.
type lineIndex struct {
	data   []byte
	starts []int
}

func newLineIndex(data []byte) *lineIndex {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{data, starts}
}

func (x *lineIndex) pos(off int) (line, col int) {
	i := 0
	for lo, hi := 0, len(x.starts); lo < hi; {
		m := (lo + hi) / 2
		if x.starts[m] <= off {
			i, lo = m, m+1
		} else {
			hi = m
		}
	}
	return i + 1, utf8.RuneCount(x.data[x.starts[i]:off]) + 1
}
