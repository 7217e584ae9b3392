package config

import (
	"fmt"
	"strings"
)

type interpProblem struct {
	msg, hint string
	unset     bool
}

// interpolate expands ${VAR} and ${VAR:-default} (the default when VAR
// is unset or empty, as in the shell) and turns $$ into $. A '$' before
// anything else is kept, so most strings written for Claude Desktop mean
// the same here. VS Code's ${env:VAR} is ${VAR}. The per-instance
// variables (${MCPGATE_INSTANCE_DIR}, ${MCPGATE_INSTANCE_ID}) are kept as
// they are, for the gateway to expand. shown is the result
// with each substituted part replaced by Redaction.
func interpolate(s string, env func(string) (string, bool)) (out, shown string, probs []interpProblem) {
	var o, sh strings.Builder
	for {
		i := strings.IndexByte(s, '$')
		if i < 0 || i+1 == len(s) {
			o.WriteString(s)
			sh.WriteString(s)
			return o.String(), sh.String(), probs
		}
		o.WriteString(s[:i])
		sh.WriteString(s[:i])
		switch s[i+1] {
		case '$':
			o.WriteByte('$')
			sh.WriteByte('$')
			s = s[i+2:]
			continue
		case '{':
		default:
			o.WriteByte('$')
			sh.WriteByte('$')
			s = s[i+1:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			probs = append(probs, interpProblem{msg: "unterminated ${", hint: "close it with }, or write $$ for a literal $"})
			o.WriteString(s[i:])
			sh.WriteString(s[i:])
			return o.String(), sh.String(), probs
		}
		expr := s[i+2 : i+end]
		s = s[i+end+1:]
		name, def, hasDef := strings.Cut(expr, ":-")
		name = strings.TrimPrefix(name, "env:")
		if n, ok := strings.CutPrefix(name, "input:"); ok {
			probs = append(probs, interpProblem{msg: fmt.Sprintf("${input:%s} is a VS Code prompt, which mcpgate cannot show", n),
				hint: "set an environment variable and write ${NAME} instead"})
			continue
		}
		if instanceVar(name) {
			// Each instance of the server has its own: the gateway
			// expands it when it starts one (ForInstance).
			o.WriteString("${" + name + "}")
			sh.WriteString("${" + name + "}")
			continue
		}
		if !validVarName(name) {
			probs = append(probs, interpProblem{msg: fmt.Sprintf("${%s} does not name a variable", expr),
				hint: "write ${NAME} or ${NAME:-default} with letters, digits and _; write $$ for a literal $"})
			continue
		}
		val, ok := env(name)
		if hasDef && val == "" {
			val, ok = def, true
		}
		if !ok {
			probs = append(probs, interpProblem{unset: true, msg: fmt.Sprintf("environment variable %s is not set", name),
				hint: fmt.Sprintf("set it, or give a default: ${%s:-value}", name)})
			continue
		}
		o.WriteString(val)
		if val != "" {
			sh.WriteString(Redaction)
		}
	}
}

func validVarName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
