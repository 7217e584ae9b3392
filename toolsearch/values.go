package toolsearch

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Requests carry values: "fetch http://127.0.0.1:43685/", "add 2 and 3",
// "read /tmp/notes.txt", "refund pi_3MtwBw...". Split into words, a
// value's parts match whatever tool has them in its name or text (127,
// 0 and 1; tmp and notes; a page2 or an s3) and say nothing of the tool
// meant. So a query's values are taken out before its words are
// analysed, and stand instead for what they are: evidence for a tool
// with parameters to take them (see fit). A URL fits a parameter named
// url or of format uri, a path one named path or file, a number one of
// type number, a date one of format date or whose documentation gives a
// date as an example, and an identifier one whose documentation gives an
// example of the same shape ("PROJ-123" fits an issue key documented
// with "e.g., ABC-123").

// valueKind is what kind of value a query carries and a parameter takes.
type valueKind uint8

const (
	valueID valueKind = iota // an identifier: it fits a parameter by its shape
	valueURL
	valuePath
	valueEmail
	valueNumber
	valueDate
	numValueKinds
)

// value is a value of a query or of a parameter's documentation.
type value struct {
	kind  valueKind
	shape uint32 // an identifier's (see shapeOf), zero for other kinds
}

// kindWords are the words tools use for each kind of value, in their
// names and text ("web_url_read", "the path of the file"), which a value
// of the kind implies.
var kindWords = [numValueKinds][]string{
	valueURL:    {"url"},
	valuePath:   {"path", "file"},
	valueEmail:  {"email"},
	valueNumber: {"number"},
	valueDate:   {"date"},
}

// queryValues takes the values out of a query: it returns the text with
// each value's token blanked, but for a path's extension, and appends
// the values to vals in the order they came.
func queryValues(text string, vals []value) (rest string, _ []value) {
	var b []byte // text with values blanked, once there is one
	scanValues(text, func(start, end int, core string, v value) {
		vals = append(vals, v)
		if b == nil {
			b = []byte(text)
		}
		for j := start; j < end; j++ {
			b[j] = ' '
		}
		// A file's extension says what the file is (a pdf, a csv), and
		// so what reads it: it stays, a word.
		if v.kind == valuePath {
			ext := extension(core)
			at := start + strings.Index(text[start:end], core) + len(core) - len(ext)
			copy(b[at:], ext)
		}
	})
	if b == nil {
		return text, vals
	}
	return string(b), vals
}

// scanValues calls f for each token of text that is a value, with where
// the token starts and ends and its core (see trimToken). A token is a
// run of text between spaces.
func scanValues(text string, f func(start, end int, core string, v value)) {
	for i := 0; i < len(text); {
		start, end, maybe := nextToken(text, i)
		if start == end {
			return
		}
		i = end
		if !maybe {
			continue
		}
		core, placeholder := trimToken(text[start:end])
		v, ok := classify(core)
		if !ok || placeholder && v.kind != valueURL && v.kind != valueEmail {
			continue
		}
		f(start, end, core, v)
	}
}

