package redact

import "strings"

// A format is a kind of key recognised by its prefix: the prefix at the
// start of a word, then at least min bytes of body.
type format struct {
	prefix string
	body   *charset
	min    int
	exact  bool // the body is exactly min bytes (AWS key ids)
	digit  bool // the body holds a digit (for prefixes that prose could start)
	dots   int  // the body holds at least this many dots (a JWT's three parts)
	whole  bool // hide the prefix too
	pair   bool // a ':' and a secret may follow, hidden with the key (Twilio's SK...:secret)
}

type charset [256]bool

func chars(extra string) *charset {
	var c charset
	for b := 0; b < 256; b++ {
		c[b] = alnum(byte(b))
	}
	for i := 0; i < len(extra); i++ {
		c[extra[i]] = true
	}
	return &c
}

func only(s string) *charset {
	var c charset
	for i := 0; i < len(s); i++ {
		c[s[i]] = true
	}
	return &c
}

var (
	alnums  = chars("")
	b64url  = chars("-_")
	b64dot  = chars("-_.")
	under   = chars("_")
	dash    = chars("-")
	path    = chars("/-_")
	hexLow  = only("0123456789abcdef")
	hex     = only("0123456789abcdefABCDEF")
	upperID = only("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ")
)

// formats are the well-known key shapes, from the vendors' documented
// prefixes and lengths (minimums a little under the real lengths, so
// that a key cut short in a message is still found).
var keyFormats = [...]format{
	{prefix: "sk-", body: b64url, min: 20, digit: true}, // OpenAI sk-, sk-proj-, sk-svcacct-; Anthropic sk-ant-
	{prefix: "sk_live_", body: alnums, min: 10},         // Stripe
	{prefix: "sk_test_", body: alnums, min: 10},
	{prefix: "rk_live_", body: alnums, min: 10},
	{prefix: "rk_test_", body: alnums, min: 10},
	{prefix: "whsec_", body: alnums, min: 20},
	{prefix: "ghp_", body: alnums, min: 20}, // GitHub
	{prefix: "gho_", body: alnums, min: 20},
	{prefix: "ghu_", body: alnums, min: 20},
	{prefix: "ghs_", body: alnums, min: 20},
	{prefix: "ghr_", body: alnums, min: 20},
	{prefix: "github_pat_", body: under, min: 20},
	{prefix: "glpat-", body: b64url, min: 20}, // GitLab
	{prefix: "glptt-", body: b64url, min: 20},
	{prefix: "gldt-", body: b64url, min: 20},
	{prefix: "glrt-", body: b64url, min: 20},
	{prefix: "xoxb-", body: dash, min: 10}, // Slack
	{prefix: "xoxp-", body: dash, min: 10},
	{prefix: "xoxa-", body: dash, min: 10},
	{prefix: "xoxr-", body: dash, min: 10},
	{prefix: "xoxs-", body: dash, min: 10},
	{prefix: "xoxo-", body: dash, min: 10},
	{prefix: "xoxe-", body: dash, min: 10},
	{prefix: "xapp-", body: dash, min: 10},
	{prefix: "hooks.slack.com/services/", body: path, min: 20},
	{prefix: "discord.com/api/webhooks/", body: path, min: 20},
	{prefix: "AKIA", body: upperID, min: 16, exact: true}, // AWS
	{prefix: "ASIA", body: upperID, min: 16, exact: true},
	{prefix: "AIza", body: b64url, min: 30},    // Google API key
	{prefix: "ya29.", body: b64dot, min: 20},   // Google OAuth access token
	{prefix: "GOCSPX-", body: b64url, min: 20}, // Google OAuth client secret
	{prefix: "npm_", body: alnums, min: 30},
	{prefix: "hf_", body: alnums, min: 30},                       // Hugging Face
	{prefix: "SG.", body: b64dot, min: 40, digit: true, dots: 1}, // SendGrid
	{prefix: "pypi-AgE", body: b64url, min: 40},
	{prefix: "dop_v1_", body: hexLow, min: 40}, // DigitalOcean
	{prefix: "doo_v1_", body: hexLow, min: 40},
	{prefix: "dor_v1_", body: hexLow, min: 40},
	{prefix: "shpat_", body: alnums, min: 20}, // Shopify
	{prefix: "shpss_", body: alnums, min: 20},
	{prefix: "shpca_", body: alnums, min: 20},
	{prefix: "shppa_", body: alnums, min: 20},
	{prefix: "lin_api_", body: alnums, min: 30}, // Linear
	{prefix: "ntn_", body: alnums, min: 30},     // Notion
	{prefix: "dapi", body: hexLow, min: 32},     // Databricks
	{prefix: "AGE-SECRET-KEY-1", body: upperID, min: 40},
	{prefix: "sbp_", body: alnums, min: 30},                      // Supabase personal access token
	{prefix: "napi_", body: alnums, min: 40},                     // Neon; Node's napi_ functions have a '_' within 40 bytes
	{prefix: "figd_", body: b64url, min: 20},                     // Figma
	{prefix: "sntrys_", body: b64url, min: 20},                   // Sentry organization token
	{prefix: "sntryu_", body: alnums, min: 32},                   // Sentry user token
	{prefix: "SK", body: hex, min: 32, exact: true, pair: true},  // Twilio API key SID, and its secret after ':'
	{prefix: "eyJ", body: b64dot, min: 10, dots: 2, whole: true}, // JWT: base64url of {"
}

