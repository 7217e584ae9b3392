package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/invopop/jsonschema"
	"github.com/mcpgate/mcpgate/internal/wire"
	sj "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schema is a compiled JSON Schema with its JSON form.
type schema struct {
	raw jsontext.Value
	// compiled is the full validator. A schema inferred from Go types is
	// valid by construction, and its validator is compiled the first time
	// the flat fast path cannot decide (often never), so that a server of
	// many typed tools does not compile a validator per tool at start.
	compile    sync.Once
	compiled   *sj.Schema
	compileErr error
	ready      atomic.Bool // validator's compile has run (tests wait for a background one)
	// trivial schemas accept every object ({"type":"object"} and the
	// like), so validating against them is skipped.
	trivial  bool
	flat     *wire.FlatSchema          // a fast path for the common shape, or nil
	defaults map[string]jsontext.Value // top-level property defaults
}

// SupportedSchemaDialects are the JSON Schema dialects a tool's schema
// may name in $schema. A schema without $schema is 2020-12.
var SupportedSchemaDialects = []string{
	"https://json-schema.org/draft/2020-12/schema",
	"https://json-schema.org/draft/2019-09/schema",
	"http://json-schema.org/draft-07/schema#",
	"http://json-schema.org/draft-06/schema#",
	"http://json-schema.org/draft-04/schema#",
}

// noLoader refuses every external $ref: schemas from tools must never make
// the server fetch a URL or read a file.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not resolved: schemas must be self-contained", url)
}

// compileSchema encodes v, checks that it is a valid schema of its
// dialect and, if object is set, that its root type is "object".
func compileSchema(v any, object bool) (*schema, error) {
	s, doc, err := parseSchema(v, object)
	if err != nil {
		return nil, err
	}
	s.compile.Do(func() { s.compileDoc(doc) })
	if s.compileErr != nil {
		return nil, s.compileErr
	}
	return s, nil
}

// inferredSchema is compileSchema for a schema inferred from Go types,
// whose validator is compiled when first needed.
func inferredSchema(v jsontext.Value) (*schema, error) {
	s, _, err := parseSchema(v, true)
	if err == nil && s.flat == nil && !s.trivial {
		// Every call will need the full validator: compile it now, off
		// the caller's path, so the first call does not wait for it.
		go s.validator()
	}
	return s, err
}

