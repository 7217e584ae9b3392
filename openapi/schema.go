package openapi

// The parser's schemas become JSON Schema 2020-12 here. A schema that a
// $ref names becomes one entry of $defs, converted once per document and
// shared by the tools that use it; a tool's schema carries the entries it
// reaches. Recursion through $refs is so bounded by the number of
// components, and inline nesting by maxNesting.

import (
	"cmp"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxNesting bounds how deep inline schemas nest within one schema.
const maxNesting = 64

// schemaConv converts the schemas of one document.
type schemaConv struct {
	defs    map[*openapi3.Schema]*def
	names   map[string]bool
	pending []*def
}

// def is an entry of $defs: a schema some $ref names.
type def struct {
	name   string
	value  *openapi3.Schema
	schema any // the converted schema: a map, or true or false
	deps   []*def
	err    error
}

// defSet is a set of the defs a schema refers to.
type defSet map[*def]bool

func newSchemaConv() *schemaConv {
	return &schemaConv{defs: map[*openapi3.Schema]*def{}, names: map[string]bool{}}
}

// convert returns r as JSON Schema, a $ref for a named schema.
func (c *schemaConv) convert(r *openapi3.SchemaRef, used defSet, depth int) (any, error) {
	if r == nil {
		return map[string]any{}, nil
	}
	if r.Value == nil {
		if r.Ref != "" {
			return nil, fmt.Errorf("the $ref %q is not resolved", r.Ref)
		}
		return map[string]any{}, nil
	}
	if r.Ref != "" {
		d := c.def(r)
		used[d] = true
		return map[string]any{"$ref": "#/$defs/" + d.name}, nil
	}
	return c.body(r.Value, used, depth)
}

// def returns the entry of $defs for r, queued for conversion when new.
func (c *schemaConv) def(r *openapi3.SchemaRef) *def {
	if d, ok := c.defs[r.Value]; ok {
		return d
	}
	name := defName(r.Ref)
	for i := 2; c.names[name]; i++ {
		name = fmt.Sprintf("%s_%d", defName(r.Ref), i)
	}
	c.names[name] = true
	d := &def{name: name, value: r.Value}
	c.defs[r.Value] = d
	c.pending = append(c.pending, d)
	return d
}

// drain converts the queued defs, and those they bring in, in a loop
// rather than by recursion, so that a long chain of $refs cannot exhaust
// the stack.
func (c *schemaConv) drain() {
	for len(c.pending) > 0 {
		d := c.pending[0]
		c.pending = c.pending[1:]
		deps := defSet{}
		d.schema, d.err = c.body(d.value, deps, 0)
		d.deps = sortedDefs(deps)
	}
}

// closure returns the defs that the schemas using used reach, and the
// first conversion error among them.
func closure(used defSet) (map[string]any, error) {
	out := map[string]any{}
	seen := defSet{}
	queue := sortedDefs(used)
	var firstErr error
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		if seen[d] {
			continue
		}
		seen[d] = true
		if d.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("schema %s: %w", d.name, d.err)
		}
		out[d.name] = d.schema
		queue = append(queue, d.deps...)
	}
	return out, firstErr
}

func sortedDefs(s defSet) []*def {
	out := slices.Collect(maps.Keys(s))
	slices.SortFunc(out, func(a, b *def) int { return cmp.Compare(a.name, b.name) })
	return out
}

// defName makes a $defs key from a $ref: its last pointer segment, or the
// file's name, in the characters of a tool name.
func defName(ref string) string {
	doc, frag, _ := strings.Cut(ref, "#")
	name := frag[strings.LastIndexByte(frag, '/')+1:]
	if name == "" {
		name = strings.TrimSuffix(path.Base(doc), path.Ext(doc))
	}
	name = strings.NewReplacer("~1", "/", "~0", "~").Replace(name)
	name = sanitize(name)
	if name == "" || name == "." || name == ".." {
		return "schema"
	}
	return name
}

// body converts a schema's own keywords, with its subschemas.
func (c *schemaConv) body(s *openapi3.Schema, used defSet, depth int) (any, error) {
	if depth > maxNesting {
		return nil, fmt.Errorf("schemas nest deeper than %d levels", maxNesting)
	}
	if s.Always != nil {
		return *s.Always, nil
	}
	out := map[string]any{}
	sub := func(key string, r *openapi3.SchemaRef) error {
		if r == nil {
			return nil
		}
		v, err := c.convert(r, used, depth+1)
		if err == nil {
			out[key] = v
		}
		return err
	}
	list := func(key string, rs openapi3.SchemaRefs) error {
		if len(rs) == 0 {
			return nil
		}
		vs := make([]any, 0, len(rs))
		for _, r := range rs {
			v, err := c.convert(r, used, depth+1)
			if err != nil {
				return err
			}
			vs = append(vs, v)
		}
		out[key] = vs
		return nil
	}
	named := func(key string, m openapi3.Schemas) error {
		if len(m) == 0 {
			return nil
		}
		vs := make(map[string]any, len(m))
		for name, r := range m {
			v, err := c.convert(r, used, depth+1)
			if err != nil {
				return err
			}
			vs[name] = v
		}
		out[key] = vs
		return nil
	}
	boolSchema := func(key string, b openapi3.BoolSchema) error {
		if b.Has != nil {
			out[key] = *b.Has
			return nil
		}
		return sub(key, b.Schema)
	}
	err := cmp.Or(
		list("allOf", s.AllOf), list("anyOf", s.AnyOf), list("oneOf", s.OneOf), sub("not", s.Not),
		sub("items", s.Items), list("prefixItems", s.PrefixItems), sub("contains", s.Contains),
		named("properties", s.Properties), named("patternProperties", s.PatternProperties),
		boolSchema("additionalProperties", s.AdditionalProperties), sub("propertyNames", s.PropertyNames),
		named("dependentSchemas", s.DependentSchemas),
		boolSchema("unevaluatedItems", s.UnevaluatedItems), boolSchema("unevaluatedProperties", s.UnevaluatedProperties),
		sub("if", s.If), sub("then", s.Then), sub("else", s.Else),
	)
	if err != nil {
		return nil, err
	}
	keywords(s, out)
	return nullable(s, out), nil
}

