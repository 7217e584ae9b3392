package redact_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/internal/redact"
)

// FuzzString: String never panics, is idempotent (what it returns has
// nothing left to hide), never grows its input by more than one Marker
// per four bytes, and keeps a redacted string valid UTF-8 when it was.
// JSON of valid JSON text is valid JSON, and a fixed point too.
func FuzzString(f *testing.F) {
	if data, err := os.ReadFile("testdata/secrets.json"); err == nil {
		var shapes []shape
		if json.Unmarshal(data, &shapes) == nil {
			for _, s := range shapes {
				f.Add(s.text())
			}
		}
	}
	for _, s := range []string{
		"", "=", "a:", "pwd=", "pwd=\"", "pwd=[", "pwd={\"a\":[", "--pass ", "x://:@", "x://u:p/", "Basic ",
		"Authorization: Bearer", "Authorization: Bearer [redacted]", "-----BEGIN X PRIVATE KEY-----",
		"pwd=1 pwd=1&pwd=1,sig=1", "eyJa.b.c", "sk-sk-sk-1234567890123456789012",
		`{"password": 1, "a": [{"token": {"x": null}}, "Bearer abc1"], "n": 1e400}`, `"ghp_0123456789abcdefghij01"`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := redact.String(s)
		if again := redact.String(r); again != r {
			t.Fatalf("not idempotent:\n in  %q\n once %q\n twice %q", s, r, again)
		}
		if limit := len(s) + len(redact.Marker)*(len(s)/4+1); len(r) > limit {
			t.Fatalf("String(%q) is %d bytes, over %d", s, len(r), limit)
		}
		if r != s && utf8.ValidString(s) && !utf8.ValidString(r) {
			t.Fatalf("String(%q) = %q is not valid UTF-8", s, r)
		}
		if r != s && !strings.Contains(r, redact.Marker) {
			t.Fatalf("String(%q) = %q changed without redacting", s, r)
		}
		if !json.Valid([]byte(s)) {
			return
		}
		j, err := redact.JSON([]byte(s))
		if err != nil || !json.Valid(j) {
			t.Fatalf("JSON(%s) = %s, %v", s, j, err)
		}
		if again, _ := redact.JSON(j); string(again) != string(j) {
			t.Fatalf("JSON is not idempotent:\n in  %s\n once %s\n twice %s", s, j, again)
		}
	})
}
