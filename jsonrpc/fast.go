package jsonrpc

import "github.com/mcpgate/mcpgate/internal/jsonscan"

// decodeFast fills the zero message m from data when data is a well-formed
// request, notification or success response, and reports whether it did.
// It is the common case in one pass over the bytes; anything else (an
// error, an error response, a name or method written with escapes) is left
// to decode, which rules on it and words the answer, so both paths accept
// exactly the same messages with the same content.
func (m *Message) decodeFast(data []byte) bool {
	var jv, idRaw, method, params, result, errv []byte
	end, ok := jsonscan.Members(data, 0, func(name, value []byte) bool {
		// Clip the capacity, as decode does: a caller appending to a
		// value must not write over the rest of the message.
		value = value[:len(value):len(value)]
		switch string(name) {
		case "jsonrpc":
			jv = value
		case "id":
			idRaw = value
		case "method":
			method = value
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			errv = value
		}
		return true // other members are ignored, as decode does
	})
	if !ok || jsonscan.SkipSpace(data, end) != len(data) || string(jv) != `"2.0"` || errv != nil {
		return false
	}
	if idRaw != nil {
		id, err := parseID(idRaw)
		if err != nil {
			return false
		}
		m.ID = id
	}
	if method == nil {
		if result == nil || idRaw == nil {
			return false
		}
		m.Result = result
		return true
	}
	if result != nil {
		return false
	}
	if m.Method = methodName(method); m.Method == "" {
		name, plain := jsonscan.Unquoted(method)
		if !plain || len(name) == 0 {
			return false
		}
		m.Method = string(name)
	}
	switch {
	case params == nil:
	case params[0] == '{':
		m.Params = params
	case params[0] != 'n': // null params are read as absent
		return false
	}
	return true
}
