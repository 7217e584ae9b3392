package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// metaOf returns params._meta as received, decoded.
func metaOf(t *testing.T, params json.RawMessage) map[string]any {
	t.Helper()
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("params %s: %v", params, err)
	}
	return p.Meta
}

func TestClientMiddlewareSeesEveryRequestAndItsMetaReachesTheServer(t *testing.T) {
	for _, version := range []string{Version20251125, Version20260728} {
		t.Run(version, func(t *testing.T) {
			var mu sync.Mutex
			var got []json.RawMessage // the tool's params as the server received them
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			s.AddTool(&Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
				mu.Lock()
				got = append(got, req.RawParams)
				mu.Unlock()
				return &CallToolResult{Content: []Content{&TextContent{Text: "ok"}}}, nil
			})
			var order []string
			var seen []string
			tag := func(name string) ClientMiddleware {
				return func(next ClientHandler) ClientHandler {
					return func(ctx context.Context, req *ClientRequest) (json.RawMessage, error) {
						mu.Lock()
						order = append(order, name)
						if name == "outer" {
							seen = append(seen, req.Method)
						}
						mu.Unlock()
						if req.Session == nil || req.ID.IsZero() {
							return nil, fmt.Errorf("request %s has no session or id", req.Method)
						}
						if err := req.SetMeta("traceparent", name+"-"+req.ID.String()); err != nil {
							return nil, err
						}
						return next(ctx, req)
					}
				}
			}
			cs := connect(t, s, &ClientOptions{ProtocolVersion: version, Middleware: []ClientMiddleware{tag("outer"), tag("inner")}})
			ctx := WithProgress(context.Background(), func(*ProgressNotificationParams) {})
			if _, err := cs.CallToolParams(ctx, &CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"a":1}`), Meta: Meta{"mine": "kept"}}); err != nil {
				t.Fatalf("call: %v", err)
			}
			if !slices.Contains(seen, "tools/call") {
				t.Errorf("middleware saw %v, want tools/call among them", seen)
			}
			if len(order) < 2 || order[0] != "outer" || order[1] != "inner" {
				t.Errorf("order %v, want outer before inner", order)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 {
				t.Fatalf("server ran the tool %d times, want 1", len(got))
			}
			meta := metaOf(t, got[0])
			tp, _ := meta["traceparent"].(string)
			if len(tp) < len("inner-") || tp[:len("inner-")] != "inner-" {
				t.Errorf("_meta.traceparent = %v, want the inner middleware's value", meta["traceparent"])
			}
			if meta["mine"] != "kept" {
				t.Errorf("_meta.mine = %v, want the caller's own member kept", meta["mine"])
			}
			if meta["progressToken"] == nil {
				t.Errorf("_meta has no progressToken: %v", meta)
			}
		})
	}
}

func TestClientMiddlewareSeesTheServersErrorsAndMayReplaceThem(t *testing.T) {
	s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
	s.HandleMethod("x/fail", func(context.Context, *Request) (any, error) {
		return nil, jsonrpc.Errorf(-32042, "no")
	})
	var seen error
	refuse := errors.New("refused by middleware")
	mw := func(next ClientHandler) ClientHandler {
		return func(ctx context.Context, req *ClientRequest) (json.RawMessage, error) {
			if req.Method == "x/refused" {
				return nil, refuse
			}
			res, err := next(ctx, req)
			if req.Method == "x/fail" {
				seen = err
			}
			return res, err
		}
	}
	cs := connect(t, s, &ClientOptions{ProtocolVersion: Version20251125, Middleware: []ClientMiddleware{mw}})
	tests := []struct {
		method string
		want   func(error) bool
	}{
		{"x/fail", func(err error) bool { var ce *CallError; return errors.As(err, &ce) && ce.Err.Code == -32042 }},
		{"x/refused", func(err error) bool { return errors.Is(err, refuse) }},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			err := cs.call(context.Background(), tt.method, nil, nil, callOptions{})
			if !tt.want(err) {
				t.Errorf("call: %v", err)
			}
		})
	}
	if ce := (*CallError)(nil); !errors.As(seen, &ce) {
		t.Errorf("middleware saw %v, want the server's *CallError", seen)
	}
}

func TestSetMetaAddsOrReplacesOneMember(t *testing.T) {
	tests := []struct {
		name, params, want string
	}{
		{"no params", ``, `{"_meta":{"k":"v"}}`},
		{"null params", `null`, `{"_meta":{"k":"v"}}`},
		{"params without _meta", `{"a":1}`, `{"_meta":{"k":"v"},"a":1}`},
		{"_meta with other members", `{"_meta":{"o":2},"a":1}`, `{"_meta":{"k":"v","o":2},"a":1}`},
		{"_meta with the member", `{"_meta":{"k":"old"}}`, `{"_meta":{"k":"v"}}`},
		{"_meta not an object", `{"_meta":3}`, `{"_meta":{"k":"v"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &ClientRequest{Params: json.RawMessage(tt.params)}
			if err := r.SetMeta("k", "v"); err != nil {
				t.Fatal(err)
			}
			var got, want any
			if err := json.Unmarshal(r.Params, &got); err != nil {
				t.Fatalf("%s: %v", r.Params, err)
			}
			json.Unmarshal([]byte(tt.want), &want)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("got %s, want %s", r.Params, tt.want)
			}
		})
	}
}
