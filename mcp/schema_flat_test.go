package mcp

import (
	"reflect"
	"testing"
)

// A schema inferred from a flat input struct takes the flat fast path
// (wire.FlatSchema says what that saves): well-formed arguments are
// checked in one pass, and the full validator is never compiled.
func TestInferredFlatSchemasTakeTheFastPath(t *testing.T) {
	for _, c := range []struct {
		typ  reflect.Type
		args string
	}{
		{reflect.TypeFor[echoIn](), `{"text":"hello"}`},
		{reflect.TypeFor[docsIn](), docsArgs},
	} {
		raw, err := inferSchema(c.typ)
		if err != nil {
			t.Fatal(err)
		}
		s, err := inferredSchema(raw)
		if err != nil {
			t.Fatal(err)
		}
		if s.flat == nil {
			t.Errorf("%v: the inferred schema %s does not take the fast path", c.typ, raw)
			continue
		}
		if p := s.validate([]byte(c.args)); p != "" {
			t.Errorf("%v: %s: %s", c.typ, c.args, p)
		}
		if s.ready.Load() {
			t.Errorf("%v: valid arguments compiled the full validator", c.typ)
		}
	}
}
