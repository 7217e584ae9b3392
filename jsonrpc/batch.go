package jsonrpc

import (
	"bytes"

	"github.com/go-json-experiment/json/jsontext"
)

// IsBatch reports whether data is a JSON array, the form of a batch.
func IsBatch(data []byte) bool {
	for _, c := range data {
		if !isSpace(c) {
			return c == '['
		}
	}
	return false
}

// SplitBatch returns the elements of a batch as slices of data. It fails
// on invalid JSON (-32700) and on an empty array (-32600), with an *[Error]
// to answer with. Elements are not validated as messages: decode each with
// [DecodeMessage], which answers a non-object element with its own -32600.
func SplitBatch(data []byte) ([][]byte, error) {
	elems, e := splitBatch(data)
	if e != nil {
		return nil, e
	}
	return elems, nil
}

func splitBatch(data []byte) ([][]byte, *Error) {
	if !jsontext.Value(data).IsValid(jsontext.AllowInvalidUTF8(true)) || !isValidUTF8(data) {
		var m Message
		if de := m.decode(data); de != nil {
			return nil, de.Err
		}
		return nil, &Error{Code: CodeParseError, Message: "Parse error: the batch is not valid JSON"}
	}
	d := jsontext.NewDecoder(bytes.NewBuffer(data), jsontext.AllowInvalidUTF8(true))
	if _, err := d.ReadToken(); err != nil {
		return nil, &Error{Code: CodeParseError, Message: "Parse error: " + describeSyntaxError(err, data)}
	}
	var elems [][]byte
	for d.PeekKind() != ']' {
		v, err := d.ReadValue()
		if err != nil {
			return nil, &Error{Code: CodeParseError, Message: "Parse error: " + describeSyntaxError(err, data)}
		}
		end := int(d.InputOffset())
		elems = append(elems, data[end-len(v):end:end])
	}
	if len(elems) == 0 {
		return nil, &Error{Code: CodeInvalidRequest, Message: "Invalid Request: the batch is empty; send at least one message"}
	}
	return elems, nil
}
