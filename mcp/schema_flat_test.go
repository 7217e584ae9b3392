package mcp

import (
	"testing"
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

func TestFlatSchemaTaken(t *testing.T) {
	for _, src := range flatSchemas {
		s, err := compileSchema(src, true)
		if err != nil {
			t.Fatal(err)
		}
		if s.flat == nil {
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
	} {
		s, err := compileSchema(src, true)
		if err != nil {
			t.Fatal(err)
		}
		if s.flat != nil {
			t.Errorf("flat, but uses more: %s", src)
		}
	}
}

// The fast path agrees with the full validator on every verdict it gives.
func TestFlatSchemaAgrees(t *testing.T) {
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
		s, err := compileSchema(flatSchemas[c.schema], true)
		if err != nil {
			t.Fatal(err)
		}
		full := s.fullCheck([]byte(c.args)) == ""
		if full != c.valid {
			t.Errorf("schema %d, %s: full validator says %v, want %v", c.schema, c.args, full, c.valid)
		}
		if s.flat.valid([]byte(c.args)) && !full {
			t.Errorf("schema %d, %s: the fast path accepts what the full validator refuses", c.schema, c.args)
		}
	}
}

// fullCheck validates without the fast path.
func (s *schema) fullCheck(raw []byte) string {
	v, err := decodeInstance(raw)
	if err != nil {
		return "invalid JSON"
	}
	return s.check(v)
}

func FuzzFlatSchema(f *testing.F) {
	for i, args := range []string{`{"text":"hi"}`, `{"n":3,"x":1.5,"b":true,"z":null}`, `{"any":[1],"s":null,"e":"high"}`, `{"u":"x"}`, `{"free":1}`, `{"n":1E+2}`} {
		f.Add(uint8(i), []byte(args))
	}
	compiled := make([]*schema, len(flatSchemas))
	for i, src := range flatSchemas {
		s, err := compileSchema(src, true)
		if err != nil {
			f.Fatal(err)
		}
		compiled[i] = s
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		s := compiled[int(which)%len(compiled)]
		if s.flat.valid(args) && s.fullCheck(args) != "" {
			t.Fatalf("the fast path accepts %q, which the full validator refuses: %s", args, s.fullCheck(args))
		}
	})
}

func BenchmarkValidateFlat(b *testing.B) {
	s, err := compileSchema(`{"type":"object","properties":{"title":{"type":"string"},"priority":{"enum":["low","high"]},"limit":{"type":"integer"}},"required":["title"],"additionalProperties":false}`, true)
	if err != nil || s.flat == nil {
		b.Fatal(err, s.flat)
	}
	args := []byte(`{"title":"a task","priority":"high","limit":5}`)
	b.ReportAllocs()
	for b.Loop() {
		if p := s.validate(args); p != "" {
			b.Fatal(p)
		}
	}
}
