package config

// docs/config.md, the configuration reference, is generated here from
// the types of types.go (keys from json tags, descriptions from doc
// comments, defaults from ApplyDefaults and the comments' "Default ..."
// sentences) and from testdata/reference.yaml, a file that sets every
// key (the examples). The tests fail when the reference in the
// repository is not what they generate, when the decoder accepts a key
// the types lack or the other way round, and when the example file
// leaves a key out or does not decode every key it sets.

//go:generate sh -c "MCPGATE_UPDATE_REFERENCE=1 go test -run ^TestConfigReference$ -count=1 ."

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const (
	referenceDoc     = "../../docs/config.md"
	referenceExample = "testdata/reference.yaml"
	// regenerate is the command the failure message names.
	regenerate = "go generate ./gateway/config"
)

// referenceEnv is the environment the example file is read with.
func referenceEnv(name string) (string, bool) { return "example-" + strings.ToLower(name), true }

// aliases are keys the decoder accepts that no field is named for.
var aliases = []struct{ path, doc string }{
	{"servers", "VS Code's name for `mcpServers`; a file may use one of the two."},
	{"$schema", "Ignored: editors use it to find a schema for the file."},
	{"x-...", "Any top-level key that starts with `x-` is ignored: a place for YAML anchors, as in Compose files."},
	{"inputs", "VS Code's prompts for values: ignored with a warning (mcpgate does not prompt; use `${VAR}`)."},
}

// fieldDocs describe the fields that types.go leaves without a comment
// of their own (several share one, or their type's says it all), by
// "Type.Field". A field that gains a comment must leave this table: the
// test says so.
var fieldDocs = map[string]string{
	"Server.Args":             "The command's arguments.",
	"Server.Env":              "Environment variables for the command, added to the gateway's own.",
	"Server.Cwd":              "The command's working directory (default: the gateway's).",
	"Server.Type":             `The transport: "http" or "streamable-http" (Streamable HTTP, falling back to SSE), "sse" (the 2024-11-05 HTTP+SSE transport only), or "stdio" with command. Left out, it follows from command or url.`,
	"Server.Headers":          "HTTP headers sent with every request to the server.",
	"OAuth.ClientID":          "The client's id at the authorization server: needed for client_credentials.",
	"OAuth.ClientSecret":      "The client's secret: needed for client_credentials.",
	"OAuth.Scopes":            "The scopes to ask for.",
	"ToolPolicy.Deny":         "Glob patterns of tool names to leave out, over allow.",
	"Rate.PerMinute":          "Calls a minute on average; 0 is no limit.",
	"Rate.Burst":              "Calls at once, over the average.",
	"Embeddings.URL":          "The endpoint, such as http://127.0.0.1:11434/v1/embeddings.",
	"Embeddings.Model":        "The embedding model to ask for.",
	"Embeddings.APIKey":       "Sent as Authorization: Bearer, when set.",
	"Credentials.Env":         "Environment variables for this tenant's process of a stdio server, over the server's env.",
	"Credentials.Headers":     "HTTP headers for this tenant's requests to the server, over the server's headers.",
	"Credentials.BearerToken": "The bearer token for this tenant's requests to the server, instead of the server's.",
	"ToolFilter.Allow":        "Glob patterns of published tool names to keep (empty: all).",
	"ToolFilter.Deny":         "Glob patterns of published tool names to leave out, over allow.",
}

// goDocs are the doc comments of the package's types and fields.
type goDocs struct {
	types  map[string]string // type name → doc
	fields map[string]string // "Type.Field" → doc
	pkg    string
}

func readGoDocs(t *testing.T) goDocs {
	t.Helper()
	fset := token.NewFileSet()
	d := goDocs{types: map[string]string{}, fields: map[string]string{}}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			d.pkg = f.Doc.Text()
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := gd.Doc
				if ts.Doc != nil {
					doc = ts.Doc
				}
				d.types[ts.Name.Name] = doc.Text()
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					continue
				}
				for _, fl := range st.Fields.List {
					for _, n := range fl.Names {
						if fl.Doc != nil {
							d.fields[ts.Name.Name+"."+n.Name] = fl.Doc.Text()
						}
					}
				}
			}
		}
	}
	return d
}

// refKey is one key of the reference.
type refKey struct {
	key     string
	field   reflect.StructField
	owner   reflect.Type
	typ     string
	doc     string
	def     string
	example string
}

