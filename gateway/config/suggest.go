package config

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// suggest returns the candidate a mistyped key most likely meant: within
// two edits (one for short words), ignoring case.
func suggest(s string, candidates []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) < 6 {
		limit = 1
	}
	return best, bestD <= limit
}

// synonyms are names written for a key from habit or another program's
// schema, too far from ours for suggest to find ("arguments" is 5 edits
// from "args"). Keys are folded as by fold.
var synonyms = map[string]string{
	"arguments":        "args",
	"argv":             "args",
	"cmd":              "command",
	"executable":       "command",
	"program":          "command",
	"environment":      "env",
	"environmentvars":  "env",
	"envvars":          "env",
	"dir":              "cwd",
	"workdir":          "cwd",
	"workingdir":       "cwd",
	"workingdirectory": "cwd",
	"endpoint":         "url",
	"serverurl":        "url",
}

// fold is how synonyms are looked up: case, '_' and '-' do not count.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

// suggestKey is the key of names that an unknown key most likely meant:
// a synonym, else a near spelling ("cmd" is one edit from "cwd", but
// means command).
func suggestKey(key string, names []string) (string, bool) {
	if s, ok := synonyms[fold(key)]; ok && slices.Contains(names, s) {
		return s, true
	}
	return suggest(key, names)
}

// distance is the Levenshtein distance in bytes, enough for ASCII keys.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30 // no key is that long; don't spend time on it
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fixName turns a name into a valid server name: lower case, runs of
// anything else as one '-', a letter first, at most 32 characters, and
// not one of taken.
func fixName(name string, taken map[string]bool) string {
	var b strings.Builder
	for _, c := range strings.ToLower(name) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" || s[0] < 'a' {
		s = strings.TrimSuffix("mcp-"+s, "-")
	}
	s = strings.TrimRight(s[:min(len(s), 32)], "-")
	for i, base := 2, s; taken[s]; i++ {
		suffix := "-" + strconv.Itoa(i)
		s = strings.TrimRight(base[:min(len(base), 32-len(suffix))], "-") + suffix
	}
	return s
}
