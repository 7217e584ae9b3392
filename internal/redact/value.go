package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
)

// Value returns v with its secrets hidden. v is decoded JSON (what
// encoding/json gives an any: map[string]any, []any, string, float64,
// json.Number, bool, nil) or one of the Go types that carry headers,
// flags and environments: map[string]string, []string,
// map[string][]string, [net/http.Header], [net/url.Values].
//
// A member with a secret [Name] becomes [Marker] whatever its value
// (a number, an object, a list), except a bool, nil or the empty
// string, which say nothing secret (auth_required: true, token: "").
// Every other string, and every member name, goes through [String].
//
// v is not modified: the parts that change are copied, and where nothing
// needs hiding the result is v itself. Value walks all of v; limits on
// depth, list length and string length are the caller's, applied to the
// result (cutting first could cut a key's shape short).
func Value(v any) any {
	r, _ := value(v)
	return r
}

// value returns v redacted and whether anything changed; v itself
// (not a copy of the interface) when nothing did.
func value(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		if r, ok := redactString(x); ok {
			return r, true
		}
	case map[string]any:
		if r, ok := object(x, member); ok {
			return r, true
		}
	case []any:
		if r, ok := list(x, value); ok {
			return r, true
		}
	case map[string]string:
		if r, ok := object(x, stringMember); ok {
			return r, true
		}
	case []string:
		if r, ok := list(x, redactString); ok {
			return r, true
		}
	case map[string][]string:
		if r, ok := object(x, stringsMember); ok {
			return r, true
		}
	case http.Header:
		if r, ok := object(x, stringsMember); ok {
			return r, true
		}
	case url.Values:
		if r, ok := object(x, stringsMember); ok {
			return r, true
		}
	}
	return v, false
}

// member redacts the value of the member called name.
func member(name string, v any) (any, bool) {
	if !Name(name) {
		return value(v)
	}
	switch v {
	case nil, true, false, "", Marker:
		return v, false
	}
	return Marker, true
}

func stringMember(name, s string) (string, bool) {
	if Name(name) && s != "" {
		return Marker, s != Marker
	}
	return redactString(s)
}

func stringsMember(name string, l []string) ([]string, bool) {
	if !Name(name) {
		return list(l, redactString)
	}
	var out []string
	for i, s := range l {
		if s != "" && s != Marker {
			if out == nil {
				out = append([]string(nil), l...)
			}
			out[i] = Marker
		}
	}
	if out == nil {
		return l, false
	}
	return out, true
}

// object redacts a map's names and, by f, its values, copying it on the
// first change.
func object[M ~map[string]E, E any](m M, f func(string, E) (E, bool)) (M, bool) {
	var out M
	for k, e := range m {
		nk, kc := redactString(k)
		ne, ec := f(k, e)
		if !kc && !ec {
			continue
		}
		if out == nil {
			out = make(M, len(m))
			for k2, e2 := range m {
				out[k2] = e2
			}
		}
		if kc {
			delete(out, k)
		}
		out[nk] = ne
	}
	if out == nil {
		return m, false
	}
	return out, true
}

// list redacts a slice's elements by f, copying it on the first change.
func list[E any](l []E, f func(E) (E, bool)) ([]E, bool) {
	var out []E
	for i, e := range l {
		ne, changed := f(e)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]E(nil), l...)
		}
		out[i] = ne
	}
	if out == nil {
		return l, false
	}
	return out, true
}

// JSON returns the JSON text raw with its secrets hidden as by [Value],
// as compact JSON with members in sorted order (as encoding/json writes
// a map) and numbers as they were written. The result is always
// re-encoded, so that a member that appears twice cannot hide a secret
// in the copy that decoding drops. raw that is not one JSON value is an
// error; its text can still go through [String].
func JSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("redact: data after the JSON value")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(Value(v)); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
