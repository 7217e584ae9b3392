package mcp

import (
	"encoding/json"
	"testing"
)

// Content blocks encode with their "type" member and wire names whichever
// encoder a caller uses: mcp's own (go-json-experiment) or encoding/json.
func TestContentEncodesTheSameWithEitherEncoder(t *testing.T) {
	size := int64(12)
	prio := 0.5
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"text", &TextContent{Text: "hi"}, `{"type":"text","text":"hi"}`},
		{"empty text kept", &TextContent{}, `{"type":"text","text":""}`},
		{"text with annotations and _meta", &TextContent{Text: "a", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &prio}, Meta: Meta{"k": "v"}},
			`{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5},"_meta":{"k":"v"}}`},
		{"image", &ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}, `{"type":"image","data":"AQID","mimeType":"image/png"}`},
		{"image without data keeps data", &ImageContent{MIMEType: "image/png"}, `{"type":"image","data":"","mimeType":"image/png"}`},
		{"audio", &AudioContent{Data: []byte("x"), MIMEType: "audio/wav"}, `{"type":"audio","data":"eA==","mimeType":"audio/wav"}`},
		{"resource link", &ResourceLink{URI: "file:///a", Name: "a", Title: "A", Description: "d", MIMEType: "text/plain", Size: &size, Icons: []Icon{{Src: "i.png"}}},
			`{"type":"resource_link","mimeType":"text/plain","uri":"file:///a","name":"a","title":"A","description":"d","size":12,"icons":[{"src":"i.png"}]}`},
		{"embedded text resource", &EmbeddedResource{Resource: &ResourceContents{URI: "file:///a", Text: "t"}},
			`{"type":"resource","resource":{"uri":"file:///a","text":"t"}}`},
		{"embedded blob resource", &EmbeddedResource{Resource: &ResourceContents{URI: "file:///b", Blob: []byte{0}}},
			`{"type":"resource","resource":{"uri":"file:///b","blob":"AA=="}}`},
		{"blocks inside a result", &CallToolResult{Content: []Content{&TextContent{Text: "a"}, &ImageContent{Data: []byte{1}, MIMEType: "image/png"}}, IsError: true},
			`{"content":[{"type":"text","text":"a"},{"type":"image","data":"AQ==","mimeType":"image/png"}],"isError":true}`},
		{"a block inside a prompt message", &PromptMessage{Role: RoleUser, Content: &TextContent{Text: "q"}},
			`{"role":"user","content":{"type":"text","text":"q"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("marshal\n got %s\nwant %s", got, tt.want)
			}
			got, err = json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("encoding/json\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// The json.RawMessage fields of the protocol types encode as they did as
// jsontext.Value: an unset field is left out, a set one is written as it
// is, with either encoder.
func TestRawJSONFieldsEncode(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"no arguments: member left out", &CallToolParams{Name: "t"}, `{"name":"t"}`},
		{"arguments written as they are", &CallToolParams{Name: "t", Arguments: json.RawMessage(`{"a":[1,"x"]}`)}, `{"name":"t","arguments":{"a":[1,"x"]}}`},
		{"empty capabilities", &ClientCapabilities{}, `{}`},
		{"capabilities with tasks and an extension", &ClientCapabilities{Tasks: json.RawMessage(`{}`), Extensions: map[string]json.RawMessage{"x": json.RawMessage(`{"v":1}`)}},
			`{"tasks":{},"extensions":{"x":{"v":1}}}`},
		{"cancellation without an id", &CancelledNotificationParams{Reason: "r"}, `{"reason":"r"}`},
		{"cancellation with an id", &CancelledNotificationParams{RequestID: json.RawMessage(`"a"`)}, `{"requestId":"a"}`},
		{"progress token", &ProgressNotificationParams{ProgressToken: ProgressToken(`7`), Progress: 1}, `{"progressToken":7,"progress":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			v1, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want || string(v1) != tt.want {
				t.Errorf("marshal %s, encoding/json %s, want %s", got, v1, tt.want)
			}
		})
	}
}

// Decoded raw members are copies, so they survive the reuse of the line
// buffer they were read from; an absent member is nil and a null one is
// the text null (tools/call reads null arguments as none).
func TestRawJSONFieldsDecode(t *testing.T) {
	tests := []struct {
		name, in string
		want     json.RawMessage
	}{
		{"object arguments", `{"name":"t","arguments":{"a":1}}`, json.RawMessage(`{"a":1}`)},
		{"absent arguments", `{"name":"t"}`, nil},
		{"null arguments", `{"name":"t","arguments":null}`, json.RawMessage(`null`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := []byte(tt.in)
			var p CallToolParams
			if err := unmarshalParams(buf, &p); err != nil {
				t.Fatal(err)
			}
			for i := range buf {
				buf[i] = 'x'
			}
			if (tt.want == nil) != (p.Arguments == nil) || string(p.Arguments) != string(tt.want) {
				t.Errorf("arguments = %q, want %q", p.Arguments, tt.want)
			}
		})
	}
}
