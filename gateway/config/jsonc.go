package config

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"go.yaml.in/yaml/v3"
)

// parseJSON reads JSON into the YAML parser's node tree, so that one
// decoder serves both formats. JSON does not go through the YAML parser
// because that parser rejects valid JSON that config writers produce:
// "\/" escapes and surrogate pairs ("\ud83d\ude00", Python's default).
// Comments and trailing commas are allowed, as in VS Code's mcp.json.
func parseJSON(data []byte, lines *lineIndex) (*yaml.Node, *Diagnostic) {
	clean := stripJSONC(data)
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
	root, err := read()
	if err == nil {
		_, err = dec.ReadToken()
		if err == nil {
			err = errors.New("more after the end of the top-level value")
		} else if err == io.EOF {
			return &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}, nil
		}
	}
	return nil, jsonError(err, data, lines, dec.InputOffset())
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

// stripJSONC blanks comments and trailing commas with spaces, keeping
// every other byte where it was so that offsets still name the same line
// and column in the original.
func stripJSONC(data []byte) []byte {
	b := bytes.Clone(data)
	blank := func(i, j int) {
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
				return b // the decoder reports the stray '/'
			}
			blank(i, i+2+j+2)
			i += 2 + j + 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				b[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		default:
			lastComma = -1
		}
	}
	return b
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
