// Package jsonscan checks JSON text in one pass without building values,
// for the hot paths that only need to know that a message is well formed
// and where its members are: the JSON-RPC envelope, tools/call params, the
// arguments of a flat input schema.
//
// It is an accelerator, not a parser of record. It says "ok" only for text
// that is certainly valid under the strict rules the full decoder applies
// (RFC 8259 syntax, valid UTF-8, no duplicate member names in any object),
// and "not ok" for everything else, including valid text it does not
// handle: member names written with escapes, nesting deeper than MaxDepth,
// more than MaxNames member names open at once. Callers then go to the full
// decoder (go-json-experiment/json), which decides and words the error; so
// a rejection here never reaches a peer, and the fast path cannot change
// what is accepted.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
	"unsafe"
)

const (
	// MaxDepth is the deepest nesting of objects and arrays handled.
	MaxDepth = 128
	// MaxNames is how many member names may be open at once (the members
	// of an object and of the objects enclosing it), for the duplicate
	// check.
	MaxNames = 64
)

// span is a member name: the bytes between its quotes, which hold no
// escapes. int32 keeps the scanner small (it is zeroed on every call);
// longer texts are left to the full decoder.
type span struct{ start, end int32 }

func tooLong(data []byte) bool { return len(data) > 1<<31-1 }

type scanner struct {
	data  []byte
	depth int
	n     int // names in use
	names [MaxNames]span
}

// Valid reports whether data is exactly one JSON value, with optional
// whitespace around it, that is certainly valid.
func Valid(data []byte) bool {
	if tooLong(data) {
		return false
	}
	var s scanner
	s.data = data
	end, ok := s.value(SkipSpace(data, 0))
	return ok && SkipSpace(data, end) == len(data)
}

// Skip checks the value that starts at data[i] (after optional whitespace)
// and returns the index just past it.
func Skip(data []byte, i int) (int, bool) {
	if tooLong(data) {
		return i, false
	}
	var s scanner
	s.data = data
	return s.value(SkipSpace(data, i))
}

// The four loops below (Members, Elements, members, elements) each write
// out their comma-or-close tail: as a shared helper it is not inlined,
// and a small tools/call scans 8.5% slower (BenchmarkValid/call).

// Members checks the object that starts at data[i] (after optional
// whitespace) and calls each for every member in order, with the name's
// bytes between the quotes (escape-free) and the value's text. It stops,
// returning false, when each does. It returns the index just past the
// object.
func Members(data []byte, i int, each func(name, value []byte) bool) (int, bool) {
	if tooLong(data) {
		return i, false
	}
	var s scanner
	s.data = data
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
		return i, false
	}
	s.depth = 1
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		ns, ne, ok := s.name(i)
		if !ok || !s.record(0, ns, ne) {
			return i, false
		}
		i = SkipSpace(data, ne+1)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		vs := SkipSpace(data, i+1)
		ve, ok := s.value(vs)
		if !ok || !each(data[ns:ne], data[vs:ve]) {
			return ve, false
		}
		i = SkipSpace(data, ve)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// Elements checks the array that starts at data[i] (after optional
// whitespace) and calls each for every element's text in order. It stops,
// returning false, when each does. It returns the index just past the
// array.
func Elements(data []byte, i int, each func(value []byte) bool) (int, bool) {
	if tooLong(data) {
		return i, false
	}
	var s scanner
	s.data = data
	i = SkipSpace(data, i)
	if i >= len(data) || data[i] != '[' {
		return i, false
	}
	s.depth = 1
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := s.value(i)
		if !ok || !each(data[i:end]) {
			return end, false
		}
		i = SkipSpace(data, end)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// SkipSpace returns the index of the first non-whitespace byte at or after i.
func SkipSpace(data []byte, i int) int {
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

// Unquoted returns the bytes between the quotes of a JSON string value,
// and false when it has escapes (its text then differs from its bytes).
func Unquoted(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, false
	}
	s := v[1 : len(v)-1]
	return s, bytes.IndexByte(s, '\\') < 0
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// Plain reports whether s is written between quotes as it is: printable
// ASCII but the quote and the backslash, nothing to escape. Encoders use
// it to skip escaping the common text.
func Plain(s string) bool {
	return plainRun(unsafe.Slice(unsafe.StringData(s), len(s)), 0) == len(s)
}

// plain marks the bytes a string scan passes over: printable ASCII but
// the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// skipPlain returns the index of the first byte at or after i that a
// string scan must look at, or len(data). Short runs, the most common
// (names, methods, ids), are passed a byte at a time; a run longer than
// eight bytes goes on eight at a time.
func skipPlain(data []byte, i int) int {
	for end := min(i+8, len(data)); i < end; i++ {
		if !plain[data[i]] {
			return i
		}
	}
	return plainRun(data, i)
}

// plainRun returns the index of the first byte at or after i that a
// string scan must look at (a quote, a backslash, a control character or
// a non-ASCII byte), or len(data), eight bytes at a time.
func plainRun(data []byte, i int) int {
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		quote := w ^ (ones * '"')
		slash := w ^ (ones * '\\')
		// A byte is zero in quote or slash, or below 0x20 in w, or has its
		// high bit set: the exact tests of "Bit Twiddling Hacks".
		if ((quote-ones)&^quote|(slash-ones)&^slash|(w-ones*0x20)&^w|w)&highs != 0 {
			break
		}
	}
	for ; i < len(data); i++ {
		if !plain[data[i]] {
			return i
		}
	}
	return i
}

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
	i++
	for i < len(data) {
		if i = skipPlain(data, i); i >= len(data) {
			break
		}
		c := data[i]
		switch {
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
					// Half a pair: the full decoder refuses it alone.
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
		case c < utf8.RuneSelf:
			i++
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
		if i = skipPlain(data, i); i >= len(data) {
			break
		}
		c := data[i]
		switch {
		case c == '"':
			return start, i, true
		case c == '\\' || c < 0x20:
			return 0, 0, false
		case c < utf8.RuneSelf:
			i++
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
	if s.depth >= MaxDepth {
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
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, true
	}
	for {
		ns, ne, ok := s.name(i)
		if !ok || !s.record(base, ns, ne) {
			return i, false
		}
		i = SkipSpace(data, ne+1)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		i, ok = s.value(SkipSpace(data, i+1))
		if !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
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
		if int(sp.end-sp.start) == len(name) && string(s.data[sp.start:sp.end]) == string(name) {
			return false
		}
	}
	if s.n == MaxNames {
		return false
	}
	s.names[s.n] = span{int32(start), int32(end)}
	s.n++
	return true
}

func (s *scanner) array(i int) (int, bool) {
	if s.depth >= MaxDepth {
		return i, false
	}
	s.depth++
	end, ok := s.elements(i)
	s.depth--
	return end, ok
}

func (s *scanner) elements(i int) (int, bool) {
	data := s.data
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		i, ok = s.value(i)
		if !ok {
			return i, false
		}
		i = SkipSpace(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = SkipSpace(data, i+1)
		case ']':
			return i + 1, true
		default:
			return i, false
		}
	}
}
