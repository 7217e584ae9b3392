package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	sj "github.com/santhosh-tekuri/jsonschema/v6"
)

// flatSchemas are schemas the fast path takes, covering each keyword it
// understands.
var flatSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"d"}},"required":["text"]}`,
	`{"type":"object","properties":{"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},"z":{"type":"null"}},"additionalProperties":false}`,
	`{"type":"object","properties":{"s":{"type":["string","null"]},"e":{"enum":["low","high"],"default":"low"},"any":{}},"required":["any","s"]}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"u":{"type":"string","format":"uri"}},"required":["u"],"additionalProperties":true}`,
	`{"type":"object","required":["free"]}`,
}

// compiled is a schema in both forms: its flat form and the real
// validator, compiled as package mcp compiles a tool's schema.
type compiled struct {
	flat *FlatSchema
	full *sj.Schema
}

func compile(t testing.TB, src string) compiled {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	c := sj.NewCompiler()
	c.DefaultDraft(sj.Draft2020)
	doc, err := sj.UnmarshalJSON(bytes.NewReader([]byte(src)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("urn:test", doc); err != nil {
		t.Fatal(err)
	}
	full, err := c.Compile("urn:test")
	if err != nil {
		t.Fatal(err)
	}
	return compiled{NewFlatSchema(m), full}
}

// realValid is the real validator's verdict on args, as package mcp asks
// it: text that is not JSON, or repeats a member name, is invalid.
func (c compiled) realValid(args []byte) bool {
	if !jsontext.Value(args).IsValid(jsontext.AllowInvalidUTF8(true)) {
		return false
	}
	inst, err := sj.UnmarshalJSON(bytes.NewReader(args))
	return err == nil && c.full.Validate(inst) == nil
}

func TestFlatSchemaTakesTheFlatShapeOnly(t *testing.T) {
	for _, src := range flatSchemas {
		if compile(t, src).flat == nil {
			t.Errorf("not flat: %s", src)
		}
	}
	for _, src := range []string{
		`{"type":"object","properties":{"t":{"type":"string","minLength":1}}}`,
		`{"type":"object","properties":{"t":{"type":"array"}}}`,
		`{"type":"object","properties":{"t":{"enum":[1,2]}}}`,
		`{"type":"object","properties":{"t":{"type":"string"}},"additionalProperties":{"type":"string"}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"type":"string"}}}`,
		`{"type":"object","properties":{"t":true}}`,
		`{"type":"object","properties":{"t":{"type":"string"}},"required":["u"],"additionalProperties":false}`,
		`{"properties":{"t":{"type":"string"}}}`,
	} {
		if compile(t, src).flat != nil {
			t.Errorf("flat, but uses more: %s", src)
		}
	}
}

// The fast path agrees with the real validator on every verdict it gives.
func TestFlatSchemaAgreesWithTheRealValidator(t *testing.T) {
	cases := []struct {
		schema int
		args   string
		valid  bool
	}{
		{0, `{"text":"hi"}`, true},
		{0, `{"text":"h\u00e9"}`, true},
		{0, `{}`, false},
		{0, `{"text":1}`, false},
		{0, `{"text":"a","more":[1,{"x":2}]}`, true},
		{0, `{"text":"a","text":"b"}`, false},
		{0, `[]`, false},
		{0, `{"text":"a"} {}`, false},
		{1, `{"n":3,"x":1.5,"b":true,"z":null}`, true},
		{1, `{"n":3.0}`, true}, // an integer in 2020-12
		{1, `{"n":1e2}`, true},
		{1, `{"n":3.5}`, false},
		{1, `{"n":-0}`, true},
		{1, `{"extra":1}`, false},
		{1, `{"b":"true"}`, false},
		{1, `{"n":null}`, false},
		{2, `{"any":[1],"s":null,"e":"high"}`, true},
		{2, `{"any":{},"s":"x","e":"medium"}`, false},
		{2, `{"any":{},"s":"x","e":"hig\u0068"}`, true},
		{2, `{"s":"x"}`, false},
		{3, `{"u":"not a uri"}`, true}, // format is an annotation
		{4, `{"free":{"deep":[]}}`, true},
		{4, `{"fre\u0065":1}`, true},
		{4, `{}`, false},
	}
	for _, c := range cases {
		s := compile(t, flatSchemas[c.schema])
		real := s.realValid([]byte(c.args))
		if real != c.valid {
			t.Errorf("schema %d, %s: the real validator says %v, want %v", c.schema, c.args, real, c.valid)
		}
		if s.flat.Valid([]byte(c.args)) && !real {
			t.Errorf("schema %d, %s: the fast path accepts what the real validator refuses", c.schema, c.args)
		}
	}
}

// FuzzFlatSchema holds the fast path to the real validator: whatever it
// accepts, the real validator accepts.
func FuzzFlatSchema(f *testing.F) {
	for i, args := range []string{`{"text":"hi"}`, `{"n":3,"x":1.5,"b":true,"z":null}`, `{"any":[1],"s":null,"e":"high"}`, `{"u":"x"}`, `{"free":1}`, `{"n":1E+2}`} {
		f.Add(uint8(i), []byte(args))
	}
	schemas := make([]compiled, len(flatSchemas))
	for i, src := range flatSchemas {
		schemas[i] = compile(f, src)
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		s := schemas[int(which)%len(schemas)]
		if s.flat.Valid(args) && !s.realValid(args) {
			t.Fatalf("the fast path accepts %q, which the real validator refuses", args)
		}
	})
}
