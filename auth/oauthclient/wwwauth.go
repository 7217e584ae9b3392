package oauthclient

import (
	"net/http"
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// §11.6.1), such as Bearer resource_metadata="…", scope="a b".
type Challenge struct {
	// Scheme is lower-cased ("bearer", "basic", …).
	Scheme string
	// Params holds the auth-params, keys lower-cased, quoted values
	// unescaped.
	Params map[string]string
}

// bearerChallenge returns the first Bearer challenge of h, if any.
func bearerChallenge(h http.Header) (Challenge, bool) {
	for _, c := range ParseWWWAuthenticate(h.Values("WWW-Authenticate")) {
		if c.Scheme == "bearer" {
			return c, true
		}
	}
	return Challenge{}, false
}

// ParseWWWAuthenticate parses the values of WWW-Authenticate headers. A
// header may hold several challenges separated by commas, and a challenge
// several parameters separated by commas too; a new challenge starts at a
// token that is not followed by "=". Malformed parts are skipped rather
// than refused: a client can still act on the parameters it did read.
func ParseWWWAuthenticate(values []string) []Challenge {
	var out []Challenge
	for _, v := range values {
		p := &challengeParser{s: v}
		var cur *Challenge
		for {
			p.skipSpaceAndCommas()
			if p.done() {
				break
			}
			tok := p.token()
			if tok == "" {
				p.skipToComma() // garbage: resynchronise at the next comma
				continue
			}
			save := p.i
			p.skipSpace()
			if !p.done() && p.s[p.i] == '=' && cur != nil && !p.token68Follows() {
				p.i++
				p.skipSpace()
				var val string
				if !p.done() && p.s[p.i] == '"' {
					val = p.quoted()
				} else {
					val = p.token()
				}
				cur.Params[strings.ToLower(tok)] = val
				continue
			}
			p.i = save
			// A scheme name: a new challenge, maybe followed by a token68
			// (e.g. "Negotiate abc==") that we keep under the "" key.
			out = append(out, Challenge{Scheme: strings.ToLower(tok), Params: map[string]string{}})
			cur = &out[len(out)-1]
			p.skipSpace()
			if t68 := p.token68(); t68 != "" {
				cur.Params[""] = t68
			}
		}
	}
	return out
}

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) skipSpace() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *challengeParser) skipSpaceAndCommas() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *challengeParser) skipToComma() {
	for !p.done() && p.s[p.i] != ',' {
		if p.s[p.i] == '"' {
			p.quoted()
			continue
		}
		p.i++
	}
}

// isTchar reports whether c may appear in an RFC 9110 token.
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// token68Follows reports whether the "=" at p.i ends a token68 (as in
// "abc==") rather than separating a parameter from its value: a token68's
// "=" padding is followed by more "=", a comma or the end.
func (p *challengeParser) token68Follows() bool {
	j := p.i
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	if j-p.i > 1 {
		return true
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j >= len(p.s) || p.s[j] == ','
}

// token68 reads a token68 when one follows the scheme (not a parameter).
func (p *challengeParser) token68() string {
	start := p.i
	for !p.done() && (isTchar(p.s[p.i]) || p.s[p.i] == '/') {
		p.i++
	}
	if p.i == start {
		return ""
	}
	// "name=value" is a parameter, not a token68: give it back.
	if !p.done() && p.s[p.i] == '=' && !p.token68Follows() {
		p.i = start
		return ""
	}
	for !p.done() && p.s[p.i] == '=' {
		p.i++
	}
	p.skipSpace()
	if !p.done() && p.s[p.i] != ',' {
		p.i = start // not a token68 after all
		return ""
	}
	return p.s[start:p.i]
}

// quoted reads a quoted-string starting at the opening quote.
func (p *challengeParser) quoted() string {
	p.i++ // opening quote
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String() // unterminated: keep what we have
}
