// Package redact hides secrets before they reach a log, an audit record
// or an error message: by name (a member, flag, header or query
// parameter called password, api_key, X-Api-Key ...) and by shape (a
// bearer token, a URL's password, a GitHub, OpenAI, AWS or Slack key, a
// JWT, a PEM private key) wherever they appear.
//
// [Name] decides whether a name is secret, [Flag] whether a
// command-line flag is, [Token] whether a whole value reads as a
// credential by itself. [String] hides the secrets in
// free text: a command line, an error message, a URL, a header. [Args]
// hides them in a command's argument list. [Value]
// does both over decoded JSON and [JSON] over JSON text; [Handler] wraps
// a [log/slog.Handler] so that every record is redacted before it is
// written. Each secret becomes [Marker]; the text around it (a username,
// a host, a flag, a key's kind) stays, so the line is still useful.
//
// Redaction is a heuristic: it hides the shapes listed in
// testdata/secrets.json and keeps those in its tests' innocent table (a
// git commit hash, a UUID, max_tokens, an author). A secret with no name
// and no recognisable shape, such as a random string in prose, is not
// found.
//
// The scanners are hand-written loops over the text, not regular
// expressions: each looks for a literal (a separator, "://", a key's
// prefix) and checks the bytes around it, so String runs in time linear
// in its input (each rule is one pass; no rule looks further back than
// a name's length) and allocates nothing when there is nothing to hide.
// A regular expression cannot say "not preceded by a letter" without
// giving up the literal-prefix search that makes it fast.
//
// Cutting a long value before redacting it can cut a key's shape short
// so that it is no longer recognised: redact first, then cut.
package redact

import (
	"slices"
	"strings"
)

// Marker is what redaction shows in place of a secret.
const Marker = "[redacted]"

// String returns s with the secrets in it replaced by [Marker]:
//
//   - the value after a secret name ([Name], [Flag]) in key=value,
//     key: value, "key": "value", --flag=value and --flag value, and in
//     URL query parameters (?api_key=..., and ?key=...); an
//     Authorization value keeps its scheme (Authorization: Bearer
//     [redacted]);
//   - a token after Bearer or Basic, unless it reads as a word ("a
//     bearer token", "basic usage");
//   - the password in a URL (postgres://user:[redacted]@host);
//   - the password in curl -u user:password;
//   - the value after -t or -k when it reads as a credential (see
//     [Args]);
//   - the body of a well-known key, keeping its prefix (ghp_[redacted]):
//     OpenAI and Anthropic sk-, GitHub ghp_ gho_ ghu_ ghs_ ghr_
//     github_pat_, GitLab glpat- and others, Slack xox?- and webhook
//     URLs, Stripe sk_ and rk_ (live and test) and whsec_, AWS AKIA and
//     ASIA key ids, Google AIza, ya29. and GOCSPX-, npm_, hf_, SendGrid
//     SG., PyPI, DigitalOcean, Shopify, Linear, Notion, Databricks, age,
//     Supabase sbp_, Neon napi_, Figma figd_, Sentry sntrys_ and
//     sntryu_, and Twilio's API key SK... with the :secret after it;
//   - a whole JWT (eyJ... with two dots);
//   - the body of a PEM private key block (the BEGIN and END lines
//     stay; a block cut short is hidden to the end of s).
//
// Stripe's publishable pk_ keys are not secret (they ship in web pages)
// and stay. String is idempotent, never panics, and never returns more
// than len(s) + len(Marker)*(len(s)/4+1) bytes: every hidden part is at
// least one byte, after at least four that stay.
//
// String treats JSON text as text: "password": 1234 becomes
// "password": [redacted], which is no longer JSON. Use [JSON] or
// [Value] to keep JSON valid.
func String(s string) string {
	r, _ := redactString(s)
	return r
}

// span is a part of a string to hide, [start, end).
type span struct{ start, end int }

func redactString(s string) (string, bool) {
	var buf [8]span
	spans := pairs(s, buf[:0])
	spans = words(s, spans)
	spans = userinfo(s, spans)
	spans = pems(s, spans)
	if len(spans) == 0 {
		return s, false
	}
	return apply(s, spans), true
}

// apply replaces each span, merged with those it overlaps or touches,
// by Marker.
func apply(s string, spans []span) string {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	b.Grow(len(s) + len(Marker)*len(spans))
	at := 0
	for i := 0; i < len(spans); {
		sp := spans[i]
		for i++; i < len(spans) && spans[i].start <= sp.end; i++ {
			sp.end = max(sp.end, spans[i].end)
		}
		b.WriteString(s[at:sp.start])
		b.WriteString(Marker)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

// redacted reports whether a value that starts s was hidden already. A
// value that starts with Marker is taken as hidden, to its end: where
// hidden parts were merged, the Marker can stand for more than the value
// (a closing quote, say), and a second pass must not take what follows
// it for the value's rest.
func redacted(s string) bool { return strings.HasPrefix(s, Marker) }

// keyChar reports whether c can be part of a name in key=value text.
func keyChar(c byte) bool { return keyChars[c] }

var keyChars = chars("_-.")

func alnum(c byte) bool { return class(c) != other }

func skipBlank(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// hasFoldPrefix reports whether s starts with word, ignoring ASCII case;
// word is lower case.
func hasFoldPrefix(s, word string) bool {
	if len(s) < len(word) {
		return false
	}
	for i := 0; i < len(word); i++ {
		if s[i]|0x20 != word[i] {
			return false
		}
	}
	return true
}

func equalFold(s, word string) bool { return len(s) == len(word) && hasFoldPrefix(s, word) }

func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if hasFoldPrefix(s[i:], word) {
			return true
		}
	}
	return false
}
