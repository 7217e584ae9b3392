package jsonrpc

import (
	"bytes"

	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// unmarshal decodes with the options used for every peer-supplied value:
// escaped lone surrogates are tolerated (raw invalid UTF-8 was rejected
// earlier), duplicate member names are not.
func unmarshal(data []byte, v any) error {
	return json.Unmarshal(data, v, jsontext.AllowInvalidUTF8(true))
}

func unquote(raw []byte) (string, error) {
	var s string
	err := unmarshal(raw, &s)
	return s, err
}

func isValidUTF8(b []byte) bool { return utf8.Valid(b) }

func jsontextDecoder(b []byte) *jsontext.Decoder {
	return jsontext.NewDecoder(bytes.NewReader(b), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
}
