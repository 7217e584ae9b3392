package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/internal/redact"
	"go.yaml.in/yaml/v3"
)

// source remembers, by path (keys joined by NUL), where each key and value
// stood in the file, which values failed to decode (so that validation
// does not pile a second error on them), and which strings came from
// interpolation: mapped to their form in messages (interp: every
// substituted part hidden) and in Redacted (plain: only the parts that
// read as secrets hidden).
type source struct {
	file   string
	val    map[string]Pos
	key    map[string]Pos
	bad    map[string]bool
	interp map[string]string
	plain  map[string]string
}

func pathKey(p []string) string { return strings.Join(p, "\x00") }

// at is where the value at p is, or else its nearest ancestor: the best
// place to point at when the value is missing.
func (s *source) at(p ...string) Pos {
	if s == nil {
		return Pos{}
	}
	for n := len(p); n >= 0; n-- {
		if pos, ok := s.val[pathKey(p[:n])]; ok {
			return pos
		}
		if pos, ok := s.key[pathKey(p[:n])]; ok {
			return pos
		}
	}
	return Pos{}
}

// At is where the value at path stands in the file c was read from
// (keys from the top, servers under "mcpServers": "mcpServers", NAME,
// "start"), or the place of its nearest ancestor that the file has; the
// zero Pos for a Config not read from a file.
func (c *Config) At(path ...string) Pos { return c.src.at(path...) }

// keyAt is where the key of p is: errors about an entry as a whole point
// at its name.
func (s *source) keyAt(p ...string) Pos {
	if s != nil {
		if pos, ok := s.key[pathKey(p)]; ok {
			return pos
		}
	}
	return s.at(p...)
}

func (s *source) failed(p ...string) bool { return s != nil && s.bad[pathKey(p)] }

// fromEnv reports whether v came from interpolation, in whole or part.
func (s *source) fromEnv(v string) bool {
	if s == nil {
		return false
	}
	_, ok := s.interp[v]
	return ok
}

// shown is how a value may appear in a message: quoted, unless it came
// from the environment, which may hold a secret.
func (s *source) shown(v string) string {
	if s != nil {
		if r, ok := s.interp[v]; ok {
			return strconv.Quote(r)
		}
	}
	return strconv.Quote(v)
}

// maxNodes and maxDepth bound the tree one file may expand to: YAML
// aliases can make a small file a huge tree, or through self-reference
// an endless one.
const (
	maxNodes = 1 << 18
	maxDepth = 100
)

type decoder struct {
	src    *source
	env    func(string) (string, bool)
	errs   Errors
	warns  []*Diagnostic
	budget int
	depth  int
	// soft is set within a disabled server: an unset variable there is a
	// warning, since servers are often disabled for want of a credential.
	soft bool
}

func newDecoder(file string, env func(string) (string, bool)) *decoder {
	return &decoder{
		src: &source{file: file, val: map[string]Pos{}, key: map[string]Pos{},
			bad: map[string]bool{}, interp: map[string]string{}, plain: map[string]string{}},
		env:    env,
		budget: maxNodes,
	}
}

