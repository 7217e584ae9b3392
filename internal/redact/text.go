package redact

import (
	"encoding/base64"
	"strings"
)

// pairs finds the values of secret names in key=value, key: value,
// "key": "value", --flag=value and --flag value. Each name is a maximal
// run of keyChars; scanning resumes after the value, so no byte is
// looked at twice by this rule except across one name.
func pairs(s string, out []span) []span {
	for i := 0; i < len(s); {
		if !keyChar(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && keyChar(s[j]) {
			j++
		}
		next := j
		if v, ok := separator(s, i, j); ok {
			if userFlag(s[i:j]) {
				out, next = curlUser(s, v, out)
			} else if secretKey(s, i, j) {
				out, next = pairValue(s, v, s[i:j], out)
			} else if shortFlag(s[i:j]) && v > j && s[j] != '=' {
				out, next = shortFlagValue(s, v, out)
			}
		}
		i = max(next, j)
	}
	return out
}

// separator returns where the value after the name s[i:j] starts, if a
// value follows it: name=v, name: v, "name": v, 'name'=v, \"name\":v
// (JSON inside a JSON string), name := v, 'name' => v, --name v, or
// <name>v.
func separator(s string, i, j int) (int, bool) {
	if j < len(s) && s[j] == '>' && i > 0 && s[i-1] == '<' {
		return j + 1, true
	}
	k := j
	switch {
	case k < len(s) && (s[k] == '"' || s[k] == '\''):
		k++
	case k < len(s) && s[k] == '\\':
		// \"name\": JSON inside a JSON string, escaped once or more.
		if m := skipBackslashes(s, k); m < len(s) && s[m] == '"' {
			k = m + 1
		}
	}
	k = skipBlank(s, k)
	if k < len(s) && (s[k] == '=' || s[k] == ':') {
		if s[k] == ':' && strings.HasPrefix(s[k+1:], "//") {
			return 0, false // a URL's scheme
		}
		if k+1 < len(s) && (s[k+1] == '=' || s[k+1] == '>') {
			k++ // :=, =>, ==
		}
		return skipBlank(s, k+1), true
	}
	if s[i] == '-' && k > j && k < len(s) && s[j] != '"' && s[j] != '\'' && s[j] != '\\' && s[k] != '-' {
		return k, true // --flag value
	}
	return 0, false
}

// secretKey reports whether the name s[i:j] holds a secret: a secret
// Name or Flag, or a query parameter called key (Google's ?key=AIza...).
// The user in scheme://user:password@host is left to userinfo.
func secretKey(s string, i, j int) bool {
	if i >= 2 && s[i-2:i] == "//" {
		return false
	}
	if i > 0 && (s[i-1] == '?' || s[i-1] == '&') && equalFold(s[i:j], "key") {
		return true
	}
	if s[i] == '-' {
		return Flag(s[i:j])
	}
	return Name(s[i:j])
}

// pairValue adds the span of the value that starts at s[v], and returns
// where scanning resumes.
func pairValue(s string, v int, name string, out []span) ([]span, int) {
	if v >= len(s) {
		return out, v
	}
	if redacted(s[v:]) {
		return out, v + len(Marker)
	}
	switch c := s[v]; {
	case c == '"' || c == '\'':
		end := closing(s, v+1, c)
		return quoted(s, v+1, end, out), end + 1
	case c == '\\' && skipBackslashes(s, v) < len(s) && s[skipBackslashes(s, v)] == '"':
		// An escaped string (JSON inside a JSON string, as deep as it
		// goes): it ends at the next quote, whose escape is not part of
		// the value.
		start := skipBackslashes(s, v) + 1
		end := start
		for end < len(s) && s[end] != '"' {
			end++
		}
		e := end
		for e > start && s[e-1] == '\\' {
			e--
		}
		return quoted(s, start, e, out), end + 1
	case c == '{' || c == '[':
		end := bracketEnd(s, v)
		return append(out, span{v, end}), end
	}
	end := unquotedEnd(s, v, containsFold(name, "cookie"))
	if isScheme(s[v:end]) {
		w := skipBlank(s, end)
		if w == end || w == len(s) {
			return out, end
		}
		if redacted(s[w:]) {
			return out, w + len(Marker)
		}
		if e := unquotedEnd(s, w, false); e > w {
			return append(out, span{w, e}), e
		}
		return out, end
	}
	switch w := s[v:end]; {
	case w == "", w == "true", w == "false", w == "null":
		return out, end
	}
	return append(out, span{v, end}), end
}

// skipBackslashes returns the index of the first byte at or after i that
// is not a backslash.
func skipBackslashes(s string, i int) int {
	for i < len(s) && s[i] == '\\' {
		i++
	}
	return i
}

// quoted adds s[start:end] unless it is empty or already redacted.
func quoted(s string, start, end int, out []span) []span {
	if end > start && !redacted(s[start:end]) {
		out = append(out, span{start, end})
	}
	return out
}

// closing returns the index of the quote q that ends a string starting
// at s[i] (len(s) when it never ends); a backslash escapes a double
// quote.
func closing(s string, i int, q byte) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case q:
			return i
		case '\\':
			if q == '"' {
				i++
			}
		}
	}
	return len(s)
}

