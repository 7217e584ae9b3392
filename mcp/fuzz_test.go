package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzSessionHandle feeds arbitrary message bodies to sessions at each
// revision, after initialization, and checks that every reply is valid
// JSON, that a parse error's id is null, and that nothing panics or
// hangs.
func FuzzSessionHandle(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"title":"x","limit":5}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"cursor":"bWNwZ2F0ZTE6YQ"}}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"blob://1"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"review","arguments":{"code":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"logging/setLevel","params":{"level":"info"}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`,
		`{"jsonrpc":"2.0","id":6,"result":{}}`,
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		`{"jsonrpc":"2.0","id":8,"method":"ping"`,
		`[{},{"id":9}]`,
	} {
		f.Add([]byte(s), uint8(0))
		f.Add([]byte(s), uint8(1))
	}
	servers := []*Server{typedServer(), resourceServer(), promptServer()}
	for _, s := range servers {
		s.opts.Logging = true
	}
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		s := servers[int(pick)%len(servers)]
		version := NegotiatedVersions[int(pick/3)%len(NegotiatedVersions)]
		var replies [][]byte
		w := MessageWriterFunc(func(msg []byte) error {
			replies = append(replies, append([]byte(nil), msg...))
			return nil
		})
		ss := s.NewSession(w, nil)
		defer ss.Close()
		ctx := context.Background()
		ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`), w)
		ss.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), w)
		ss.Handle(ctx, data, w)
		for _, r := range replies {
			if !json.Valid(r) {
				t.Fatalf("invalid reply %q to %q", r, data)
			}
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error *struct{ Code int64 }
			}
			if json.Unmarshal(r, &m) == nil && m.Error != nil && m.Error.Code == -32700 && string(m.ID) != "null" {
				t.Fatalf("parse error %s to %q has an id", r, data)
			}
		}
	})
}

// FuzzCallToolParamsFast holds the one-pass tools/call params decoder to
// unmarshalParams: whatever it accepts decodes the same way there.
func FuzzCallToolParamsFast(f *testing.F) {
	for _, s := range []string{
		`{"name":"echo","arguments":{"text":"hi"}}`,
		`{"arguments":null,"name":"other","x":[1,2]}`,
		`{"name":"e\u0063ho"}`,
		`{"name":"echo","name":"echo"}`,
		`{"name":"echo","_meta":{"progressToken":1}}`,
		`{"_meta":{"a":[1,{"b":null}],"c":"\u00e9"},"name":"echo","arguments":{}}`,
		`{"name":"echo","_meta":null}`,
		`{"name":"echo","_meta":[]}`,
		`{"name":5}`,
	} {
		f.Add([]byte(s))
	}
	s := NewServer(&Implementation{Name: "fuzz", Version: "1"}, nil)
	AddTool(s, &Tool{Name: "echo"}, func(context.Context, *CallToolRequest, struct{}) (*CallToolResult, any, error) { return nil, nil, nil })
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast, full CallToolParams
		if !s.decodeCallFast(raw, &fast) {
			return
		}
		if err := unmarshalParams(raw, &full); err != nil {
			t.Fatalf("the fast path accepts %q, which unmarshalParams rejects: %v", raw, err)
		}
		if fast.Name != full.Name || !bytes.Equal(fast.Arguments, full.Arguments) || (fast.Arguments == nil) != (full.Arguments == nil) ||
			!reflect.DeepEqual(fast.Meta, full.Meta) {
			t.Fatalf("%q: fast %+v, full %+v", raw, fast, full)
		}
	})
}

// FuzzFindMember holds findMember's one-pass path to the lenient decoder
// it falls back on.
func FuzzFindMember(f *testing.F) {
	for _, s := range []string{
		`{"_meta":{"progressToken":1},"name":"x"}`,
		`{"a":1,"_meta":null}`,
		`{"\u005fmeta":{"x":1},"_meta":2}`,
		`{"_meta":1,"_meta":2}`,
		`{"a":[1,{"_meta":3}]}`,
		"{\"a\":\"\xff\",\"_meta\":{}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		got, want := findMember(obj, "_meta"), findMemberLenient(obj, "_meta")
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: findMember %q, the lenient decoder %q", obj, got, want)
		}
	})
}

// FuzzCallToolResultFast holds CallToolResult's one-pass decoder to the
// full one it falls back on.
func FuzzCallToolResultFast(f *testing.F) {
	for _, s := range []string{
		`{"content":[{"type":"text","text":"hi"},{"text":"b","type":"text"}],"isError":true}`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"x","version":"1"}},"resultType":"complete"}`,
		`{"isError":false}`,
		`{"content":[{"type":"text"}]}`,
		`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`,
		`{"content":null}`,
		`{"content":[{"type":"text","text":"a\nb"}],"structuredContent":{"a":1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast CallToolResult
		if !fast.decodeFast(b) {
			return
		}
		var full CallToolResult
		if err := full.decodeFull(b); err != nil {
			t.Fatalf("the fast path accepts %q, which the full decoder rejects: %v", b, err)
		}
		if !reflect.DeepEqual(fast, full) {
			t.Fatalf("%q: fast %#v, full %#v", b, fast, full)
		}
	})
}

// FuzzCompleteResult holds the one-pass check of a 2026-07-28 result's head
// to what decoding the head concludes.
func FuzzCompleteResult(f *testing.F) {
	for _, s := range []string{
		`{"content":[],"resultType":"complete"}`, `{"resultType":"input_required","inputRequests":{}}`,
		`{"resultType":null}`, `{"requestState":"x"}`, `{}`, `{"resultType":"task","task":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !completeResult(raw) {
			return
		}
		var head struct {
			ResultType    string                   `json:"resultType"`
			InputRequests map[string]*InputRequest `json:"inputRequests"`
			RequestState  *string                  `json:"requestState"`
		}
		if err := unmarshalValue(raw, &head); err != nil {
			t.Fatalf("completeResult accepts %q, whose head does not decode: %v", raw, err)
		}
		if head.ResultType != "" && head.ResultType != "complete" || head.InputRequests != nil || head.RequestState != nil {
			t.Fatalf("completeResult accepts %q: %+v", raw, head)
		}
	})
}
