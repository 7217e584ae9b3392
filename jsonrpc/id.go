package jsonrpc

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// ID is a request id: a JSON string or integer kept as the exact text the
// peer sent. The zero ID means "no id" (a notification, or an error reply to
// a message whose id could not be read, which is encoded as null).
//
// IDs are comparable and can be used as map keys; two ids are equal only if
// their JSON text is identical, so "1" and 1 are different ids.
type ID struct{ raw string }

// IntID returns the id for the integer n.
func IntID(n int64) ID { return ID{strconv.FormatInt(n, 10)} }

// StringID returns the id for the string s.
func StringID(s string) ID {
	b, _ := jsontext.AppendQuote(nil, s)
	return ID{string(b)}
}

// IsZero reports whether id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether id is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Raw returns the JSON text of the id, or null for the zero ID.
func (id ID) Raw() []byte {
	if id.raw == "" {
		return []byte("null")
	}
	return []byte(id.raw)
}

// String returns the JSON text of the id, for logs.
func (id ID) String() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// Int64 returns the value of an integer id that fits in an int64.
func (id ID) Int64() (int64, bool) {
	if id.IsZero() || id.IsString() {
		return 0, false
	}
	n, err := strconv.ParseInt(id.raw, 10, 64)
	return n, err == nil
}

// MarshalJSON returns the id's JSON text unchanged.
func (id ID) MarshalJSON() ([]byte, error) { return id.Raw(), nil }

// UnmarshalJSON accepts a JSON string or integer and keeps its text.
func (id *ID) UnmarshalJSON(b []byte) error {
	v := jsontext.Value(b)
	if !v.IsValid(jsontext.AllowInvalidUTF8(true)) {
		return &Error{Code: CodeInvalidRequest, Message: "id is not valid JSON"}
	}
	parsed, err := parseID(trimSpace(b))
	if err != nil {
		return err
	}
	*id = parsed
	return nil
}

// parseID validates the raw JSON text of an id member.
func parseID(raw []byte) (ID, *Error) {
	if len(raw) == 0 {
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id is empty"}
	}
	switch raw[0] {
	case '"':
		return ID{string(raw)}, nil
	case 'n':
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer, not null"}
	case 't', 'f':
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer, not a boolean"}
	case '{':
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer, not an object"}
	case '[':
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer, not an array"}
	}
	if !isJSONInteger(raw) {
		return ID{}, &Error{Code: CodeInvalidRequest, Message: "id must be a string or an integer, not the fractional or exponent number " + truncate(string(raw), 40)}
	}
	return ID{string(raw)}, nil
}

// isJSONInteger reports whether raw, a valid JSON number, has neither a
// fraction nor an exponent. Its magnitude is not limited: ids are echoed as
// text, never converted.
func isJSONInteger(raw []byte) bool {
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
