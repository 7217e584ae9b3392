package mcp

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

type flatMode string

type flatAll struct {
	S    string   `json:"s"`
	Mode flatMode `json:"mode,omitempty"`
	B    bool     `json:"b,omitzero"`
	I    int      `json:"i"`
	I8   int8     `json:"i8"`
	I16  int16
	I32  int32   `json:"i32"`
	I64  int64   `json:"i64"`
	U    uint    `json:"u"`
	U8   uint8   `json:"u8"`
	U16  uint16  `json:"u16"`
	U32  uint32  `json:"u32"`
	U64  uint64  `json:"u64"`
	F32  float32 `json:"f32"`
	F64  float64 `json:"f64"`
	Skip string  `json:"-"`
	low  string
}

func TestNewFlatArgs(t *testing.T) {
	type nested struct {
		A struct{ B string } `json:"a"`
	}
	type quoted struct {
		A string `json:"'a'"`
	}
	type stringOpt struct {
		N int `json:"n,string"`
	}
	type dur struct {
		D time.Duration `json:"d"`
	}
	type embedded struct{ flatAll }
	type dup struct {
		A string `json:"B"`
		B string
	}
	type custom struct {
		T textish `json:"t"`
	}
	if newFlatArgs(reflect.TypeFor[flatAll]()) == nil {
		t.Error("flatAll is flat")
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[nested](), reflect.TypeFor[quoted](), reflect.TypeFor[stringOpt](),
		reflect.TypeFor[dur](), reflect.TypeFor[embedded](), reflect.TypeFor[dup](),
		reflect.TypeFor[custom](), reflect.TypeFor[map[string]any](), reflect.TypeFor[*flatAll](),
	} {
		if newFlatArgs(typ) != nil {
			t.Errorf("%v is taken as flat", typ)
		}
	}
}

type textish string

func (t *textish) UnmarshalText(b []byte) error { *t = textish("text:" + string(b)); return nil }

func TestFlatArgsDecode(t *testing.T) {
	fa := newFlatArgs(reflect.TypeFor[flatAll]())
	var got flatAll
	raw := `{"s":"héllo","mode":"fast","b":true,"i":-42,"i8":-128,"I16":300,"i32":7,"i64":-9223372036854775808,` +
		`"u":null,"u8":255,"u16":65535,"u32":4294967295,"u64":9223372036854775807,"f32":1.5,"f64":-2.5e-3,"other":[1,{"x":2}]}`
	if !fa.decode([]byte(raw), unsafe.Pointer(&got)) {
		t.Fatal("declined")
	}
	var want flatAll
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for _, bad := range []string{
		`{"s":"a\nb"}`, `{"i8":128}`, `{"i8":-129}`, `{"u":-1}`, `{"u":-0}`, `{"i":1.0}`, `{"i":1e2}`,
		`{"u64":18446744073709551615}`, `{"f32":1e40}`, `{"f64":1e400}`, `{"b":"true"}`, `{"s":1}`,
		`{"i":"1"}`, `{"s":"a","s":"b"}`, `{"s":{}}`, `[]`, `{"s":"a"} x`,
	} {
		var v flatAll
		if fa.decode([]byte(bad), unsafe.Pointer(&v)) {
			t.Errorf("decode(%s) accepted it: %+v", bad, v)
		}
	}
}

// A typed tool gets the same input on the fast path and the long one.
func TestTypedToolFlatInput(t *testing.T) {
	s := NewServer(nil, nil)
	AddTool(s, &Tool{Name: "all"}, func(_ context.Context, _ *CallToolRequest, in flatAll) (*CallToolResult, any, error) {
		b, _ := json.Marshal(in)
		return TextResult(string(b)), nil, nil
	})
	p := startPeer(t, s, nil)
	p.initialize("2025-11-25", "{}")
	const rest = `"i":3,"i8":-1,"I16":2,"i32":3,"i64":4,"u":5,"u8":6,"u16":7,"u32":8,"u64":9,"f32":0.5,"f64":0.25}`
	for _, args := range []string{`{"s":"plain",` + rest, `{"s":"esc\u00e9aped",` + rest} {
		m := p.call("tools/call", `{"name":"all","arguments":`+args+`}`)
		var want flatAll
		json.Unmarshal([]byte(args), &want)
		wb, _ := json.Marshal(want)
		q, _ := jsontext.AppendQuote(nil, string(wb))
		if !strings.Contains(m.Raw, string(q)) {
			t.Errorf("%s: got %s, want text %s", args, m.Raw, wb)
		}
	}
}

// FuzzFlatArgs holds the one-pass argument decoder to json.Unmarshal:
// whatever it accepts decodes to the same value there.
func FuzzFlatArgs(f *testing.F) {
	for _, s := range []string{
		`{"s":"x","i":1,"u8":2,"f32":1.5,"b":false,"mode":"m"}`,
		`{"i64":-9223372036854775808,"u64":9223372036854775807}`,
		`{"i8":-128,"I16":-32768,"i32":2147483647,"f64":1e308}`,
		`{"s":null,"x":{"y":[1,2]}}`,
	} {
		f.Add([]byte(s))
	}
	fa := newFlatArgs(reflect.TypeFor[flatAll]())
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast flatAll
		if !fa.decode(raw, unsafe.Pointer(&fast)) {
			return
		}
		var full flatAll
		if err := json.Unmarshal(raw, &full, jsontext.AllowInvalidUTF8(true)); err != nil {
			t.Fatalf("the fast path accepts %q, which json.Unmarshal rejects: %v", raw, err)
		}
		if fast != full {
			t.Fatalf("%q: fast %+v, full %+v", raw, fast, full)
		}
	})
}
