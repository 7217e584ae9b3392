package redact

import "strings"

// Name reports whether a name (a JSON member, a command-line flag, an
// HTTP header, a query parameter, an environment variable) is one whose
// value is a secret.
//
// The name is cut into words at punctuation ('-', '_', '.', spaces,
// leading dashes ...), at camelCase boundaries and between letters and
// digits, and lower-cased: "X-Api-Key", "xApiKey", "X_API_KEY" and
// "--x-api-key" are all x, api, key. It is secret when one of its words
// is a secret stem and no word after the last stem says that the value
// describes the secret instead of being it:
//
//   - stems: password, passwd, pass, pwd, passphrase, passcode, secret,
//     token, auth, authorization, bearer, credential(s), creds,
//     cookie(s), otp, totp, mfa, pin, jwt, sig, signature, apikey;
//   - "key" after a word that makes it a credential (api, access,
//     secret, private, session, master, signing, account, client ...);
//     a bare "key" is not secret: it is the key of a map or a store;
//   - a single word that ends in a long stem ("githubtoken",
//     "clientsecret", "xapikey") or starts with passw or passphrase
//     ("passwordhash");
//   - not "token" after page, next, progress, continuation and the
//     like (pageToken, progressToken are cursors), nor tokenizer
//     vocabulary (eos_token);
//   - and not when a later word is one of count, length, max, type,
//     kind, url, endpoint, name, file, path, env, expires, ttl, method,
//     required, enabled ...: token_count, auth_type, password_file,
//     token_endpoint_auth_method and client_secret_expires_at are not
//     secret.
//
// Words are matched whole, not as substrings, so author, authority,
// passage, compass, bypass, tokenizer, secretary and monkey are not
// secret. Neither is "tokens": it counts language-model tokens
// (max_tokens, input_tokens). oauth_provider_name has no stem (oauth is
// not auth) and is not secret; pass_count has one and a count after it,
// and is not secret either. Session ids (Mcp-Session-Id, session_id)
// are not secret: logs need them to follow a session.
func Name(name string) bool {
	if len(name) < 3 { // the shortest stems: pwd, pin, otp ...
		return false
	}
	var bufs [2][maxWord]byte
	var prev []byte
	stem, described := false, false
	cur := 0
	for i := 0; i < len(name); {
		if class(name[i]) == other {
			i++
			continue
		}
		j := i + 1
		for j < len(name) && !boundary(name, j) {
			j++
		}
		w := lower(bufs[cur][:0], name[i:j])
		switch {
		case isStem(prev, w):
			stem, described = true, false
		case stem && describes[string(w)]:
			described = true
		}
		prev, cur, i = w, 1-cur, j
	}
	return stem && !described
}

// Flag reports whether arg is a command-line flag (-name or --name,
// without a value) whose value is a secret: one with a secret [Name], or
// --key, which on a command line is more often than not an API key.
func Flag(arg string) bool {
	name := strings.TrimPrefix(arg, "-")
	name = strings.TrimPrefix(name, "-")
	if name == arg || name == "" || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !keyChar(name[i]) {
			return false
		}
	}
	return Name(name) || equalFold(name, "key")
}

// maxWord bounds the words Name looks at; longer ones match nothing.
const maxWord = 64

const (
	other = iota
	lowerCase
	upperCase
	digit
)

func class(c byte) int { return int(classes[c]) }

var classes = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = lowerCase, upperCase
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = digit
	}
	return t
}()

// boundary reports whether a new word starts at name[j] (j > 0, inside
// a run of letters and digits): aB, ABc (the acronym ends before B), a1
// and 1a.
func boundary(name string, j int) bool {
	c, p := class(name[j]), class(name[j-1])
	switch {
	case c == other:
		return true
	case p == lowerCase && c == upperCase:
		return true
	case p == upperCase && c == upperCase:
		return j+1 < len(name) && class(name[j+1]) == lowerCase
	}
	return (p == digit) != (c == digit)
}

// lower writes s lower-cased into buf; nil when s is too long to be a
// word worth matching.
func lower(buf []byte, s string) []byte {
	if len(s) > maxWord {
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

func isStem(prev, w []byte) bool {
	s := string(w) // the compiler keeps conversions in comparisons and map indexes free
	switch {
	case s == "key" || s == "keys":
		return keyQualifiers[string(prev)]
	case s == "token":
		return !cursorQualifiers[string(prev)]
	case stems[string(w)]:
		return true
	}
	for _, st := range longStems {
		if rest, ok := strings.CutSuffix(s, st); ok && rest != "" {
			return st != "token" || !cursorQualifiers[rest]
		}
	}
	if rest, ok := strings.CutSuffix(s, "key"); ok {
		for _, q := range keyQualifierList {
			if strings.HasSuffix(rest, q) {
				return true
			}
		}
	}
	return strings.HasPrefix(s, "passw") || strings.HasPrefix(s, "passphrase")
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// stems are words whose presence makes a name secret.
var stems = set("password", "passwords", "passwd", "pass", "pwd", "passphrase", "passcode",
	"secret", "secrets", "token", "auth", "authorization", "bearer",
	"credential", "credentials", "creds", "cookie", "cookies",
	"otp", "totp", "mfa", "pin", "jwt", "sig", "signature", "apikey", "apikeys")

// longStems are stems long enough to be recognised at the end of a word
// written without separators ("githubtoken", "clientsecret").
var longStems = []string{"password", "passwd", "passphrase", "passcode", "secret", "secrets",
	"token", "credential", "credentials", "authorization", "cookie"}

// keyQualifierList holds the words that make the word "key" after them
// a credential.
var keyQualifierList = []string{"api", "access", "secret", "private", "session", "master",
	"encryption", "decryption", "signing", "account", "client", "license", "licence",
	"subscription", "app", "application", "consumer", "shared", "ssh", "storage",
	"auth", "admin", "service", "root", "hmac", "webhook", "deploy", "gpg", "pgp"}

var keyQualifiers = set(keyQualifierList...)

// cursorQualifiers make the word "token" after them something other
// than a credential: a page cursor, an MCP progress token, a
// tokenizer's vocabulary.
var cursorQualifiers = set("page", "next", "nextpage", "prev", "previous", "continuation",
	"progress", "sync", "cancel", "cancellation", "resume", "pagination", "cursor",
	"max", "min", "num", "eos", "bos", "pad", "unk", "sep", "cls", "mask", "special", "stop")

// describes are words that, after a stem, make the name one of a
// property of the secret (its length, type, location, lifetime) rather
// than the secret: token_count, auth_type, password_file.
var describes = set("count", "counts", "len", "length", "size", "limit", "limits",
	"max", "min", "maximum", "minimum", "num", "number", "total",
	"type", "types", "kind", "url", "uri", "urls", "endpoint", "endpoints",
	"name", "names", "file", "files", "path", "paths", "dir", "env", "var",
	"expiry", "expires", "expiration", "exp", "ttl", "lifetime",
	"created", "updated", "issued", "rotated", "at", "time", "timestamp", "date",
	"hint", "policy", "policies", "required", "enabled", "disabled",
	"method", "methods", "mode", "provider", "providers", "format", "strength",
	"rotation", "server", "servers", "scheme", "schemes", "location", "store",
	"manager", "ref", "refs", "version", "usage", "through", "thru",
	"field", "fields", "label", "algorithm", "alg", "prefix")