// inWord reports whether c before a prefix makes it part of a longer
// word or identifier (task-sk-..., risk-...), not the start of a key.
func inWord(c byte) bool { return inWords[c] }

var inWords = chars("-_")

// byFirst lists, for each byte, the formats whose prefix starts with it.
var byFirst = func() (t [256][]uint8) {
	for i, f := range keyFormats {
		t[f.prefix[0]] = append(t[f.prefix[0]], uint8(i))
	}
	return t
}()

// starts marks the bytes that can start what words looks for.
var starts = func() (t [256]bool) {
	for _, f := range keyFormats {
		t[f.prefix[0]] = true
	}
	t['b'], t['B'] = true, true
	return t
}()

// words finds, at the start of each word, a credential after Bearer or
// Basic and the keys of the well-known formats, in one pass. After a
// body too short (or without the digit or dots it needs) a format is
// not tried again before the body's end: a prefix inside it has a
// shorter body of the same bytes, which fails too. So each format reads
// each byte at most once, and the pass is linear.
func words(s string, out []span) []span {
	var retry [len(keyFormats)]int // where each format may be tried again
	for i := 0; i < len(s); i++ {
		if !starts[s[i]] || i > 0 && inWord(s[i-1]) {
			continue
		}
		if s[i]|0x20 == 'b' {
			sp, e, ok := scheme(s, i)
			if ok {
				out = append(out, sp)
			}
			if e > i {
				i = e - 1
				continue
			}
		}
		for _, k := range byFirst[s[i]] {
			f := &keyFormats[k]
			if i < retry[k] || !strings.HasPrefix(s[i:], f.prefix) {
				continue
			}
			b := i + len(f.prefix)
			e, ok := f.match(s, b)
			if !ok {
				retry[k] = e
				continue
			}
			if f.whole {
				b = i
			}
			out = append(out, span{b, e})
			i = e - 1
			break
		}
	}
	return out
}

// match reads the body that starts at s[b] and reports where it ends
// and whether it makes a key.
func (f *format) match(s string, b int) (int, bool) {
	e := b
	hasDigit, dots := false, 0
	for e < len(s) && f.body[s[e]] {
		hasDigit = hasDigit || class(s[e]) == digit
		if s[e] == '.' {
			dots++
		}
		e++
	}
	n := e - b
	switch {
	case n < f.min, f.exact && n != f.min, f.digit && !hasDigit, dots < f.dots:
		return e, false
	case f.exact && e < len(s) && alnum(s[e]):
		return e, false
	}
	if f.pair && e+1 < len(s) && s[e] == ':' && b64url[s[e+1]] {
		for e++; e < len(s) && b64url[s[e]]; e++ {
		}
	}
	return e, true
}

// pems hides the body of PEM private keys (RSA, EC, OPENSSH, ENCRYPTED,
// PGP ... PRIVATE KEY), from the BEGIN line to the END line or, for a
// block cut short, to the end of s. Certificates and public keys stay.
func pems(s string, out []span) []span {
	const begin, dashes = "-----BEGIN ", "-----"
	for from := 0; ; {
		i := strings.Index(s[from:], begin)
		if i < 0 {
			return out
		}
		h := from + i + len(begin)
		from = h
		e := strings.Index(s[h:], dashes)
		if e < 0 || e > 64 {
			continue
		}
		label := s[h : h+e]
		b := h + e + len(dashes)
		from = b
		if !strings.Contains(label, "PRIVATE KEY") {
			continue
		}
		end := strings.Index(s[b:], "-----END ")
		if end < 0 {
			end = len(s)
		} else {
			end += b
		}
		from = end
		if body := s[b:end]; strings.TrimSpace(body) != "" && !redacted(body) {
			out = append(out, span{b, end})
		}
	}
}