// refSection is one object type and the keys it holds.
type refSection struct {
	typ   reflect.Type
	paths []string
	keys  []refKey
	// inline are types whose keys this one holds as its own (embedded).
	inline []reflect.Type
}

var durationType = reflect.TypeFor[Duration]()

// structOf is the struct type a key's value is, or holds by name (a
// map of them), or nil.
func structOf(t reflect.Type) (st reflect.Type, byName bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t, false
	}
	if t.Kind() == reflect.Map {
		e := t.Elem()
		if e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if e.Kind() == reflect.Struct {
			return e, true
		}
	}
	return nil, false
}

func anchor(t reflect.Type) string { return strings.ToLower(t.Name()) }

// typeText is how a key's type reads in the reference.
func typeText(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return typeText(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int:
		return "integer"
	case reflect.Slice:
		return "list of " + typeText(t.Elem()) + "s"
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "JSON object"
		}
		return "object: name → " + typeText(t.Elem())
	case reflect.Struct:
		return fmt.Sprintf("[%s](#%s)", t.Name(), anchor(t))
	}
	panic("config reference: no words for type " + t.String())
}

// keysOf lists the keys of struct type t, embedded structs' keys apart.
func keysOf(t reflect.Type) (keys []reflect.StructField, inline []reflect.Type) {
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			inline = append(inline, f.Type)
		case tag == "-" || !f.IsExported():
		case tag == "":
			panic(fmt.Sprintf("config reference: %s.%s has no json tag: name its key", t.Name(), f.Name))
		default:
			keys = append(keys, f)
		}
	}
	return keys, inline
}

func jsonKey(f reflect.StructField) string {
	k, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return k
}

// sections walks the types from Config, in the order a reader meets them.
func sections() []*refSection {
	byType := map[reflect.Type]*refSection{}
	var order []*refSection
	var visit func(t reflect.Type, path string, depth int)
	visit = func(t reflect.Type, path string, depth int) {
		if depth > 10 {
			panic("config reference: the types nest too deep (a cycle?) at " + path)
		}
		s, seen := byType[t]
		if !seen {
			s = &refSection{typ: t}
			byType[t] = s
			order = append(order, s)
		}
		s.paths = append(s.paths, path)
		fields, inline := keysOf(t)
		if !seen {
			s.inline = inline
			for _, f := range fields {
				s.keys = append(s.keys, refKey{key: jsonKey(f), field: f, owner: t, typ: typeText(f.Type)})
			}
		}
		// Keys of an embedded type sit beside the holder's.
		base := strings.TrimSuffix(path, " (inline)")
		for _, in := range inline {
			visit(in, base+" (inline)", depth+1)
		}
		for _, f := range fields {
			if st, byName := structOf(f.Type); st != nil {
				p := strings.TrimPrefix(base+"."+jsonKey(f), ".")
				if byName {
					p += ".NAME"
				}
				visit(st, p, depth+1)
			}
		}
	}
	visit(reflect.TypeFor[Config](), "", 0)
	return order
}

// sentences splits a doc comment into sentences: a period, then a space
// and a capital letter.
func sentences(doc string) []string {
	doc = strings.Join(strings.Fields(doc), " ")
	var out []string
	for {
		i := 0
		for {
			j := strings.Index(doc[i:], ". ")
			if j < 0 {
				return append(out, doc)
			}
			i += j + 2
			if i < len(doc) && (doc[i] >= 'A' && doc[i] <= 'Z' || doc[i] == '"') {
				out = append(out, doc[:i-1])
				doc = doc[i:]
				break
			}
		}
	}
}

var (
	theDefault = regexp.MustCompile(`("[^"]+"|[\w-]+) \((?:[^()]*; )?the default\)`)
	zeroMeans  = regexp.MustCompile(`\((0|""|empty) = ([^)]+)\)`)
)

// docDefault is the default a field's comment states, if any.
func docDefault(doc string) string {
	for _, s := range sentences(doc) {
		if rest, ok := strings.CutPrefix(s, "Default"); ok && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, ":")) {
			rest = strings.TrimSpace(strings.TrimPrefix(rest, ":"))
			rest, _, _ = strings.Cut(rest, ";")
			return strings.TrimSuffix(rest, ".")
		}
		if rest, ok := strings.CutPrefix(s, "Empty means "); ok {
			return "empty: " + strings.TrimSuffix(rest, ".")
		}
	}
	one := strings.Join(strings.Fields(doc), " ")
	if m := theDefault.FindStringSubmatch(one); m != nil {
		return m[1]
	}
	if m := zeroMeans.FindStringSubmatch(one); m != nil {
		return m[1] + ": " + m[2]
	}
	return ""
}

