package wire

import "unicode/utf8"

// The scanner checks JSON text in one pass without building values. It
// says "ok" only for text that is certainly valid under the strict rules
// the real decoder applies (RFC 8259 syntax, valid UTF-8, no duplicate
// member names in any object), and "not ok" for everything else,
// including valid text it does not handle: member names written with
// escapes, nesting deeper than maxDepth, more than maxNames member names
// open at once. A caller then falls back to the real codec, which rules
// and words the error, so the scanner cannot change what is accepted.

const (
	// maxDepth is the deepest nesting of objects and arrays handled.
	maxDepth = 128
	// maxNames is how many member names may be open at once (the members
	// of an object and of the objects enclosing it), for the duplicate
	// check.
	maxNames = 64
)

// span is a member name: the bytes between its quotes, which hold no
// escapes. int32 keeps the scanner small (it is zeroed on every call);
// longer texts are left to the real decoder.
type span struct{ start, end int32 }

func tooLong(data []byte) bool { return len(data) > 1<<31-1 }

type scanner struct {
	data  []byte
	depth int
	n     int // names in use
	names [maxNames]span
}

// valid reports whether data is exactly one JSON value, with optional
// whitespace around it, that is certainly valid.
func valid(data []byte) bool {
	if tooLong(data) {
		return false
	}
	var s scanner
	s.data = data
	end, ok := s.value(skipSpace(data, 0))
	return ok && skipSpace(data, end) == len(data)
}

// members checks that data is exactly one JSON object, with optional
// whitespace around it, and calls each for every member in order, with
// the name's bytes between the quotes (escape-free) and the value's text.
// It stops, returning false, when each does.
func members(data []byte, each func(name, value []byte) bool) bool {
	if tooLong(data) {
		return false
	}
	var s scanner
	s.data = data
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	s.depth = 1
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return skipSpace(data, i+1) == len(data)
	}
	for {
		ns, ne, ok := s.name(i)
		if !ok || !s.record(0, ns, ne) {
			return false
		}
		i = skipSpace(data, ne+1)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		vs := skipSpace(data, i+1)
		ve, ok := s.value(vs)
		if !ok || !each(data[ns:ne], data[vs:ve]) {
			return false
		}
		i = skipSpace(data, ve)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return skipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// unquoted returns the bytes between the quotes of a JSON string value,
// and false when it has escapes (its text then differs from its bytes).
func unquoted(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c == '\\' {
			return nil, false
		}
	}
	return s, true
}

// plain marks the bytes a string scan passes over: printable ASCII but
// the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func (s *scanner) value(i int) (int, bool) {
	data := s.data
	if i >= len(data) {
		return i, false
	}
	switch c := data[i]; {
	case c == '"':
		return s.str(i)
	case c == '{':
		return s.object(i)
	case c == '[':
		return s.array(i)
	case c == 't':
		return literal(data, i, "true")
	case c == 'f':
		return literal(data, i, "false")
	case c == 'n':
		return literal(data, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return number(data, i)
	}
	return i, false
}

func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at data[i].
func number(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return i, false
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		i = digits(data, i+1)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(data, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(data, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

func digits(data []byte, i int) int {
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	return i
}

// str checks the string at data[i] (a quote) and returns the index past
// its closing quote.
func (s *scanner) str(i int) (int, bool) {
	data := s.data
	for i++; i < len(data); {
		c := data[i]
		switch {
		case plain[c]:
			i++
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(data) {
				return i, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				r, ok := hex4(data, i+2)
				switch {
				case !ok || r >= 0xdc00 && r <= 0xdfff:
					return i, false
				case r >= 0xd800 && r <= 0xdbff:
					// Half a pair: the real decoder refuses it alone.
					if len(data)-i < 12 || data[i+6] != '\\' || data[i+7] != 'u' {
						return i, false
					}
					if lo, ok := hex4(data, i+8); !ok || lo < 0xdc00 || lo > 0xdfff {
						return i, false
					}
					i += 12
				default:
					i += 6
				}
			default:
				return i, false
			}
		case c < 0x20:
			return i, false
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return i, false
			}
			i += size
		}
	}
	return i, false
}

// hex4 reads the four hex digits of a \u escape at data[i].
func hex4(data []byte, i int) (rune, bool) {
	if len(data)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// name checks a member name at data[i]; it returns the bounds of the
// bytes between the quotes. A name with escapes is not handled: its text
// differs from its bytes, and the duplicate check compares bytes.
func (s *scanner) name(i int) (int, int, bool) {
	data := s.data
	if i >= len(data) || data[i] != '"' {
		return 0, 0, false
	}
	start := i + 1
	for i = start; i < len(data); {
		c := data[i]
		switch {
		case plain[c]:
			i++
		case c == '"':
			return start, i, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, 0, false
			}
			i += size
		}
	}
	return 0, 0, false
}

func (s *scanner) object(i int) (int, bool) {
	if s.depth >= maxDepth {
		return i, false
	}
	s.depth++
	base := s.n
	end, ok := s.members(i, base)
	s.depth--
	s.n = base
	return end, ok
}

func (s *scanner) members(i, base int) (int, bool) {
	data := s.data
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		ns, ne, ok := s.name(i)
		if !ok || !s.record(base, ns, ne) {
			return i, false
		}
		i = skipSpace(data, ne+1)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i, ok = s.value(skipSpace(data, i+1))
		if !ok {
			return i, false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// record adds a name to the open object's names (those from base on),
// and is false when it is already there or there is no room.
func (s *scanner) record(base, start, end int) bool {
	name := s.data[start:end]
	for _, sp := range s.names[base:s.n] {
		if string(s.data[sp.start:sp.end]) == string(name) {
			return false
		}
	}
	if s.n == maxNames {
		return false
	}
	s.names[s.n] = span{int32(start), int32(end)}
	s.n++
	return true
}

func (s *scanner) array(i int) (int, bool) {
	if s.depth >= maxDepth {
		return i, false
	}
	s.depth++
	end, ok := s.elements(i)
	s.depth--
	return end, ok
}

func (s *scanner) elements(i int) (int, bool) {
	data := s.data
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		i, ok = s.value(i)
		if !ok {
			return i, false
		}
		i = skipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}
