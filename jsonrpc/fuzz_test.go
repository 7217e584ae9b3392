package jsonrpc

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FuzzDecodeMessage checks that no input crashes the decoder, that every
// answer it implies is itself a valid message carrying the peer's id
// unchanged, that a parse error is answered with a null id, and that an
// object with no method, result or error is answered, never dropped.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"b":[1,{"c":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":18446744073709551617,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"id":2}`,
		"{\"a\":\"\xff\"}",
		`[[[[[[[[[[`,
		``,
		`{}`,
		`{"id":1}`,
		`{"jsonrpc":"2.0","id":7,"method":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if IsBatch(data) {
			elems, err := SplitBatch(data)
			if err == nil && len(elems) == 0 {
				t.Fatal("SplitBatch returned no elements and no error")
			}
			return
		}
		m, err := DecodeMessage(data)
		var de *DecodeError
		if err != nil && !errors.As(err, &de) {
			t.Fatalf("error %T is not a *DecodeError", err)
		}
		if neither(data) && (de == nil || !de.Reply) {
			t.Fatalf("%q has no method, result or error, and is not answered", data)
		}
		var out []byte
		switch {
		case de != nil:
			if m != nil {
				t.Fatal("message and error both returned")
			}
			if de.Err == nil || de.Err.Message == "" {
				t.Fatal("error without a message")
			}
			if de.Err.Code == CodeParseError && (!de.ID.IsZero() || !de.Reply) {
				t.Fatalf("parse error answered with id %s (reply %v), want null", de.ID, de.Reply)
			}
			out = AppendError(nil, de.ID, de.Err)
		case m.Kind() == KindRequest:
			if !bytes.Contains(data, m.ID.Raw()) {
				t.Fatalf("id %s is not in the input", m.ID.Raw())
			}
			out = AppendResult(nil, m.ID, []byte(`{}`))
			if m.Params != nil && !jsontext.Value(m.Params).IsValid(jsontext.AllowInvalidUTF8(true)) {
				t.Fatal("params not valid JSON")
			}
		default:
			return
		}
		if !jsontext.Value(out).IsValid(jsontext.AllowInvalidUTF8(true)) {
			t.Fatalf("reply is not valid JSON: %s", out)
		}
		if _, err := DecodeMessage(out); errors.As(err, &de) && de.Err.Code == CodeParseError {
			t.Fatalf("reply does not decode: %s: %v", out, err)
		}
	})
}

// neither reports whether data is a JSON object with no "method", "result"
// or "error" member: not a request, a notification or a response.
func neither(data []byte) bool {
	var members map[string]jsontext.Value
	if json.Unmarshal(data, &members, jsontext.AllowInvalidUTF8(true)) != nil || members == nil {
		return false
	}
	_, m := members["method"]
	_, r := members["result"]
	_, e := members["error"]
	return !m && !r && !e
}

func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte("\n\n\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max <= 0 || max > 1<<20 {
			max = 8
		}
		lr := NewLineReader(bytes.NewReader(data), max)
		for i := 0; i <= len(data)+1; i++ {
			line, err := lr.Read()
			if err != nil {
				if _, ok := err.(*TooLargeError); ok {
					continue
				}
				return
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("line %q breaks the limit %d", line, max)
			}
		}
		t.Fatal("reader did not reach the end")
	})
}
