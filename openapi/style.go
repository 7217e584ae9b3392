package openapi

// Parameter serialisation, by the style and explode of the OpenAPI
// specification (section 4.8.12.4 of 3.1.1, "Style Examples"). Values are
// escaped here, each on its own, so that the delimiters a style puts
// between them are the only structure a value can add: a path value with
// '/', '?', '#' or "%2F" stays within its segment, and a query value with
// '&' or '=' within its parameter.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// scalar returns a primitive value as text.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		return x.String(), true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10), true
		}
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32), true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), true
	}
	return "", false
}

// text is a value as one piece of text: a scalar as it is, an array or
// object nested in another as its JSON, which no style defines.
func text(v any) string {
	if s, ok := scalar(v); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// shape is a value taken apart: a scalar, a list, or pairs of an object,
// its keys sorted so that a request is the same for the same arguments.
type shape struct {
	scalar *string
	items  []string
	pairs  [][2]string
}

func shapeOf(v any, asJSON bool) shape {
	if asJSON {
		b, _ := json.Marshal(v)
		s := string(b)
		return shape{scalar: &s}
	}
	switch x := v.(type) {
	case []any:
		items := make([]string, len(x))
		for i, it := range x {
			items[i] = text(it)
		}
		return shape{items: items}
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		pairs := make([][2]string, len(keys))
		for i, k := range keys {
			pairs[i] = [2]string{k, text(x[k])}
		}
		return shape{pairs: pairs}
	}
	s := text(v)
	return shape{scalar: &s}
}

// unreserved says whether c is an RFC 3986 unreserved character, the only
// ones never escaped.
func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// escape percent-encodes every byte of s but the unreserved ones and
// those keep allows.
func escape(s string, keep string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) || keep != "" && strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// reservedKept are the reserved characters that allowReserved leaves
// unescaped. '&', '=', '+', '#' and ';' are escaped all the same: they
// would end the value or the query, for some servers (Go's among them,
// for ';') the parameter too.
const reservedKept = ":/?@!$'()*,[]"

// pathValue serialises a path parameter: simple, label or matrix.
func pathValue(p *param, v any) string {
	sh := shapeOf(v, p.asJSON)
	esc := func(s string) string { return escape(s, "") }
	name := esc(p.name)
	join := func(items []string, sep string, prefix string) string {
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = prefix + esc(it)
		}
		return strings.Join(out, sep)
	}
	pairs := func(kv, sep, prefix string) string {
		out := make([]string, len(sh.pairs))
		for i, p := range sh.pairs {
			out[i] = prefix + esc(p[0]) + kv + esc(p[1])
		}
		return strings.Join(out, sep)
	}
	switch {
	case sh.scalar != nil:
		switch p.style {
		case "label":
			return "." + esc(*sh.scalar)
		case "matrix":
			if *sh.scalar == "" {
				return ";" + name
			}
			return ";" + name + "=" + esc(*sh.scalar)
		}
		return esc(*sh.scalar)
	case sh.items != nil:
		switch {
		case p.style == "label" && p.explode:
			return "." + join(sh.items, ".", "")
		case p.style == "label":
			return "." + join(sh.items, ",", "")
		case p.style == "matrix" && p.explode:
			return join(sh.items, "", ";"+name+"=")
		case p.style == "matrix":
			return ";" + name + "=" + join(sh.items, ",", "")
		}
		return join(sh.items, ",", "")
	default:
		switch {
		case p.style == "label" && p.explode:
			return "." + pairs("=", ".", "")
		case p.style == "label":
			return "." + pairs(",", ",", "")
		case p.style == "matrix" && p.explode:
			return pairs("=", "", ";")
		case p.style == "matrix":
			return ";" + name + "=" + pairs(",", ",", "")
		case p.explode:
			return pairs("=", ",", "")
		}
		return pairs(",", ",", "")
	}
}

// queryPairs serialises a query parameter, or a property of a form body,
// as name=value pairs: form, spaceDelimited, pipeDelimited or deepObject.
func queryPairs(name, style string, explode, allowReserved, asJSON bool, v any) []string {
	keep := ""
	if allowReserved {
		keep = reservedKept
	}
	esc := func(s string) string { return escape(s, keep) }
	n := escape(name, "")
	if style == "deepObject" {
		if m, ok := v.(map[string]any); ok && !asJSON {
			return deepPairs(n, m, esc, 0)
		}
		explode = true
	}
	sh := shapeOf(v, asJSON)
	sep := ","
	switch style {
	case "spaceDelimited":
		sep = "%20"
	case "pipeDelimited":
		sep = "|"
	}
	switch {
	case sh.scalar != nil:
		return []string{n + "=" + esc(*sh.scalar)}
	case sh.items != nil && explode:
		out := make([]string, len(sh.items))
		for i, it := range sh.items {
			out[i] = n + "=" + esc(it)
		}
		return out
	case sh.items != nil:
		out := make([]string, len(sh.items))
		for i, it := range sh.items {
			out[i] = esc(it)
		}
		return []string{n + "=" + strings.Join(out, sep)}
	case explode:
		out := make([]string, len(sh.pairs))
		for i, p := range sh.pairs {
			out[i] = escape(p[0], "") + "=" + esc(p[1])
		}
		return out
	}
	out := make([]string, 0, 2*len(sh.pairs))
	for _, p := range sh.pairs {
		out = append(out, esc(p[0]), esc(p[1]))
	}
	return []string{n + "=" + strings.Join(out, sep)}
}

// deepPairs serialises an object as deepObject: name[key]=value, nested
// objects by more brackets and arrays by repeating the pair, as the
// common implementations do where the specification says nothing.
func deepPairs(prefix string, m map[string]any, esc func(string) string, depth int) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := prefix + "[" + escape(k, "") + "]"
		switch x := m[k].(type) {
		case map[string]any:
			if depth < maxNesting {
				out = append(out, deepPairs(key, x, esc, depth+1)...)
				continue
			}
			out = append(out, key+"="+esc(text(x)))
		case []any:
			for _, it := range x {
				out = append(out, key+"="+esc(text(it)))
			}
		default:
			out = append(out, key+"="+esc(text(x)))
		}
	}
	return out
}

// headerValue serialises a header parameter, style simple.
func headerValue(p *param, v any) (string, error) {
	sh := shapeOf(v, p.asJSON)
	var s string
	switch {
	case sh.scalar != nil:
		s = *sh.scalar
	case sh.items != nil:
		s = strings.Join(sh.items, ",")
	default:
		out := make([]string, 0, len(sh.pairs))
		for _, kv := range sh.pairs {
			if p.explode {
				out = append(out, kv[0]+"="+kv[1])
			} else {
				out = append(out, kv[0], kv[1])
			}
		}
		s = strings.Join(out, ",")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return "", argErrorf("%s: a header value cannot hold control characters such as line breaks", p.arg)
		}
	}
	return s, nil
}

// cookiePairs serialises a cookie parameter, style form, as name=value
// pairs, escaped as in a query so that no value can add a cookie.
func cookiePairs(p *param, v any) []string {
	return queryPairs(p.name, "form", p.explode, false, p.asJSON, v)
}
