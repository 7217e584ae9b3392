package jsonrpc

import (
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Replies are assembled by hand around pre-encoded values: the envelope is
// fixed text, and building it directly avoids a second encoding pass over
// results that are often large.

// AppendResult appends a success response carrying the JSON text result.
func AppendResult(dst []byte, id ID, result []byte) []byte {
	if dst == nil {
		// One allocation of the right size, not a few as it grows.
		dst = make([]byte, 0, len(`{"jsonrpc":"2.0","id":,"result":}`)+len(id.raw)+4+len(result))
	}
	dst = AppendResultHead(dst, id)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendResultHead appends a success response up to its result, for a
// caller that encodes the result in place: it appends the result's JSON
// text and then a closing '}'.
func AppendResultHead(dst []byte, id ID) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	return append(dst, `,"result":`...)
}

// AppendError appends an error response. The zero id is written as null.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"error":`...)
	dst = appendErrorObject(dst, e)
	return append(dst, '}')
}

// AppendRequest appends a request; params may be nil.
func AppendRequest(dst []byte, id ID, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id.Raw()...)
	dst = append(dst, `,"method":`...)
	dst, _ = jsontext.AppendQuote(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst, _ = jsontext.AppendQuote(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func appendErrorObject(dst []byte, e *Error) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, e.Code, 10)
	dst = append(dst, `,"message":`...)
	// Invalid UTF-8 in a message is replaced, never passed on.
	dst, _ = jsontext.AppendQuote(dst, e.Message)
	if len(e.Data) > 0 && jsontext.Value(e.Data).IsValid() {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}

// Marshal encodes v with the options mcpgate uses for every message:
// nil slices and maps are written as [] and {} (never null) and invalid
// UTF-8 is rejected.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }

// Unmarshal decodes a peer-supplied value into v. Escaped lone surrogates in
// strings are replaced with U+FFFD rather than rejected (raw invalid UTF-8
// never gets this far); duplicate member names are rejected.
func Unmarshal(data []byte, v any) error { return unmarshal(data, v) }