// bracketEnd returns the index just past the JSON object or array that
// starts at s[i], or len(s) when it does not end.
func bracketEnd(s string, i int) int {
	depth, inString := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return len(s)
}

// unquotedEnd returns the end of an unquoted value at s[i]: the next
// space, quote or delimiter, or, for a cookie header (whose value is
// name=value; name=value), the end of the line.
func unquotedEnd(s string, i int, line bool) int {
	for ; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r', '"', '\'', '\\', '`':
			return i
		case ' ', '\t', '&', ';', ',', '}', ']', ')', '<', '>':
			if !line {
				return i
			}
		}
	}
	return i
}

// isScheme reports whether w is an HTTP authentication scheme, shown in
// Authorization: Bearer [redacted].
func isScheme(w string) bool {
	for _, sc := range []string{"bearer", "basic", "token", "digest", "negotiate", "ntlm", "bot", "sso-key", "apikey"} {
		if equalFold(w, sc) {
			return true
		}
	}
	return false
}

// shortFlagValue hides the value after -t or -k when it reads as a
// credential (see Args).
func shortFlagValue(s string, v int, out []span) ([]span, int) {
	e := unquotedEnd(s, v, false)
	if !shortValue(s[v:e]) {
		return out, v // the value may be a name itself (-t -k X)
	}
	return append(out, span{v, e}), e
}

// userFlag reports whether name is curl's flag for user:password.
func userFlag(name string) bool {
	return name == "-u" || name == "--user" || name == "--proxy-user" || name == "-U"
}

// curlUser hides the password in curl -u user:password (and --user
// user:password, --user=user:password). A numeric part after the colon
// is docker's -u uid:gid, and stays.
func curlUser(s string, v int, out []span) ([]span, int) {
	if v >= len(s) {
		return out, v
	}
	start, end := v, 0
	if c := s[v]; c == '"' || c == '\'' {
		start = v + 1
		end = closing(s, start, c)
	} else {
		end = unquotedEnd(s, v, false)
	}
	colon := strings.IndexByte(s[start:end], ':')
	if colon < 0 {
		return out, end
	}
	pw := s[start+colon+1 : end]
	if pw == "" || redacted(s[start+colon+1:]) || strings.Trim(pw, "0123456789") == "" {
		return out, end
	}
	return append(out, span{start + colon + 1, end}), end
}

// scheme finds the credential after a bare Bearer or Basic at s[i], as
// in a header written into a command line or an error message. It
// returns the credential's span, and where the token after the scheme
// ends (i when there is no scheme at s[i]).
func scheme(s string, i int) (span, int, bool) {
	n := 0
	switch {
	case hasFoldPrefix(s[i:], "bearer"):
		n = 6
	case hasFoldPrefix(s[i:], "basic"):
		n = 5
	default:
		return span{}, i, false
	}
	v := skipBlank(s, i+n)
	if v == i+n {
		return span{}, i, false
	}
	e := v
	for e < len(s) && token68(s[e]) {
		e++
	}
	return span{v, e}, e, e > v && credentialLike(s[v:e], n == 5)
}