// keywords copies the keywords without subschemas, in their 2020-12 form.
func keywords(s *openapi3.Schema, out map[string]any) {
	if types := jsonTypes(s.Type); len(types) == 1 {
		out["type"] = types[0]
	} else if len(types) > 1 {
		out["type"] = anySlice(types)
	}
	set := func(key string, v string) {
		if v != "" {
			out[key] = v
		}
	}
	set("title", s.Title)
	set("description", s.Description)
	set("format", s.Format)
	set("pattern", s.Pattern)
	set("contentMediaType", s.ContentMediaType)
	set("contentEncoding", s.ContentEncoding)
	if len(s.Enum) > 0 {
		out["enum"] = slices.Clone(s.Enum)
	}
	if s.Const != nil {
		out["const"] = s.Const
	}
	if s.Default != nil {
		out["default"] = s.Default
	}
	if len(s.Examples) > 0 {
		out["examples"] = slices.Clone(s.Examples)
	} else if s.Example != nil {
		out["examples"] = []any{s.Example}
	}
	flags := map[string]bool{"uniqueItems": s.UniqueItems, "readOnly": s.ReadOnly, "writeOnly": s.WriteOnly, "deprecated": s.Deprecated}
	for k, v := range flags {
		if v {
			out[k] = true
		}
	}
	numbers := map[string]*float64{"minimum": s.Min, "maximum": s.Max}
	for k, v := range numbers {
		if v != nil {
			out[k] = *v
		}
	}
	if s.MultipleOf != nil && *s.MultipleOf > 0 {
		out["multipleOf"] = *s.MultipleOf
	}
	bound(out, "exclusiveMinimum", "minimum", s.ExclusiveMin)
	bound(out, "exclusiveMaximum", "maximum", s.ExclusiveMax)
	counts := map[string]uint64{"minLength": s.MinLength, "minItems": s.MinItems, "minProperties": s.MinProps}
	for k, v := range counts {
		if v > 0 {
			out[k] = v
		}
	}
	limits := map[string]*uint64{"maxLength": s.MaxLength, "maxItems": s.MaxItems, "maxProperties": s.MaxProps, "minContains": s.MinContains, "maxContains": s.MaxContains}
	for k, v := range limits {
		if v != nil {
			out[k] = *v
		}
	}
	if len(s.Required) > 0 {
		out["required"] = anySlice(distinct(s.Required))
	}
	if len(s.DependentRequired) > 0 {
		dr := make(map[string]any, len(s.DependentRequired))
		for k, v := range s.DependentRequired {
			dr[k] = anySlice(distinct(v))
		}
		out["dependentRequired"] = dr
	}
}

// bound writes an exclusive bound as 2020-12 has it, a number: OpenAPI
// 3.0's boolean form turns its inclusive bound into the exclusive one.
func bound(out map[string]any, key, inclusive string, b openapi3.ExclusiveBound) {
	switch {
	case b.Value != nil:
		out[key] = *b.Value
	case b.IsTrue():
		if v, ok := out[inclusive]; ok {
			out[key] = v
			delete(out, inclusive)
		}
	}
}

// nullable makes OpenAPI 3.0's nullable, which 2020-12 does not have, a
// type that admits null. It is honoured in 3.1 descriptions too, which
// still carry it often: it only ever admits more.
func nullable(s *openapi3.Schema, out map[string]any) any {
	if !s.Nullable {
		return out
	}
	if enum, ok := out["enum"].([]any); ok && !slices.Contains(enum, nil) {
		out["enum"] = append(enum, nil)
	}
	switch t := out["type"].(type) {
	case string:
		if t != "null" {
			out["type"] = []any{t, "null"}
		}
		return out
	case []any:
		if !slices.Contains(t, any("null")) {
			out["type"] = append(t, "null")
		}
		return out
	}
	_, all := out["allOf"]
	_, one := out["oneOf"]
	_, some := out["anyOf"]
	if all || one || some {
		// {nullable: true, allOf: [{$ref}]} is how 3.0 says "this or null".
		return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, out}}
	}
	return out
}

// jsonTypes are the schema's types that JSON Schema knows, each once: a
// Swagger "file", or a type written twice, would make the schema invalid
// and its tool unusable.
func jsonTypes(t *openapi3.Types) []string {
	if t == nil {
		return nil
	}
	known := []string{"null", "boolean", "object", "array", "number", "string", "integer"}
	var out []string
	for _, name := range *t {
		if slices.Contains(known, name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// distinct returns s without repeats, in its order, as JSON Schema wants
// its lists of names.
func distinct(s []string) []string {
	out := make([]string, 0, len(s))
	seen := make(map[string]bool, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// isObject says whether a schema describes JSON objects only, as the root
// of an MCP input or output schema must.
func isObject(s *openapi3.Schema) bool { return isObjectWithin(s, maxNesting) }

func isObjectWithin(s *openapi3.Schema, depth int) bool {
	if s == nil || depth == 0 {
		return false
	}
	if s.Type != nil && len(*s.Type) > 0 {
		return len(*s.Type) == 1 && (*s.Type)[0] == "object"
	}
	if len(s.Properties) > 0 {
		return true
	}
	for _, r := range s.AllOf {
		if r != nil && isObjectWithin(r.Value, depth-1) {
			return true
		}
	}
	return false
}
