package mcp

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

func TestExtensionMethods(t *testing.T) {
	s := NewServer(nil, &ServerOptions{Experimental: map[string]any{"io.example/echo": map[string]any{"version": 1}}})
	type echo struct {
		Text string `json:"text"`
	}
	if err := s.HandleMethod("example/echo", func(ctx context.Context, req *Request) (any, error) {
		var p echo
		if err := req.DecodeParams(&p); err != nil {
			return nil, err
		}
		if p.Text == "" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "text is required")
		}
		return echo{Text: p.Text + "!"}, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"tools/list", "notifications/custom", "resources/subscribe", ""} {
		if err := s.HandleMethod(bad, func(context.Context, *Request) (any, error) { return nil, nil }); err == nil {
			t.Errorf("HandleMethod(%q) took a method it must refuse", bad)
		}
	}
	for _, version := range []string{"2025-06-18", Version20260728} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, s, &ClientOptions{ProtocolVersion: version})
			if cs.ProtocolVersion() != version {
				t.Fatalf("negotiated %s", cs.ProtocolVersion())
			}
			if _, ok := cs.InitializeResult().Capabilities.Experimental["io.example/echo"]; !ok {
				t.Errorf("capabilities.experimental = %v, want io.example/echo", cs.InitializeResult().Capabilities.Experimental)
			}
			var out echo
			if err := cs.Call(context.Background(), "example/echo", echo{Text: "hi"}, &out); err != nil || out.Text != "hi!" {
				t.Fatalf("Call = %+v, %v", out, err)
			}
			var rpcErr *jsonrpc.Error
			if err := cs.Call(context.Background(), "example/echo", echo{}, &out); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("empty text: %v, want -32602", err)
			}
			if err := cs.Call(context.Background(), "example/missing", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
				t.Errorf("unknown method: %v, want -32601", err)
			}
		})
	}
}