// token68 reports whether c can be part of an HTTP credential (RFC 9110
// token68).
func token68(c byte) bool { return token68s[c] }

var token68s = chars("-._~+/=")

// credentialLike reports whether the word after Bearer or Basic is a
// credential rather than prose: a word written the way words are
// (token, Token, HTTP) is prose unless it is 20 bytes or longer; after
// Basic, anything that decodes to user:password is a credential.
func credentialLike(w string, basic bool) bool {
	if basic {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			if b, err := enc.DecodeString(w); err == nil && strings.IndexByte(string(b), ':') >= 0 {
				return true
			}
		}
	}
	return len(w) >= 20 || !wordShaped(w)
}

// wordShaped reports whether w is letters written as a word: lower case
// after an optional capital, or a short run of capitals.
func wordShaped(w string) bool {
	if w == "" {
		return true
	}
	allUpper := true
	for i := 0; i < len(w); i++ {
		switch class(w[i]) {
		case lowerCase:
			allUpper = false
		case upperCase:
			if i > 0 && !allUpper {
				return false
			}
		default:
			return false
		}
	}
	if allUpper {
		return len(w) <= 8
	}
	return class(w[0]) == lowerCase || len(w) == 1 || class(w[1]) == lowerCase
}

// maxPassword bounds how far past a URL's host userinfo looks for the
// '@' that ends a password holding a '/'.
const maxPassword = 256

// userinfo hides the password in scheme://user:password@host, keeping
// the user and the host.
func userinfo(s string, out []span) []span {
	// nextAt is the first '@' at or after where it was last looked for
	// (-1: none to the end of s), so that many URLs without one do not
	// each look to the end.
	nextAt := -2
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return out
		}
		i += from
		from = i + 3
		if i == 0 || !schemeChar(s[i-1]) {
			continue
		}
		a := from // the authority is s[from:a]
		for a < len(s) && !urlStop(s[a]) && s[a] != '/' && s[a] != '?' && s[a] != '#' {
			a++
		}
		at := strings.LastIndexByte(s[from:a], '@')
		if at >= 0 {
			at += from
		} else if c := strings.IndexByte(s[from:a], ':'); c >= 0 && a < len(s) && s[a] == '/' &&
			strings.Trim(s[from+c+1:a], "0123456789") != "" {
			// user:pa/ss@host: a password with a raw '/', not host:port/path.
			if nextAt != -1 && nextAt < a {
				if nextAt = strings.IndexByte(s[a:], '@'); nextAt >= 0 {
					nextAt += a
				}
			}
			if nextAt < 0 || nextAt-a >= maxPassword || hasURLStop(s[a:nextAt]) {
				continue
			}
			at = nextAt
			// As in an authority, the last '@' before the path ends the
			// password: what follows is then a host without one, and
			// the redacted URL reads the same on a second pass.
			for k := at + 1; k < len(s) && k-a < maxPassword && !urlStop(s[k]) && s[k] != '/' && s[k] != '?' && s[k] != '#'; k++ {
				if s[k] == '@' {
					at = k
				}
			}
		}
		if at < 0 {
			continue
		}
		c := strings.IndexByte(s[from:at], ':')
		if c < 0 {
			continue
		}
		if p := from + c + 1; at > p && !redacted(s[p:at]) {
			out = append(out, span{p, at})
		}
	}
}

func schemeChar(c byte) bool { return alnum(c) || c == '+' || c == '-' || c == '.' }

func hasURLStop(s string) bool {
	for i := 0; i < len(s); i++ {
		if urlStop(s[i]) {
			return true
		}
	}
	return false
}

// urlStop reports whether c ends a URL written in text.
func urlStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`', '\\':
		return true
	}
	return false
}
