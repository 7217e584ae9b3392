package config

import (
	"strings"
	"testing"
)

func TestInterpolate(t *testing.T) {
	lookup := env("A", "x", "EMPTY", "", "B", "y")
	for _, tc := range []struct {
		in, out, shown, problem string
	}{
		{in: "plain", out: "plain", shown: "plain"},
		{in: "${A}", out: "x", shown: Redaction},
		{in: "pre-${A}-${B}.post", out: "pre-x-y.post", shown: "pre-[redacted]-[redacted].post"},
		{in: "${env:A}", out: "x", shown: Redaction},
		{in: "${NOPE:-fallback}", out: "fallback", shown: Redaction},
		{in: "${EMPTY:-fallback}", out: "fallback", shown: Redaction},
		{in: "${A:-fallback}", out: "x", shown: Redaction},
		{in: "${NOPE:-}", out: "", shown: ""},
		{in: "${EMPTY}", out: "", shown: ""},
		{in: "$$", out: "$", shown: "$"},
		{in: "$${A}", out: "${A}", shown: "${A}"},
		{in: "$$$${A}", out: "$${A}", shown: "$${A}"},
		{in: "$$${A}", out: "$x", shown: "$" + Redaction},
		{in: "cost $5, $HOME and a trailing $", out: "cost $5, $HOME and a trailing $", shown: "cost $5, $HOME and a trailing $"},
		{in: "${NOPE}", problem: "environment variable NOPE is not set"},
		{in: "${input:token}", problem: "${input:token} is a VS Code prompt"},
		{in: "${A B}", problem: "${A B} does not name a variable"},
		{in: "${}", problem: "${} does not name a variable"},
		{in: "x${A", problem: "unterminated ${"},
	} {
		out, shown, probs := interpolate(tc.in, lookup)
		switch {
		case tc.problem != "":
			if len(probs) != 1 || !strings.Contains(probs[0].msg, tc.problem) || probs[0].hint == "" {
				t.Errorf("%q: problems %+v, want %q", tc.in, probs, tc.problem)
			}
		case len(probs) > 0 || out != tc.out || shown != tc.shown:
			t.Errorf("%q = %q, %q, %+v; want %q, %q", tc.in, out, shown, probs, tc.out, tc.shown)
		}
	}
}

// TestInterpolationScope: every string value is interpolated, keys never.
func TestInterpolationScope(t *testing.T) {
	src := `{
  "listen": "${HOST}:8765",
  "mcpServers": {
    "a": {
      "command": "${BIN}",
      "args": ["--dir=${HOME_DIR}", "$${LITERAL}"],
      "env": {"${KEY}": "${VAL}"},
      "timeout": "${T}",
      "maxConcurrency": "${N}",
      "disabled": "${OFF:-false}",
      "tools": {"descriptions": {"t": "made by ${WHO}"}, "meta": {"t": {"owner": "${WHO}", "n": 1}}}
    }
  }
}`
	c, err := Parse([]byte(src), "i.json", env("HOST", "0.0.0.0", "BIN", "/bin/srv", "HOME_DIR", "/home/ada",
		"VAL", "v", "T", "10s", "N", "4", "WHO", "ada"))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers["a"]
	if c.Listen != "0.0.0.0:8765" || s.Command != "/bin/srv" || s.Args[0] != "--dir=/home/ada" || s.Args[1] != "${LITERAL}" ||
		s.Env["${KEY}"] != "v" || s.Timeout.D().String() != "10s" || s.MaxConcurrency != 4 || s.Disabled ||
		s.Tools.Descriptions["t"] != "made by ada" || s.Tools.Meta["t"]["owner"] != "ada" {
		t.Errorf("%+v", s)
	}
	_, err = Parse([]byte(src), "i.json", env())
	if n := len(ErrorList(err)); n != 8 {
		t.Errorf("with no variables set: %d errors, want one per unset variable (8):\n%v", n, err)
	}
}