// parseSchema is compileSchema without compiling the validator; it also
// returns the schema decoded.
func parseSchema(v any, object bool) (s *schema, doc any, err error) {
	raw, err := schemaJSON(v)
	if err != nil {
		return nil, nil, err
	}
	doc, err = decodeInstance(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("not valid JSON: %w", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, errors.New("a schema must be a JSON object")
	}
	if object && m["type"] != "object" {
		return nil, nil, fmt.Errorf(`the root must have "type": "object", not %v`, m["type"])
	}
	if d, ok := m["$schema"]; ok {
		ds, _ := d.(string)
		if !slices.Contains(SupportedSchemaDialects, ds) && !slices.Contains(SupportedSchemaDialects, ds+"#") {
			return nil, nil, fmt.Errorf("the JSON Schema dialect %q is not supported; use 2020-12 (omit $schema) or one of %s", ds, strings.Join(SupportedSchemaDialects, ", "))
		}
	}
	s = &schema{raw: raw, trivial: isTrivialObjectSchema(m)}
	if object {
		s.flat = wire.NewFlatSchema(m)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for name, p := range props {
			if pm, ok := p.(map[string]any); ok {
				if d, ok := pm["default"]; ok {
					if b, err := json.Marshal(d); err == nil {
						if s.defaults == nil {
							s.defaults = map[string]jsontext.Value{}
						}
						s.defaults[name] = b
					}
				}
			}
		}
	}
	return s, doc, nil
}

// validator returns the full validator, compiling it the first time.
func (s *schema) validator() (*sj.Schema, error) {
	s.compile.Do(func() {
		defer s.ready.Store(true)
		doc, err := decodeInstance(s.raw)
		if err != nil {
			s.compileErr = fmt.Errorf("not valid JSON: %w", err)
			return
		}
		s.compileDoc(doc)
	})
	return s.compiled, s.compileErr
}

// compileDoc compiles the validator of s from its decoded form; it runs
// under s.compile.
func (s *schema) compileDoc(doc any) {
	c := sj.NewCompiler()
	c.DefaultDraft(sj.Draft2020)
	c.UseLoader(noLoader{})
	const loc = "urn:mcpgate:schema"
	if err := c.AddResource(loc, doc); err != nil {
		s.compileErr = err
	} else if s.compiled, err = c.Compile(loc); err != nil {
		s.compileErr = fmt.Errorf("invalid schema: %w", err)
	}
}

func schemaJSON(v any) (jsontext.Value, error) {
	var raw []byte
	switch v := v.(type) {
	case jsontext.Value:
		raw = v
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		// Sorted keys: a tool's definition must encode the same way every
		// time, or clients' prompt caches are invalidated for nothing.
		b, err := jsonv2.Marshal(v, jsonv2.Deterministic(true))
		if err != nil {
			return nil, fmt.Errorf("cannot be encoded: %w", err)
		}
		raw = b
	}
	val := jsontext.Value(bytes.Clone(raw))
	if err := val.Compact(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	return val, nil
}

// isTrivialObjectSchema reports whether a schema accepts any object.
func isTrivialObjectSchema(m map[string]any) bool {
	for k, v := range m {
		switch k {
		case "type", "$schema", "title", "description", "$comment", "examples", "default":
		case "properties":
			if p, ok := v.(map[string]any); !ok || len(p) > 0 {
				return false
			}
		case "additionalProperties":
			if v != true {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// validate checks raw arguments (absent means {}) and returns the problems
// as one sentence per fault, or "" if there are none.
func (s *schema) validate(raw []byte) string {
	if s.trivial {
		return ""
	}
	if len(raw) == 0 {
		raw = jsontext.Value("{}")
	}
	if s.flat != nil && s.flat.Valid(raw) {
		return ""
	}
	v, err := decodeInstance(raw)
	if err != nil {
		return "the arguments are not valid JSON"
	}
	return s.check(v)
}

// validateValue checks a Go value, such as a handler's structured output.
func (s *schema) validateValue(v any) string {
	b, err := jsonv2.Marshal(v)
	if err != nil {
		return "the value cannot be encoded as JSON"
	}
	inst, err := decodeInstance(b)
	if err != nil {
		return "the value is not valid JSON"
	}
	return s.check(inst)
}

var printer = message.NewPrinter(language.English)

func (s *schema) check(v any) string {
	compiled, err := s.validator()
	if err != nil {
		// Only an inferred schema is compiled this late, and those are
		// valid by construction: this is a bug, said as plainly.
		return "the tool's schema cannot be compiled: " + err.Error()
	}
	err = compiled.Validate(v)
	if err == nil {
		return ""
	}
	var ve *sj.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	var problems []string
	var walk func(e *sj.ValidationError)
	walk = func(e *sj.ValidationError) {
		if len(e.Causes) == 0 {
			where := "/" + strings.Join(e.InstanceLocation, "/")
			msg := e.ErrorKind.LocalizedString(printer)
			if where == "/" {
				problems = append(problems, msg)
			} else {
				problems = append(problems, where+": "+msg)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	if len(problems) > 10 {
		problems = append(problems[:10], fmt.Sprintf("and %d more", len(problems)-10))
	}
	return strings.Join(problems, "; ")
}

// withDefaults returns raw arguments with the schema's top-level defaults
// filled in for members that are absent.
func (s *schema) withDefaults(raw []byte) []byte {
	if len(s.defaults) == 0 {
		return raw
	}
	var m map[string]jsontext.Value
	if len(raw) > 0 {
		if err := jsonv2.Unmarshal(raw, &m, jsontext.AllowInvalidUTF8(true)); err != nil {
			return raw
		}
	}
	added := false
	for k, d := range s.defaults {
		if _, ok := m[k]; !ok {
			if m == nil {
				m = map[string]jsontext.Value{}
			}
			m[k] = d
			added = true
		}
	}
	if !added {
		return raw
	}
	b, err := jsonv2.Marshal(m, jsonv2.Deterministic(true))
	if err != nil {
		return raw
	}
	return b
}

// decodeInstance decodes JSON into the form the validator wants: maps,
// slices, strings, bools, nil and json.Number (exact, even for integers
// beyond 2^53).
func decodeInstance(raw []byte) (any, error) {
	d := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowInvalidUTF8(true))
	v, err := decodeValue(d)
	if err != nil {
		return nil, err
	}
	if _, err := d.ReadToken(); err == nil {
		return nil, errors.New("unexpected data after the value")
	}
	return v, nil
}

func decodeValue(d *jsontext.Decoder) (any, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case '[':
		arr := []any{}
		for d.PeekKind() != ']' {
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := d.ReadToken()
		return arr, err
	case '{':
		obj := map[string]any{}
		for d.PeekKind() != '}' {
			k, err := d.ReadToken()
			if err != nil {
				return nil, err
			}
			key := k.String() // the token is only valid until the next read
			v, err := decodeValue(d)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		_, err := d.ReadToken()
		return obj, err
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// inferSchema derives a JSON Schema (2020-12) from a Go type: json tags
// name the properties, fields without omitempty or omitzero are required,
// and jsonschema tags add descriptions, enums, defaults and bounds:
//
//	Priority string `json:"priority,omitempty" jsonschema:"description=How urgent,enum=low,enum=high,default=low"`
//
// No $schema member is written: 2020-12 is the default dialect, and
// older clients reject a $schema they do not know.
func inferSchema(t reflect.Type) (jsontext.Value, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface {
		return jsontext.Value(`{"type":"object"}`), nil
	}
	// Nested types are written inline, which every client handles; only a
	// recursive type needs $defs and $ref. Then the root definition is
	// hoisted, so the root still says "type": "object".
	rec := recursive(t, map[reflect.Type]bool{})
	r := &jsonschema.Reflector{Anonymous: true, ExpandedStruct: !rec, DoNotReference: !rec}
	sch := r.ReflectFromType(t)
	if rec {
		name := strings.TrimPrefix(sch.Ref, "#/$defs/")
		root, ok := sch.Definitions[name]
		if !ok {
			return nil, fmt.Errorf("no definition for %s", sch.Ref)
		}
		hoisted := *root
		hoisted.Definitions = sch.Definitions
		sch = &hoisted
	}
	sch.Version, sch.ID = "", ""
	// The reflector's own encoding keeps properties in field order.
	b, err := json.Marshal(sch)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// schemaType returns the root "type" of a schema in JSON form.
func schemaType(raw jsontext.Value) string {
	t := findMember(raw, "type")
	if len(t) == 0 || t[0] != '"' {
		return ""
	}
	var s string
	jsonv2.Unmarshal(t, &s)
	return s
}

// recursive reports whether t refers to itself, which inline schemas
// cannot express.
func recursive(t reflect.Type, seen map[reflect.Type]bool) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	if seen[t] {
		return true
	}
	seen[t] = true
	defer delete(seen, t)
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && recursive(f.Type, seen) {
			return true
		}
	}
	return false
}

// InputValidator checks tool arguments against an input schema, as the
// engine checks the arguments of registered tools: for proxies that call
// a tool on another's behalf and must refuse what its schema refuses.
type InputValidator struct{ s *schema }

// NewInputValidator compiles a tool's input schema (any JSON object
// schema, with $refs only inside it).
func NewInputValidator(inputSchema any) (*InputValidator, error) {
	s, err := compileSchema(inputSchema, true)
	if err != nil {
		return nil, err
	}
	return &InputValidator{s}, nil
}

// Validate returns "" for arguments the schema accepts, or the problems,
// in words a model can act on. Absent arguments are {}.
func (v *InputValidator) Validate(args json.RawMessage) string {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return v.s.validate(args)
}