// codeDefaults are the defaults ApplyDefaults and the types' methods
// give, by "Type.Field": what the code does, to show and to hold the
// comments to.
func codeDefaults() map[string]string {
	c := &Config{Servers: map[string]*Server{"cmd": {Command: "x"}, "url": {URL: "https://example.com/mcp"}}}
	c.ApplyDefaults()
	out := map[string]string{"Config.Separator": strconv.Quote(c.Separator)}
	cmd, url := reflect.ValueOf(c.Servers["cmd"].ServerOptions), reflect.ValueOf(c.Servers["url"].ServerOptions)
	for f := range cmd.Type().Fields() {
		a, b := cmd.FieldByIndex(f.Index), url.FieldByIndex(f.Index)
		if a.IsZero() && b.IsZero() || f.Type.Kind() == reflect.Struct {
			continue
		}
		sa, sb := valueText(a), valueText(b)
		if sa == sb {
			out["ServerOptions."+f.Name] = sa
		} else {
			out["ServerOptions."+f.Name] = fmt.Sprintf("%s (command), %s (url)", sa, sb)
		}
	}
	sampling, elicitation, roots := ClientFeatures{}.Granted()
	out["ClientFeatures.Sampling"] = strconv.FormatBool(sampling)
	out["ClientFeatures.Elicitation"] = strconv.FormatBool(elicitation)
	out["ClientFeatures.Roots"] = strconv.FormatBool(roots)
	return out
}

func valueText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Duration:
		return x.String()
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v.Interface())
}

// sameDefault reports whether a comment's default and the code's agree,
// when the comment's can be read as a value at all.
func sameDefault(doc, code string) (comparable, same bool) {
	doc = strings.TrimSpace(doc)
	if d, err := time.ParseDuration(doc); err == nil {
		c, err := time.ParseDuration(code)
		return true, err == nil && c == d
	}
	if n, ok := strings.CutSuffix(doc, " MiB"); ok {
		if v, err := strconv.Atoi(n); err == nil {
			return true, code == strconv.Itoa(v<<20)
		}
	}
	if _, err := strconv.Atoi(doc); err == nil || strings.HasPrefix(doc, `"`) {
		return true, doc == code
	}
	return false, false
}

