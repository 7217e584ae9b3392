package wire

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// strict is the real decoder's verdict under the rules the scanner
// promises: valid UTF-8, no duplicate names.
func strict(data []byte) bool { return jsontext.Value(data).IsValid() }

func TestValid(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	var many strings.Builder
	many.WriteString("{")
	for i := range maxNames + 1 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(`"k` + strings.Repeat("x", i) + `":1`)
	}
	many.WriteString("}")
	tests := []struct {
		in   string
		want bool // the scanner's answer; where false on valid text, it defers
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{` {"a": [1, -0.5e+3, 2E-2, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, true},
		{`"héllo ✓ 😀"`, true},
		{`{}`, true},
		{`[]`, true},
		{`{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}`, true}, // the same name in different objects
		{`0`, true},
		{`-0`, true},
		{`"\ud83d\ude00"`, true}, // an escaped surrogate pair
		{`"\ud800"`, false},      // an escaped lone surrogate: refused by the strict decoder
		{`"\udc00\ud800"`, false},
		{`"\ud800\u0041"`, false},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1,"b":1}}`, false},
		{`{"\u0061":1}`, false}, // valid, but an escaped name: deferred
		{deep, false},           // valid, but too deep: deferred
		{many.String(), false},  // valid, but too many names: deferred
		{`01`, false},
		{`1.`, false},
		{`.5`, false},
		{`1e`, false},
		{`-`, false},
		{`+1`, false},
		{`tru`, false},
		{`nul`, false},
		{`"abc`, false},
		{"\"a\tb\"", false},
		{"\"\xff\"", false},
		{"\"\xed\xa0\x80\"", false}, // a raw surrogate is invalid UTF-8
		{`"\x"`, false},
		{`"\u12g4"`, false},
		{`{"a" 1}`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`[1 2]`, false},
		{`{,}`, false},
		{`{1:2}`, false},
		{`{"a":1}{}`, false},
		{``, false},
		{`   `, false},
	}
	for _, tt := range tests {
		if got := valid([]byte(tt.in)); got != tt.want {
			t.Errorf("valid(%.60q) = %v, want %v", tt.in, got, tt.want)
		}
		if tt.want && !strict([]byte(tt.in)) {
			t.Errorf("the test is wrong: %.60q is not valid", tt.in)
		}
	}
}

func TestMembers(t *testing.T) {
	data := []byte(` { "name" : "echo", "arguments": {"text": "hi"}, "n": [1, {"x": null}] } `)
	var got []string
	ok := members(data, func(name, value []byte) bool {
		got = append(got, string(name)+"="+string(value))
		return true
	})
	want := []string{`name="echo"`, `arguments={"text": "hi"}`, `n=[1, {"x": null}]`}
	if !ok || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("members = %q, %v; want %q", got, ok, want)
	}
	for _, bad := range []string{`{"a":1,"a":1}`, `{"a":1`, `[1]`, `{"a":}`, `{"\n":1}`, `{"a":1} x`, `{} {}`} {
		if ok := members([]byte(bad), func(_, _ []byte) bool { return true }); ok {
			t.Errorf("members(%q) accepted it", bad)
		}
	}
	stopped := 0
	if ok := members([]byte(`{"a":1,"b":2}`), func(_, _ []byte) bool { stopped++; return false }); ok || stopped != 1 {
		t.Errorf("a callback returning false did not stop the walk (%d calls, ok %v)", stopped, ok)
	}
}

func TestUnquoted(t *testing.T) {
	for in, want := range map[string]string{`"abc"`: "abc", `""`: ""} {
		if got, ok := unquoted([]byte(in)); !ok || string(got) != want {
			t.Errorf("unquoted(%s) = %q, %v", in, got, ok)
		}
	}
	for _, in := range []string{`"a\nb"`, `abc`, `"`, ``} {
		if _, ok := unquoted([]byte(in)); ok {
			t.Errorf("unquoted(%s) accepted it", in)
		}
	}
}

// FuzzValid holds the scanner to its promise: whatever it accepts, the
// real decoder accepts; and it defers valid text only for the reasons it
// names (escaped names, depth, names open at once).
func FuzzValid(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`,
		`{"a":[1,2.5e-3,{"b":null,"c":"\u00e9\n"}],"d":true}`,
		`{"a":1,"a":2}`, `[1,]`, `"\ud800"`, "\"\xff\"", `01`, `{"\u0061":1}`, `-1.5E+10`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, full := valid(data), strict(data)
		if fast && !full {
			t.Fatalf("the scanner accepts %q, which the real decoder rejects", data)
		}
		if full && !fast && !deferrable(data) {
			t.Fatalf("the scanner defers %q with no reason to", data)
		}
	})
}

// deferrable reports whether valid text has something the scanner leaves
// to the real decoder.
func deferrable(data []byte) bool {
	d := jsontext.NewDecoder(strings.NewReader(string(data)))
	names := 0
	var open []int // names per open object; -1 for an array
	for {
		before := d.InputOffset()
		tok, err := d.ReadToken()
		if err != nil {
			return false
		}
		if d.StackDepth() > maxDepth {
			return true
		}
		switch tok.Kind() {
		case '{':
			open = append(open, 0)
		case '[':
			open = append(open, -1)
		case '}', ']':
			if n := open[len(open)-1]; n > 0 {
				names -= n
			}
			open = open[:len(open)-1]
		case '"':
			if k, length := d.StackIndex(d.StackDepth()); k == '{' && length%2 == 1 {
				open[len(open)-1]++
				if names++; names > maxNames {
					return true
				}
				if strings.Contains(string(data[before:d.InputOffset()]), `\`) {
					return true
				}
			}
		}
		if len(open) == 0 {
			return false
		}
	}
}

// TestStringBytesAtEveryOffset puts each kind of byte a string scan must
// notice at every offset of a long string, and holds the scanner to the
// real decoder on each.
func TestStringBytesAtEveryOffset(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", "é", "😀", "\xff", "\xc3", `"`, "\x7f", " "} {
		for at := range 24 {
			for _, n := range []int{at, at + 1, at + 9, 40} {
				if n < at {
					continue
				}
				text := `"` + strings.Repeat("a", at) + special + strings.Repeat("b", n-at) + `"`
				if got, want := valid([]byte(text)), strict([]byte(text)); got != want {
					t.Errorf("valid(%q) = %v, the real decoder says %v", text, got, want)
				}
			}
		}
	}
}
