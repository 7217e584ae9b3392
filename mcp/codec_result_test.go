package mcp

import (
	"bytes"
	"testing"
)

// The fast encoding of a tool result writes exactly what marshal writes,
// and leaves alone what it does not know.
func TestToolResultFastEncoding(t *testing.T) {
	cases := []struct {
		name string
		r    *CallToolResult
		fast bool
	}{
		{"text", TextResult("hello"), true},
		{"escapes", TextResult("a \"quote\", a \\ backslash, <html> & \u2028 \n\t\x01 \u00e9 \U0001F600"), true},
		{"empty", &CallToolResult{}, true},
		{"empty content", &CallToolResult{Content: []Content{}}, true},
		{"two blocks, error", &CallToolResult{Content: []Content{&TextContent{Text: "a"}, &TextContent{Text: "b"}}, IsError: true}, true},
		{"structured", &CallToolResult{Content: []Content{&TextContent{Text: `{"n":1}`}}, StructuredContent: map[string]any{"s": []any{"x", 1.5, nil}}}, true},
		{"structured struct", &CallToolResult{StructuredContent: struct {
			N int    `json:"n"`
			S string `json:"s,omitempty"`
		}{N: 2}}, true},
		{"annotations", &CallToolResult{Content: []Content{&TextContent{Text: "a", Annotations: &Annotations{Audience: []Role{RoleUser}}}}}, false},
		{"block meta", &CallToolResult{Content: []Content{&TextContent{Text: "a", Meta: Meta{"k": "v"}}}}, false},
		{"result meta", &CallToolResult{Content: []Content{&TextContent{Text: "a"}}, Meta: Meta{"k": "v"}}, false},
		{"image", &CallToolResult{Content: []Content{&ImageContent{Data: []byte{1}, MIMEType: "image/png"}}}, false},
		{"invalid UTF-8", TextResult("a\xffb"), false},
		{"every kind of block", &CallToolResult{Content: []Content{
			&TextContent{Text: "t"},
			&ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"},
			&AudioContent{MIMEType: "audio/wav"},
			&ResourceLink{URI: "file:///a", Name: "a"},
			&EmbeddedResource{Resource: &ResourceContents{URI: "file:///b", Blob: []byte{0}}},
		}, StructuredContent: map[string]any{"n": 1}, IsError: true, Meta: Meta{"k": "v"}}, false},
		{"nil blocks", &CallToolResult{Content: []Content{nil, (*ImageContent)(nil)}}, false},
		{"invalid UTF-8 beside an image", &CallToolResult{Content: []Content{&ImageContent{}, &TextContent{Text: "a\xffb"}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, werr := marshal(c.r)
			got, ok := appendToolResult(nil, c.r)
			if ok != c.fast {
				t.Fatalf("fast path taken: %v, want %v", ok, c.fast)
			}
			if ok && (werr != nil || !bytes.Equal(got, want)) {
				t.Fatalf("fast encoding\n%s\nmarshal (err %v)\n%s", got, werr, want)
			}
			enc, err := encodeResult(c.r)
			if (err != nil) != (werr != nil) || (err == nil && !bytes.Equal(enc, want)) {
				t.Fatalf("encodeResult %s (%v), marshal %s (%v)", enc, err, want, werr)
			}
		})
	}
}