// describe fills each key's description and default, and reports keys
// that have neither a comment of their own nor one shared with the
// field above nor a comment on their type.
func describe(secs []*refSection, docs goDocs, code map[string]string) (problems []string) {
	described := map[string]bool{}
	for _, s := range secs {
		for i := range s.keys {
			k := &s.keys[i]
			id := s.typ.Name() + "." + k.field.Name
			described[id] = true
			doc := docs.fields[id]
			switch {
			case doc != "":
				k.doc = oneLine(doc)
				if name, rest, ok := strings.Cut(k.doc, " "); ok && strings.TrimSuffix(name, ",") == k.field.Name {
					k.doc = "`" + k.key + "`" + strings.TrimPrefix(name, k.field.Name) + " " + rest
				}
			case fieldDocs[id] != "":
				k.doc = fieldDocs[id]
			default:
				problems = append(problems, fmt.Sprintf("%s has no doc comment: write one in types.go", id))
			}
			if doc != "" && fieldDocs[id] != "" {
				problems = append(problems, fmt.Sprintf("%s has a doc comment now: remove its entry from fieldDocs in reference_test.go", id))
			}
			d := docDefault(docs.fields[id])
			c, ok := code[id]
			if ok && d != "" {
				if comparable, same := sameDefault(d, c); comparable && !same {
					problems = append(problems, fmt.Sprintf("%s: its comment says the default is %s, the code gives %s", id, d, c))
				}
			}
			switch {
			case d != "":
				k.def = d
			case ok:
				k.def = c
			case k.field.Type.Kind() == reflect.Bool:
				k.def = "false"
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(fieldDocs)) {
		if !described[id] {
			problems = append(problems, fmt.Sprintf("fieldDocs in reference_test.go describes %s, which is no key of the configuration: remove it", id))
		}
	}
	return problems
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// exampleNode finds the value at path in the example file; NAME in the
// path stands for any entry of a map, the first that has the rest.
func exampleNode(n *yaml.Node, path []string) *yaml.Node {
	if n.Kind == yaml.DocumentNode {
		return exampleNode(n.Content[0], path)
	}
	if len(path) == 0 {
		return n
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if path[0] == "NAME" || n.Content[i].Value == path[0] {
			if v := exampleNode(n.Content[i+1], path[1:]); v != nil {
				return v
			}
		}
	}
	return nil
}

// flow renders a YAML value as JSON, on one line.
func flow(n *yaml.Node) string {
	var v any
	if err := n.Decode(&v); err != nil {
		return n.Value
	}
	b, err := json.Marshal(v)
	if err != nil {
		return n.Value
	}
	return string(b)
}

// keyPaths are the paths at which a section's keys are found, with NAME
// for map entries and without " (inline)".
func keyPaths(s *refSection, secs []*refSection) []string {
	var out []string
	for _, p := range s.paths {
		p, inline := strings.CutSuffix(p, " (inline)")
		if inline {
			// An embedded type's keys sit beside the holder's, wherever
			// the holder is.
			for _, h := range secs {
				if slices.Contains(h.inline, s.typ) {
					out = append(out, keyPaths(h, secs)...)
				}
			}
			continue
		}
		out = append(out, p)
	}
	return out
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

// examples fills each key's example from the example file, and reports
// keys the file does not set.
func examples(secs []*refSection, root *yaml.Node) (missing []string) {
	for _, s := range secs {
		paths := keyPaths(s, secs)
		for i := range s.keys {
			k := &s.keys[i]
			var n *yaml.Node
			for _, p := range paths {
				if n = exampleNode(root, append(splitPath(p), k.key)); n != nil {
					break
				}
			}
			if n == nil {
				missing = append(missing, strings.TrimPrefix(paths[0]+"."+k.key, "."))
				continue
			}
			if st, _ := structOf(k.field.Type); st == nil {
				k.example = flow(n)
			}
		}
	}
	return missing
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func code(s string) string {
	if s == "" {
		return ""
	}
	if strings.Contains(s, "`") {
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

func render(secs []*refSection, docs goDocs, example []byte) string {
	var b bytes.Buffer
	b.WriteString("# Configuration reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from gateway/config/types.go and %s by `%s`; do not edit. -->\n\n", "gateway/config/"+referenceExample, regenerate)
	// Only the package doc's summary: its sections are Go doc (headings,
	// [Name] links) about the package's API, not about the file.
	summary, _, _ := strings.Cut(strings.TrimSpace(docs.pkg), "\n\n")
	fmt.Fprintf(&b, "%s\n\n", oneLine(summary))
	b.WriteString("`mcpgate serve --config FILE` serves the file; `mcpgate check-config FILE` checks it and says\n" +
		"where each problem is. Every string may use `${VAR}` and `${VAR:-default}` (environment\n" +
		"variables; `$$` is a literal `$`). Durations are Go durations (`\"30s\"`, `\"5m\"`, `\"1h30m\"`)\n" +
		"or a number of seconds. NAME in a key stands for a name you choose (a server's, a tenant's).\n" +
		"A key left out takes its default; \"—\" means the key is off or empty unless set.\n\n")
	b.WriteString("Sections:")
	for i, s := range secs {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s [%s](#%s)", sep, s.typ.Name(), anchor(s.typ))
	}
	b.WriteString(", [other clients' keys](#other-clients-keys), [a file with every key](#a-file-with-every-key).\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "\n## %s\n\n", s.typ.Name())
		var at []string
		for _, p := range s.paths {
			if p == "" {
				at = append(at, "the top level of the file")
			} else if q, ok := strings.CutSuffix(p, " (inline)"); ok {
				at = append(at, code(q)+" (its keys sit beside the others there)")
			} else {
				at = append(at, code(p))
			}
		}
		fmt.Fprintf(&b, "At %s.\n\n", strings.Join(at, ", "))
		if d := docs.types[s.typ.Name()]; d != "" {
			fmt.Fprintf(&b, "%s\n\n", oneParagraphs(d))
		}
		b.WriteString("| key | type | default | example | description |\n|---|---|---|---|---|\n")
		for _, k := range s.keys {
			def := k.def
			if def == "" {
				def = "—"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.key, k.typ, mdEscape(def), mdEscape(code(k.example)), mdEscape(k.doc))
		}
		for _, in := range s.inline {
			fmt.Fprintf(&b, "| every key of [%s](#%s) | | | | |\n", in.Name(), anchor(in))
		}
	}
	b.WriteString("\n## Other clients' keys\n\nKeys that no field above is named for, which the file may still hold:\n\n| key | what mcpgate does |\n|---|---|\n")
	for _, a := range aliases {
		fmt.Fprintf(&b, "| `%s` | %s |\n", a.path, a.doc)
	}
	for _, k := range slices.Sorted(maps.Keys(otherClientKeys)) {
		fmt.Fprintf(&b, "| `mcpServers.NAME.%s` | Ignored with a warning: %s. |\n", k, otherClientKeys[k])
	}
	for _, k := range slices.Sorted(maps.Keys(renamedKeys)) {
		fmt.Fprintf(&b, "| `mcpServers.NAME.%s` | An error: mcpgate calls it `%s`. |\n", k, renamedKeys[k])
	}
	fmt.Fprintf(&b, "\n## A file with every key\n\n```yaml\n%s```\n", example)
	return b.String()
}

// oneParagraphs joins each paragraph of a comment into one line.
func oneParagraphs(s string) string {
	var ps []string
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		ps = append(ps, oneLine(p))
	}
	return strings.Join(ps, "\n\n")
}

// reference generates docs/config.md, failing the test on what would
// make it wrong.
func reference(t *testing.T) string {
	t.Helper()
	secs := sections()
	docs := readGoDocs(t)
	for _, p := range describe(secs, docs, codeDefaults()) {
		t.Error(p)
	}
	example, err := os.ReadFile(referenceExample)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(example, &root); err != nil {
		t.Fatal(err)
	}
	for _, m := range examples(secs, &root) {
		t.Errorf("%s sets no %s: add it, so that the reference has an example and the test decodes it", referenceExample, m)
	}
	return render(secs, docs, example)
}

func TestConfigReference(t *testing.T) {
	got := reference(t)
	if os.Getenv("MCPGATE_UPDATE_REFERENCE") != "" {
		if err := os.MkdirAll(filepath.Dir(referenceDoc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(referenceDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referenceDoc)
	if err != nil {
		t.Fatalf("%v: generate it with %s", err, regenerate)
	}
	if string(want) != got {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		line := func(ls []string) string {
			if i < len(ls) {
				return ls[i]
			}
			return "(end of file)"
		}
		t.Fatalf("docs/config.md is not what gateway/config/types.go and %s give: run\n\t%s\nand commit docs/config.md. First difference, line %d:\n  in the file: %s\n  generated:   %s",
			referenceExample, regenerate, i+1, line(wl), line(gl))
	}
}

// The example file is a valid configuration, and decoding it sets every
// key it holds: a key the decoder accepted but did not store would be
// zero here.
func TestConfigReferenceExampleIsValidAndDecodesEveryKey(t *testing.T) {
	data, err := os.ReadFile(referenceExample)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data, referenceExample, referenceEnv)
	if err != nil {
		t.Fatalf("%s: %v", referenceExample, err)
	}
	for _, w := range c.Warnings {
		t.Errorf("%s: a warning: %v", referenceExample, w)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node, v reflect.Value, path string)
	walk = func(n *yaml.Node, v reflect.Value, path string) {
		for v.Kind() == reflect.Pointer && !v.IsNil() {
			v = v.Elem()
		}
		if v.Kind() == reflect.Pointer {
			t.Errorf("%s: %s is set in the file but nil after decoding", referenceExample, path)
			return
		}
		switch {
		case n.Kind == yaml.ScalarNode:
			want := n.Value
			if d, err := time.ParseDuration(want); err == nil && v.Type() == durationType {
				want = d.String()
			}
			if got, ok := scalarText(v); !ok || got != want && !strings.Contains(want, "$") {
				t.Errorf("%s: %s is %q in the file but %q after decoding", referenceExample, path, n.Value, got)
			}
		case n.Kind == yaml.SequenceNode:
			if v.Kind() != reflect.Slice || v.Len() != len(n.Content) {
				t.Errorf("%s: %s has %d items in the file but decodes to %v", referenceExample, path, len(n.Content), v)
			}
		case v.Kind() == reflect.Struct:
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				f, ok := fieldByKey(v.Type(), key)
				if !ok {
					t.Errorf("%s: %s.%s is no field of %s", referenceExample, path, key, v.Type().Name())
					continue
				}
				walk(n.Content[i+1], v.FieldByIndex(f.Index), strings.TrimPrefix(path+"."+key, "."))
			}
		case v.Kind() == reflect.Map:
			if v.Len() != len(n.Content)/2 {
				t.Errorf("%s: %s has %d entries in the file but %d after decoding", referenceExample, path, len(n.Content)/2, v.Len())
			}
			if v.Type().Elem().Kind() == reflect.Interface {
				return // meta: any JSON
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				e := v.MapIndex(reflect.ValueOf(n.Content[i].Value))
				if !e.IsValid() {
					t.Errorf("%s: %s.%s is lost in decoding", referenceExample, path, n.Content[i].Value)
					continue
				}
				walk(n.Content[i+1], e, path+"."+n.Content[i].Value)
			}
		default:
			t.Errorf("%s: %s is an object in the file but a %s in the Config", referenceExample, path, v.Kind())
		}
	}
	walk(root.Content[0], reflect.ValueOf(c).Elem(), "")
}

// scalarText writes a decoded scalar as the file would: durations as Go
// durations, the rest as they are.
func scalarText(v reflect.Value) (string, bool) {
	if v.Type() == durationType {
		return v.Interface().(Duration).String(), true
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), true
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), true
	case reflect.Int:
		return strconv.FormatInt(v.Int(), 10), true
	}
	return "", false
}

// fieldByKey finds the field of struct type t (or of a type it embeds)
// whose json key is key.
func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if jsonKey(f) == key {
			return f, true
		}
		if f.Anonymous && jsonKey(f) == "" {
			if g, ok := fieldByKey(f.Type, key); ok {
				g.Index = append(slices.Clone(f.Index), g.Index...)
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}

// The decoder (sections.go, decode.go) names its keys in field{"key",
// ...} literals. Each must be a key of the reference or one of its
// aliases, and each key of the reference must be one of them.
func TestConfigReferenceKeysAreTheDecodersKeys(t *testing.T) {
	decoded := map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			cl, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			at, ok := cl.Type.(*ast.ArrayType)
			if !ok {
				return true
			}
			if id, ok := at.Elt.(*ast.Ident); !ok || id.Name != "field" {
				return true
			}
			for _, e := range cl.Elts {
				if fl, ok := e.(*ast.CompositeLit); ok && len(fl.Elts) > 0 {
					if lit, ok := fl.Elts[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						k, _ := strconv.Unquote(lit.Value)
						decoded[k] = true
					}
				}
			}
			return true
		})
	}
	if len(decoded) < 20 {
		t.Fatalf("found %d keys in the decoder's field lists: has it changed shape?", len(decoded))
	}
	documented := map[string]bool{}
	for _, s := range sections() {
		for _, k := range s.keys {
			documented[k.key] = true
			if !decoded[k.key] {
				t.Errorf("%s.%s (key %q) is in the reference, but the decoder has no field for it", s.typ.Name(), k.field.Name, k.key)
			}
		}
	}
	for _, a := range aliases {
		documented[a.path] = true
	}
	for _, k := range slices.Sorted(maps.Keys(decoded)) {
		if !documented[k] {
			t.Errorf("the decoder accepts %q, which no json-tagged field of types.go (nor an alias of the reference) names", k)
		}
	}
}

// The description of a default is found however the comment words it.
func TestDocDefault(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{"Timeout bounds one request to the server. Default 30s.", "30s"},
		{"HealthInterval is how often. Default 30s; negative disables.", "30s"},
		{`Separator joins names: "github" + "_" + "create_issue". Default "_".`, `"_"`},
		{"Sampling is the rate. Default: no limit beyond the concurrency bound.", "no limit beyond the concurrency bound"},
		{"Listen is the address. Empty means the serve command's --addr (127.0.0.1:8765).", "empty: the serve command's --addr (127.0.0.1:8765)"},
		{`Pins is what: "warn" (publish the change, log and audit it; the default), "block" (keep).`, `"warn"`},
		{"Listing is the mode: full (the default), minimal or search.", "full"},
		{"IdleTimeout stops a stdio server unused for this long (0 = never).", "0: never"},
		{`DB is the SQLite file ("" = no audit log).`, `"": no audit log`},
		{"Start is lazy (the first request; the default for stdio) or eager.", ""},
		{"MaxConcurrency bounds the requests.", ""},
	} {
		if got := docDefault(tt.doc); got != tt.want {
			t.Errorf("docDefault(%q) = %q, want %q", tt.doc, got, tt.want)
		}
	}
	if _, same := sameDefault("64 MiB", strconv.Itoa(64<<20)); !same {
		t.Error("64 MiB is not 67108864")
	}
	if comparable, same := sameDefault("30s", "1m0s"); !comparable || same {
		t.Error("30s is 1m0s")
	}
}