func npos(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

func (d *decoder) errorf(pos Pos, hint, format string, args ...any) {
	d.errs = append(d.errs, &Diagnostic{File: d.src.file, Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

func (d *decoder) warnf(pos Pos, hint, format string, args ...any) {
	d.warns = append(d.warns, &Diagnostic{File: d.src.file, Pos: pos, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// fail reports an error about the value at p and marks p as failed.
func (d *decoder) fail(p []string, n *yaml.Node, hint, format string, args ...any) {
	d.src.bad[pathKey(p)] = true
	d.errorf(npos(n), hint, format, args...)
}

var nullNode = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null"}

// node follows aliases and charges the budget; past it every node reads
// as null, after one error.
func (d *decoder) node(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if d.budget--; d.budget < 0 || n == nil {
		if d.budget == -1 {
			d.errorf(Pos{}, "write the values out instead of nesting aliases",
				"the file expands to more than %d values through YAML aliases", maxNodes)
		}
		return nullNode
	}
	return n
}

// enter counts one more level of nesting (merge keys recurse without
// growing the path), and reports whether it is allowed; the caller
// decrements depth when it is.
func (d *decoder) enter(n *yaml.Node) bool {
	if d.depth >= maxDepth {
		d.tooDeep(n)
		return false
	}
	d.depth++
	return true
}

func (d *decoder) tooDeep(n *yaml.Node) {
	if d.budget >= 0 {
		d.budget = -1 // one error for the file, and stop here
		d.errorf(npos(n), "flatten the value, or look for an alias that refers to itself", "values nest more than %d deep", maxDepth)
	}
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// label names the value at p in messages: "timeout", `env "HOME"`, "args[2]".
func label(p []string) string {
	if len(p) >= 2 {
		switch parent, last := p[len(p)-2], p[len(p)-1]; parent {
		case "args", "allow", "deny", "scopes":
			return parent + "[" + last + "]"
		case "env", "headers", "rename", "descriptions", "meta":
			return parent + " " + strconv.Quote(last)
		}
	}
	if len(p) == 0 {
		return "the file"
	}
	return p[len(p)-1]
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	}
	return "a " + strings.TrimPrefix(n.ShortTag(), "!!")
}

type pair struct {
	key  string
	k, v *yaml.Node
}

// mapping returns the entries of an object, with YAML merge keys (<<)
// applied and duplicate keys reported. Null is an empty object.
func (d *decoder) mapping(n *yaml.Node, p []string) []pair {
	n = d.node(n)
	if isNull(n) || !d.enter(n) {
		return nil
	}
	defer func() { d.depth-- }()
	if n.Kind != yaml.MappingNode {
		d.fail(p, n, `write an object: {"key": value}`, "%s must be an object, not %s", label(p), kindName(n))
		return nil
	}
	var out, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.node(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			d.errorf(npos(k), "quote the key", "a key must be a string, not %s", kindName(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			merged = append(merged, d.merge(n.Content[i+1], p)...)
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.errorf(npos(k), fmt.Sprintf("it is also at line %d; keep one", first.Line), "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k.Value, k, n.Content[i+1]})
	}
	for _, m := range merged { // keys written out win over merged ones
		if _, ok := seen[m.key]; !ok {
			seen[m.key] = m.k
			out = append(out, m)
		}
	}
	return out
}

func (d *decoder) merge(v *yaml.Node, p []string) []pair {
	v = d.node(v)
	if v.Kind != yaml.SequenceNode {
		return d.mapping(v, p)
	}
	var out []pair
	for _, m := range v.Content {
		out = append(out, d.mapping(m, p)...)
	}
	return out
}

// entry records where a key and its value are and returns the value's path.
func (d *decoder) entry(p []string, e pair) []string {
	q := append(p[:len(p):len(p)], e.key)
	d.src.key[pathKey(q)] = npos(e.k)
	if v := d.node(e.v); v != nullNode {
		d.src.val[pathKey(q)] = npos(v)
	}
	return q
}

type field struct {
	name string
	set  func(v *yaml.Node, p []string)
}

// fields decodes an object with known keys. other handles keys the list
// lacks (other clients' keys); when it returns false, or is nil, the key
// is an error with the nearest known name as a hint.
func (d *decoder) fields(n *yaml.Node, p []string, fs []field, other func(pair, []string) bool) {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	for _, e := range d.mapping(n, p) {
		q := d.entry(p, e)
		i := slices.Index(names, e.key)
		if i >= 0 {
			fs[i].set(e.v, q)
			continue
		}
		if other != nil && other(e, q) {
			continue
		}
		hint := "the keys here are " + strings.Join(names, ", ")
		if s, ok := suggestKey(e.key, names); ok {
			hint = fmt.Sprintf("did you mean %q?", s)
			d.src.bad[pathKey(append(p[:len(p):len(p)], s))] = true
		}
		d.errorf(npos(e.k), hint, "unknown key %q", e.key)
	}
}

// scalar returns n's scalar node; null and errors give nil.
func (d *decoder) scalar(n *yaml.Node, p []string, want string) *yaml.Node {
	n = d.node(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		d.fail(p, n, "write a single value here, not a list or object", "%s must be %s, not %s", label(p), want, kindName(n))
		return nil
	}
	return n
}

// str reads any scalar as text (YAML's `- 8080` in args is a string here)
// and interpolates it.
func (d *decoder) str(n *yaml.Node, p []string) string {
	if n = d.scalar(n, p, "a string"); n == nil {
		return ""
	}
	s, _ := d.interp(n, p)
	return s
}

// interp expands n's text; ok is false when that failed (and was
// reported), so that the caller does not report the same value twice.
func (d *decoder) interp(n *yaml.Node, p []string) (s string, ok bool) {
	if !strings.Contains(n.Value, "$") {
		return n.Value, true
	}
	out, shown, probs := interpolate(n.Value, d.env)
	ok = true
	for _, pr := range probs {
		if pr.unset && d.soft {
			d.warnf(npos(n), "the server is disabled, so this is not an error", "%s", pr.msg)
			continue
		}
		d.fail(p, n, pr.hint, "%s", pr.msg)
		ok = false
	}
	if out != shown && out != "" {
		d.src.interp[out] = shown
		d.src.plain[out], _, _ = interpolate(n.Value, plainEnv(d.env))
	}
	return out, ok
}

// plainEnv is env as Redacted shows a value from it: a value is hidden
// for what it is, not for where it came from (${SCRATCH}/sandbox is a
// path). A variable whose name says it holds a secret (GITHUB_TOKEN,
// API_KEY) is hidden, set or not (its default would be one too), and so
// is a value that reads as a token whatever its variable's name.
func plainEnv(env func(string) (string, bool)) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if redact.Name(name) {
			return Redaction, true
		}
		v, ok := env(name)
		if redact.Token(v) {
			return Redaction, true
		}
		return v, ok
	}
}

func (d *decoder) boolean(n *yaml.Node, p []string) bool {
	if n = d.scalar(n, p, "true or false"); n == nil {
		return false
	}
	switch s, ok := d.interp(n, p); {
	case !ok:
		return false
	case s == "true":
		return true
	case s == "false":
		return false
	}
	d.fail(p, n, "write true or false", "%s must be true or false", label(p))
	return false
}

func (d *decoder) integer(n *yaml.Node, p []string) int {
	if n = d.scalar(n, p, "a number"); n == nil {
		return 0
	}
	s, ok := d.interp(n, p)
	if !ok {
		return 0
	}
	i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 0, 32)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
			d.fail(p, n, "write a whole number such as 32", "%s must be a whole number", label(p))
			return 0
		}
		i = int64(f)
	}
	return int(i)
}

// duration reads "30s", "5m", "1h30m" or a number of seconds (Cline's
// timeout is one).
func (d *decoder) duration(n *yaml.Node, p []string) Duration {
	if n = d.scalar(n, p, "a duration"); n == nil {
		return 0
	}
	s, ok := d.interp(n, p)
	if !ok {
		return 0
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.Abs(f) > math.MaxInt64/float64(time.Second) {
			d.fail(p, n, "write a duration such as \"30s\" or \"5m\"", "%s is out of range", label(p))
			return 0
		}
		return Duration(f * float64(time.Second))
	}
	t, err := time.ParseDuration(s)
	if err != nil {
		d.fail(p, n, `write a duration such as "30s" or "5m", or a number of seconds`, "%s is not a duration", label(p))
		return 0
	}
	return Duration(t)
}

func (d *decoder) strList(n *yaml.Node, p []string) []string {
	n = d.node(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(p, n, `write a list: ["a", "b"]`, "%s must be a list of strings, not %s", label(p), kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		q := append(p[:len(p):len(p)], strconv.Itoa(i))
		if c = d.node(c); c != nullNode {
			d.src.val[pathKey(q)] = npos(c)
		}
		out = append(out, d.str(c, q))
	}
	return out
}

// strMap reads an object of strings; keys are taken as written, never
// interpolated.
func (d *decoder) strMap(n *yaml.Node, p []string) map[string]string {
	es := d.mapping(n, p)
	if es == nil {
		return nil
	}
	out := make(map[string]string, len(es))
	for _, e := range es {
		out[e.key] = d.str(e.v, d.entry(p, e))
	}
	return out
}

// value reads anything, for tool metadata, in the types encoding/json
// would give (numbers as float64) so that it publishes as written.
func (d *decoder) value(n *yaml.Node, p []string) any {
	n = d.node(n)
	if len(p) > maxDepth {
		d.tooDeep(n)
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, e := range d.mapping(n, p) {
			m[e.key] = d.value(e.v, d.entry(p, e))
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			l[i] = d.value(c, append(p[:len(p):len(p)], strconv.Itoa(i)))
		}
		return l
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		return n.Value == "true"
	case "!!int", "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil {
			if i, ierr := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); ierr == nil {
				return float64(i)
			}
		}
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			d.fail(p, n, "JSON has no such number", "%s is not a finite number", label(p))
			return nil
		}
		return f
	}
	s, _ := d.interp(n, p)
	return s
}