// nextToken returns where the token at or after i starts and ends, and
// whether it may be a value: every value has a digit, a slash or an @,
// or starts with www (tool descriptions are mostly words, and this saves
// classifying them).
func nextToken(s string, i int) (start, end int, maybe bool) {
	space := func(i int) (bool, int) {
		if c := s[i]; c < utf8.RuneSelf {
			return c == ' ' || '\t' <= c && c <= '\r', 1
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		return unicode.IsSpace(r), n
	}
	for i < len(s) {
		sp, n := space(i)
		if !sp {
			break
		}
		i += n
	}
	start = i
	for i < len(s) {
		sp, n := space(i)
		if sp {
			break
		}
		if c := s[i]; isDigit(c) || c == '/' || c == '\\' || c == '@' {
			maybe = true
		}
		i += n
	}
	if t := s[start:i]; !maybe && len(t) > 4 {
		maybe = strings.Contains(t, "www.") || strings.Contains(t, "WWW.")
	}
	return start, i, maybe
}

// trimToken leaves out the quotes, brackets and sentence punctuation
// around a token: `("http://x/y").` is http://x/y. A placeholder
// (<server-name>) says in words what value goes there: it is left as
// it is, to be read as words, unless a URL or an address is written
// that way (<https://x/y>, <bob@example.com>).
func trimToken(t string) (core string, placeholder bool) {
	t = strings.TrimLeft(t, "\"'`([{«“‘")
	t = strings.TrimRight(t, "\"'`)]}»”’,;:.!?")
	if len(t) > 2 && t[0] == '<' && t[len(t)-1] == '>' {
		return t[1 : len(t)-1], true
	}
	return strings.Trim(t, "<>"), false
}

// classify says whether a token is a value, and which.
func classify(t string) (value, bool) {
	switch {
	case t == "":
		return value{}, false
	case isURL(t):
		return value{kind: valueURL}, true
	case isEmail(t):
		return value{kind: valueEmail}, true
	case isPath(t):
		return value{kind: valuePath}, true
	case isDate(t):
		return value{kind: valueDate}, true
	case isNumber(t):
		return value{kind: valueNumber}, true
	case isIdentifier(t) || isSlug(t):
		return value{kind: valueID, shape: shapeOf(t)}, true
	}
	return value{}, false
}

// isURL: a scheme and "://", or a host that starts with www.
func isURL(t string) bool {
	if len(t) > 4 && strings.EqualFold(t[:4], "www.") {
		return true
	}
	scheme, rest, ok := strings.Cut(t, "://")
	if !ok || scheme == "" || rest == "" || !isAlpha(scheme[0]) {
		return false
	}
	for i := 1; i < len(scheme); i++ {
		if c := scheme[i]; !isAlnum(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// isEmail: a local part, one @, and a domain with a dot in it, whose
// last label has a letter (lodash@4.17.21 is a package's version).
func isEmail(t string) bool {
	local, domain, ok := strings.Cut(t, "@")
	if !ok || local == "" || strings.ContainsAny(domain, "@/") {
		return false
	}
	dot := strings.LastIndexByte(domain, '.')
	return dot > 0 && strings.IndexFunc(domain[dot+1:], unicode.IsLetter) >= 0
}

// isPath: absolute or relative to home or here (/tmp, ~/x, ./x, C:\x), or
// folders and a file with an extension (src/main.go). Words joined by a
// slash ("read/write", "CI/CD", "owner/repo") are not paths.
func isPath(t string) bool {
	switch {
	case len(t) > 1 && t[0] == '/' && t[1] != '/',
		strings.HasPrefix(t, "~/"), strings.HasPrefix(t, "./"), strings.HasPrefix(t, "../"),
		strings.HasPrefix(t, `\\`),
		len(t) > 2 && isAlpha(t[0]) && t[1] == ':' && (t[2] == '\\' || t[2] == '/'):
		return true
	}
	return strings.LastIndexAny(t, `/\`) > 0 && extension(t) != ""
}

// extension returns the extension of a path's file, without its dot:
// up to 8 letters and digits, a letter among them and one run of digits
// at most (pdf, mp4), so that it reads as a word, never as a value
// (log.1 is a log's first rotation, not a type).
func extension(path string) string {
	file := path[strings.LastIndexAny(path, `/\`)+1:]
	dot := strings.LastIndexByte(file, '.')
	if dot <= 0 || len(file)-dot-1 > 8 {
		return ""
	}
	ext := file[dot+1:]
	letters := false
	for i := 0; i < len(ext); i++ {
		if !isAlnum(ext[i]) {
			return ""
		}
		letters = letters || isAlpha(ext[i])
	}
	if !letters || isIdentifier(ext) {
		return ""
	}
	return ext
}

// isDate: a calendar date (2025-03-14, 14/03/2025) or a time of day
// (10:00, 9:30:15), as written in requests.
func isDate(t string) bool {
	t, _, _ = strings.Cut(t, "T") // 2025-03-14T10:00
	if parts := lengths(t, ':'); parts.n == 2 || parts.n == 3 {
		return isDigits(t, ':') && parts.first <= 2 && parts.second == 2 && parts.last == 2
	}
	for _, sep := range []byte{'-', '/', '.'} {
		if parts := lengths(t, sep); parts.n == 3 && isDigits(t, sep) {
			if parts.first == 4 || parts.last == 4 {
				return true
			}
		}
	}
	return false
}

// parts are the lengths of the parts of a text split at a byte.
type parts struct{ n, first, second, last int }

func lengths(t string, sep byte) parts {
	p := parts{n: 1}
	start := 0
	for i := 0; i <= len(t); i++ {
		if i < len(t) && t[i] != sep {
			continue
		}
		switch p.n {
		case 1:
			p.first = i - start
		case 2:
			p.second = i - start
		}
		p.last = i - start
		if i < len(t) {
			p.n++
		}
		start = i + 1
	}
	return p
}

// isDigits: t is digits, separated by single seps, with a digit at
// each end.
func isDigits(t string, sep byte) bool {
	if t == "" || !isDigit(t[0]) || !isDigit(t[len(t)-1]) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isDigit(c) && (c != sep || !isDigit(t[i-1])) {
			return false
		}
	}
	return true
}

// isNumber: digits, perhaps signed, with a currency or # before them, a
// decimal point or thousands separators within and a % after them.
func isNumber(t string) bool {
	t = strings.TrimLeft(t, "+-#$€£¥")
	t = strings.TrimSuffix(t, "%")
	if t == "" || !isDigit(t[0]) || !isDigit(t[len(t)-1]) {
		return false
	}
	for i := 1; i < len(t); i++ {
		if c := t[i]; !isDigit(c) && ((c != '.' && c != ',') || !isDigit(t[i-1])) {
			return false
		}
	}
	return true
}

// isIdentifier: a token with digits that is not a word. A word may have
// one run of digits (s3, ec2, k8s, mp4, base64, gpt4o): those are names
// that tools use too. An identifier has digits apart from its letters
// (C024BE91L, 3f2a9c1), or digits in a token that joins parts with
// punctuation (PROJ-123, session:42, assets-2024, pi_3MtwBw...).
func isIdentifier(t string) bool {
	runs, joined := 0, false
	inDigits := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case isDigit(c):
			if !inDigits {
				runs++
			}
			inDigits = true
			continue
		case c < 0x80 && !isAlnum(c):
			joined = true
		}
		inDigits = false
	}
	return runs > 1 || runs == 1 && joined
}

// isSlug: two names joined by a slash, one of them with a dash, an
// underscore, a dot or a digit, as repositories and branches are named
// (octo-org/payments-api, feature/login-form, release/2.3); "lat/long"
// and "read/write" are words.
func isSlug(t string) bool {
	a, b, ok := strings.Cut(t, "/")
	if !ok || a == "" || b == "" || strings.Contains(b, "/") {
		return false
	}
	marked := false
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case c == '-' || c == '_' || c == '.' || isDigit(c):
			marked = true
		case c != '/' && !isAlpha(c):
			return false
		}
	}
	return marked
}

func isAlpha(c byte) bool { return isLower(c) || isUpper(c) }

// paramOf is what values a parameter takes, from its schema (type,
// format), the words of its name (url, filePath, email) and the values
// its documentation gives as examples (dates, addresses, identifiers).
func paramOf(name []string, schema map[string]any) param {
	var p param
	p.kinds = schemaKinds(schema)
	for _, key := range [...]string{"anyOf", "oneOf"} {
		list, _ := schema[key].([]any)
		for _, x := range list {
			if m, ok := x.(map[string]any); ok {
				p.kinds |= schemaKinds(m)
			}
		}
	}
	for _, w := range name {
		if k, ok := paramNameKinds[w]; ok {
			p.kinds |= 1 << k
		}
	}
	// A URL or a path in the documentation is more often a link to
	// more of it, or an endpoint, than an example.
	scanValues(stringOf(schema["description"]), func(_, _ int, _ string, v value) {
		switch {
		case v.kind == valueDate || v.kind == valueEmail:
			p.kinds |= 1 << v.kind
		case v.kind == valueID && len(p.shapes) < maxShapes && !slices.Contains(p.shapes, v.shape):
			p.shapes = append(p.shapes, v.shape)
		}
	})
	return p
}

// maxShapes bounds the identifier shapes kept of a parameter.
const maxShapes = 4

// schemaKinds are the kinds of value a schema's type and format say it
// takes, a bit per kind.
func schemaKinds(s map[string]any) uint8 {
	var kinds uint8
	switch stringOf(s["format"]) {
	case "uri", "url", "iri", "uri-reference", "iri-reference":
		kinds |= 1 << valueURL
	case "email", "idn-email":
		kinds |= 1 << valueEmail
	case "date", "date-time", "time":
		kinds |= 1 << valueDate
	}
	if items, ok := s["items"].(map[string]any); ok {
		if f := stringOf(items["format"]); f == "uri" || f == "url" {
			kinds |= 1 << valueURL
		}
	}
	numeric := func(t any) bool { return t == "number" || t == "integer" }
	switch t := s["type"].(type) {
	case string:
		if numeric(t) {
			kinds |= 1 << valueNumber
		}
	case []any:
		if slices.ContainsFunc(t, numeric) {
			kinds |= 1 << valueNumber
		}
	}
	return kinds
}

// paramNameKinds are the words of parameter names that say what kind of
// value they take.
var paramNameKinds = map[string]valueKind{
	"url": valueURL, "urls": valueURL, "uri": valueURL, "uris": valueURL,
	"link": valueURL, "links": valueURL, "href": valueURL,
	"path": valuePath, "paths": valuePath, "file": valuePath, "files": valuePath,
	"filename": valuePath, "filepath": valuePath, "dir": valuePath,
	"directory": valuePath, "directories": valuePath, "folder": valuePath,
	"email": valueEmail, "emails": valueEmail, "recipient": valueEmail, "recipients": valueEmail,
	"date": valueDate, "datetime": valueDate, "time": valueDate, "timestamp": valueDate,
	"since": valueDate, "until": valueDate,
}

// shapeOf is an identifier's shape, hashed: its parts of letters and
// digits as classes, its punctuation as it is. PROJ-123 and ABC-45 are
// A-9; session:42 a:9; 3f2a9c1 and C024BE91L, whose letters and digits
// mix, x.
func shapeOf(id string) uint32 {
	var buf [maxShapeLen]byte
	sig := buf[:0]
	for i := 0; i < len(id) && len(sig) < maxShapeLen; {
		c := id[i]
		if !isAlnum(c) {
			sig = append(sig, c)
			i++
			continue
		}
		j := i
		var upper, lower, digits bool
		for ; j < len(id) && isAlnum(id[j]); j++ {
			upper = upper || isUpper(id[j])
			lower = lower || isLower(id[j])
			digits = digits || isDigit(id[j])
		}
		switch {
		case digits && (upper || lower):
			sig = append(sig, 'x')
		case digits:
			sig = append(sig, '9')
		case upper && lower:
			sig = append(sig, 'A', 'a')
		case upper:
			sig = append(sig, 'A')
		default:
			sig = append(sig, 'a')
		}
		i = j
	}
	// FNV-1a, written out: hash/fnv's would allocate a hash a shape.
	h := uint32(2166136261)
	for _, c := range sig {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// maxShapeLen bounds a shape: past it, identifiers are alike enough.
const maxShapeLen = 16

// maxParams bounds the parameters of a tool that fit reads, and
// maxValues the values of a query it places: a request has a few, and
// fit costs their product for every tool scored.
const (
	maxParams = 64 // fit keeps the parameters it filled in a uint64
	maxValues = 16
)

// param is a parameter that takes some kinds of value.
type param struct {
	kinds    uint8    // a bit per valueKind
	shapes   []uint32 // of the identifiers it takes
	required bool
}

// takes says whether p takes v.
func (p *param) takes(v value) bool {
	if v.kind == valueID {
		return slices.Contains(p.shapes, v.shape)
	}
	return p.kinds&(1<<v.kind) != 0
}

// fit says how well a query's values fit a tool's parameters, from 0 to
// 1: the share of the values that a parameter of the tool takes, times
// the share of its required parameters they fill (plus one, so that a
// tool that requires nothing is not a perfect fit for every value). Each
// value fills one parameter, required ones first: "add 2 and 3" fits a
// tool that requires two numbers, not one that requires an owner, a repo
// and an issue number.
func fit(values []value, params []param, required int) float64 {
	if len(values) == 0 || len(params) == 0 {
		return 0
	}
	var used uint64 // a bit per parameter: there are maxParams at most
	placed, filled := 0, 0
	for _, v := range values {
		best := -1
		for i := range params {
			if used&(1<<i) != 0 || !params[i].takes(v) {
				continue
			}
			if best < 0 || params[i].required && !params[best].required {
				best = i
			}
		}
		if best < 0 {
			continue
		}
		used |= 1 << best
		placed++
		if params[best].required {
			filled++
		}
	}
	return float64(placed) / float64(len(values)) * float64(filled+1) / float64(required+1)
}
