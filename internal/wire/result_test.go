package wire

import (
	"bytes"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// textResult is the shape AppendTextResult writes, for the reflective
// encoder to write it too. Package mcp's tests hold its CallToolResult
// to the same bytes.
type textResult struct {
	Content           []textBlock    `json:"content"`
	StructuredContent jsontext.Value `json:"structuredContent,omitzero"`
	IsError           bool           `json:"isError,omitzero"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// reflective is what the real encoder writes for the same result.
func reflective(texts []string, structured []byte, isError bool) ([]byte, error) {
	r := textResult{Content: []textBlock{}, StructuredContent: structured, IsError: isError}
	for _, t := range texts {
		r.Content = append(r.Content, textBlock{"text", t})
	}
	return json.Marshal(&r)
}

func TestAppendTextResultWritesWhatTheRealEncoderWrites(t *testing.T) {
	cases := []struct {
		name       string
		texts      []string
		structured string
		isError    bool
		ok         bool
	}{
		{"text", []string{"hello"}, "", false, true},
		{"escapes", []string{"a \"quote\", a \\ backslash, <html> & \u2028 \n\t\x01 \u00e9 \U0001F600"}, "", false, true},
		{"no blocks", nil, "", false, true},
		{"two blocks, error", []string{"a", "b"}, "", true, true},
		{"structured", []string{`{"n":1}`}, `{"n":1}`, false, true},
		{"invalid UTF-8", []string{"a\xffb"}, "", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var structured []byte
			if c.structured != "" {
				structured = []byte(c.structured)
			}
			got, ok := AppendTextResult([]byte("prefix:"), c.texts, structured, c.isError)
			want, err := reflective(c.texts, structured, c.isError)
			if ok != c.ok || ok != (err == nil) {
				t.Fatalf("ok %v, want %v; the real encoder: %v", ok, c.ok, err)
			}
			if ok && !bytes.Equal(got, append([]byte("prefix:"), want...)) {
				t.Fatalf("got\n%s\nthe real encoder writes\n%s", got, want)
			}
		})
	}
}

// FuzzAppendTextResult holds the fast encoder to the real one.
func FuzzAppendTextResult(f *testing.F) {
	for _, s := range []string{"", "hello", "\"\\<>&\u2028\x00\x1f", "a\xffb", "\U0001F600"} {
		f.Add(s, s, uint8(0), false)
	}
	structured := [][]byte{nil, []byte(`{}`), []byte(`{"a":[1,"x",null]}`)}
	f.Fuzz(func(t *testing.T, a, b string, pick uint8, isError bool) {
		sc := structured[int(pick)%len(structured)]
		got, ok := AppendTextResult(nil, []string{a, b}, sc, isError)
		want, err := reflective([]string{a, b}, sc, isError)
		if ok != (err == nil) {
			t.Fatalf("%q %q: ok %v, the real encoder: %v", a, b, ok, err)
		}
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("got\n%q\nthe real encoder writes\n%q", got, want)
		}
	})
}
