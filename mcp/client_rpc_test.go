package mcp

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
)

// sentMessage is a request the client wrote, with the headers it asked
// its transport to send.
type sentMessage struct {
	msg     []byte
	headers map[string]string
}

// recordingConn is the client's end of a pipe, written through
// ContextWriter as an HTTP transport is, and keeping what was written.
type recordingConn struct {
	Conn
	mu   sync.Mutex
	sent []sentMessage
}

func (c *recordingConn) WriteMessageContext(ctx context.Context, msg []byte) error {
	c.mu.Lock()
	c.sent = append(c.sent, sentMessage{bytes.Clone(msg), httpmeta.CallHeaders(ctx)})
	c.mu.Unlock()
	return c.Conn.WriteMessage(msg)
}

// find returns the requests written that contain each of parts.
func (c *recordingConn) find(parts ...string) []sentMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []sentMessage
next:
	for _, m := range c.sent {
		for _, p := range parts {
			if !bytes.Contains(m.msg, []byte(p)) {
				continue next
			}
		}
		out = append(out, m)
	}
	return out
}

// connectRecording is connect with the client's writes recorded.
func connectRecording(t *testing.T, s *Server, opts *ClientOptions) (*ClientSession, *recordingConn) {
	t.Helper()
	cc, sc := pipePair()
	rc := &recordingConn{Conn: cc}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeConn(ctx, sc, &ServeOptions{ShutdownTimeout: time.Second})
	}()
	cs, err := NewClient(&Implementation{Name: "test-client", Version: "1"}, opts).Connect(context.Background(), ConnTransport{rc})
	if err != nil {
		cancel()
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		sc.Close()
		<-done
	})
	return cs, rc
}

// What a call carries (its Mcp-Param-* headers, its declaration of the
// tasks extension) is its own: the calls that a handler answering the
// server's questions makes with the context it is given carry none of it.
func TestAHandlersCallsCarryNothingOfTheCallItAnswers(t *testing.T) {
	obj := map[string]any{"type": "object"}
	tests := []struct {
		name string
		// run makes the call during which the handler is asked.
		run func(ctx context.Context, cs *ClientSession) error
		// nested is what the handler calls with its context.
		nested func(ctx context.Context, cs *ClientSession) error
		// outer and inner select the call's request and the handler's;
		// own is what only the call's may contain.
		outer, inner []string
		own          string
	}{{
		name: "Mcp-Param headers",
		run: func(ctx context.Context, cs *ClientSession) error {
			if _, err := cs.ListTools(ctx, nil); err != nil { // learns the annotations
				return err
			}
			_, err := cs.CallTool(ctx, "outer", map[string]any{"region": "eu"})
			return err
		},
		nested: func(ctx context.Context, cs *ClientSession) error {
			_, err := cs.CallTool(ctx, "inner", nil)
			return err
		},
		outer: []string{`"tools/call"`, `"name":"outer"`},
		inner: []string{`"tools/call"`, `"name":"inner"`},
		own:   "Mcp-Param-Region",
	}, {
		name: "the tasks extension",
		run: func(ctx context.Context, cs *ClientSession) error {
			_, err := cs.CallToolAsTask(ctx, &CallToolParams{Name: "outer", Arguments: []byte(`{}`)}, &TaskCallOptions{PollInterval: time.Millisecond})
			return err
		},
		nested: func(ctx context.Context, cs *ClientSession) error {
			_, err := cs.ListTools(ctx, nil)
			return err
		},
		outer: []string{`"tools/call"`, `"name":"outer"`},
		inner: []string{`"tools/list"`},
		own:   ExtensionTasks,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer(&Implementation{Name: "s", Version: "1"}, nil)
			s.AddTool(&Tool{Name: "outer", Execution: &ToolExecution{TaskSupport: TaskSupportOptional}, InputSchema: map[string]any{
				"type": "object", "properties": map[string]any{"region": map[string]any{"type": "string", "x-mcp-header": "Region"}},
			}}, func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
				if _, err := req.Elicit(ctx, &ElicitParams{Message: "go on?", RequestedSchema: obj}); err != nil {
					return nil, err
				}
				return TextResult("outer"), nil
			})
			s.AddTool(&Tool{Name: "inner", InputSchema: obj}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
				return TextResult("inner"), nil
			})
			nestedErr := make(chan error, 1)
			cs, rc := connectRecording(t, s, &ClientOptions{ProtocolVersion: Version20260728,
				ElicitationHandler: func(ctx context.Context, cs *ClientSession, _ *ElicitParams) (*ElicitResult, error) {
					select {
					case nestedErr <- tt.nested(ctx, cs):
					default: // asked again: once is enough
					}
					return &ElicitResult{Action: "accept", Content: map[string]any{}}, nil
				}})
			if err := tt.run(context.Background(), cs); err != nil {
				t.Fatal(err)
			}
			if err := <-nestedErr; err != nil {
				t.Fatalf("the handler's call: %v", err)
			}
			has := func(m sentMessage) bool {
				_, header := m.headers[tt.own]
				return header || bytes.Contains(m.msg, []byte(tt.own))
			}
			outer := rc.find(tt.outer...)
			if len(outer) == 0 || !has(outer[0]) {
				t.Fatalf("the call's request lacks %s (the test tests nothing): %v", tt.own, describe(outer))
			}
			inner := rc.find(tt.inner...)
			if len(inner) == 0 {
				t.Fatal("the handler's request was not sent")
			}
			for _, m := range inner {
				if has(m) {
					t.Errorf("the handler's request carries the call's %s: %s", tt.own, describe([]sentMessage{m}))
				}
			}
		})
	}
}

func describe(ms []sentMessage) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "\n%s headers %v", m.msg, m.headers)
	}
	return b.String()
}
