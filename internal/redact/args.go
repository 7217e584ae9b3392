package redact

import "strings"

// Args returns a command line's arguments (the program's name left out)
// with their secrets hidden. Each argument is known to be whole, so Args
// hides more than [String] does in the same line written out:
//
//   - the argument after a secret flag ([Flag]: --api-key X, --token X,
//     --access-token X), and the value in --flag=value;
//   - the argument after -t or -k when it reads as a credential: some
//     programs take a token or a key there (-t TOKEN), others a
//     terminal, a transport, a timeout or "insecure" (docker -t, -t
//     stdio, curl -k URL), so the value is hidden when it is one word
//     of letters, digits, '-' and '_' that names a credential
//     (my-api-token: [Name]) or is 16 bytes or more with both letters
//     and digits;
//   - an argument, or the value in --flag=value, that reads as a
//     credential by itself ([Token]);
//   - what String finds in each: a URL's password, a key of a known
//     shape (ghp_..., sbp_..., napi_..., Twilio's AC.../SK...:secret),
//     name=value.
//
// args is not modified: where nothing needs hiding the result is args
// itself, and otherwise a copy.
func Args(args []string) []string {
	var out []string
	for i := range args {
		a, changed := arg(args, i)
		if !changed {
			continue
		}
		if out == nil {
			out = append([]string(nil), args...)
		}
		out[i] = a
	}
	if out == nil {
		return args
	}
	return out
}

// arg returns args[i] redacted, and whether that changed it.
func arg(args []string, i int) (string, bool) {
	a := args[i]
	if a == "" || redacted(a) {
		return a, false
	}
	if i > 0 && (Flag(args[i-1]) || shortFlag(args[i-1]) && shortValue(a)) {
		return Marker, true
	}
	if a[0] != '-' && Token(a) {
		return Marker, true
	}
	if flag, v, ok := strings.Cut(a, "="); ok && a[0] == '-' && !strings.ContainsAny(flag, " \t\r\n") && v != "" && !redacted(v) && (Flag(flag) || Token(v)) {
		// String runs over the result too, so that redacting it again
		// changes nothing: it may read the flag part as something of
		// its own (a user:password, a name=value).
		r, _ := redactString(flag + "=" + Marker)
		return r, true
	}
	return redactString(a)
}

// minToken is the shortest value that Token, and a value after -t or
// -k, take for a credential: shorter random strings are rare as keys,
// and words, ports and versions are short.
const minToken = 16

// Token reports whether s, a whole value with nothing around it to say
// what it is (an argument, a variable's value), reads as a credential:
// 16 bytes or more of letters, digits, '-', '_', '+' and '/', with '='
// only as base64's padding at the end, that either mix upper case, lower
// case and digits, as random strings do, or are 32 hexadecimal digits or
// more with both letters and digits (an API key; a hash, too). A path
// from the root, a URL, a host or file name, a version, a list, an
// e-mail address, a package and NAME=value are not tokens (they start
// with '/' or hold ':', '.', ',', '@' or '='), nor are words
// (my-server-2026) or 32 zeros.
//
// Token is for values known to be whole: in free text, String does not
// use it, so that a commit hash in a message stays.
func Token(s string) bool {
	if len(s) < minToken || s[0] == '/' {
		return false
	}
	body := strings.TrimRight(s, "=") // base64's padding; NAME=value is not a token
	upper, lower, digits, notHex := false, false, false, len(body) < len(s)
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch class(c) {
		case upperCase:
			upper, notHex = true, notHex || c > 'F'
		case lowerCase:
			lower, notHex = true, notHex || c > 'f'
		case digit:
			digits = true
		default:
			if !tokenPunct[c] {
				return false
			}
			notHex = true
		}
	}
	return digits && (upper && lower || !notHex && len(s) >= 32 && (upper || lower))
}

var tokenPunct = [256]bool{'-': true, '_': true, '+': true, '/': true}

// shortFlag reports whether arg is -t or -k, which some programs take a
// token or a key after, and others not.
func shortFlag(arg string) bool { return arg == "-t" || arg == "-k" }

// shortValue reports whether v, the value after -t or -k, reads as a
// credential: one word that names one, or a mix of letters and digits
// long enough to be a key (see Args).
func shortValue(v string) bool {
	if len(v) < 3 || v[0] == '-' {
		return false
	}
	letters, digits := false, false
	for i := 0; i < len(v); i++ {
		switch class(v[i]) {
		case lowerCase, upperCase:
			letters = true
		case digit:
			digits = true
		default:
			if v[i] != '-' && v[i] != '_' {
				return false
			}
		}
	}
	return Name(v) || len(v) >= minToken && letters && digits
}
