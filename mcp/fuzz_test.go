package mcp

import (
	"context"
	"encoding/json"
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
