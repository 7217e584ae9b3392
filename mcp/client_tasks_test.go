package mcp

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// CallToolAsTask in each era that has tasks: a task-required tool that a
// plain call cannot reach, a task whose handler asks the client twice, a
// task cancelled on the server when the caller gives up, a tool failure
// carried as such; a server without tasks is refused before sending.
func TestClientCallToolAsTask(t *testing.T) {
	for _, era := range []string{"2025-11-25", Version20260728} {
		t.Run(era, func(t *testing.T) {
			s, gate, ended := taskServer(nil)
			asked := 0
			cs := connect(t, s, &ClientOptions{ProtocolVersion: era,
				ElicitationHandler: func(_ context.Context, _ *ClientSession, p *ElicitParams) (*ElicitResult, error) {
					asked++
					return &ElicitResult{Action: "accept", Content: map[string]any{"v": strings.TrimSuffix(p.Message, "?")}}, nil
				}})
			ctx := context.Background()
			if _, err := cs.CallTool(ctx, "must", nil); err == nil {
				t.Error("a plain call of a task-required tool went through")
			}
			fast := &TaskCallOptions{TTL: time.Minute, PollInterval: 10 * time.Millisecond}
			// The tool fails: a tool error, as a plain call's would be.
			if res, err := cs.CallToolAsTask(ctx, &CallToolParams{Name: "must"}, fast); err != nil || !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "tool failure") {
				t.Errorf("the failing task: %+v %v", res, err)
			}
			res, err := cs.CallToolAsTask(ctx, &CallToolParams{Name: "ask"}, fast)
			if err != nil || res.Content[0].(*TextContent).Text != "first+second" || asked != 2 {
				t.Fatalf("ask as a task: %+v %v (asked %d)", res, err, asked)
			}
			go func() { gate <- struct{}{} }()
			if res, err := cs.CallToolAsTask(ctx, &CallToolParams{Name: "wait"}, fast); err != nil || res.Content[0].(*TextContent).Text != "waited" {
				t.Fatalf("wait as a task: %+v %v", res, err)
			}
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if _, err := cs.CallToolAsTask(cctx, &CallToolParams{Name: "wait"}, fast); err == nil {
				t.Fatal("a task outlived its caller's context")
			}
			select {
			case <-ended:
			case <-time.After(waitFor):
				t.Error("the abandoned task was not cancelled on the server")
			}
		})
	}
	plain := connect(t, NewServer(&Implementation{Name: "s", Version: "1"}, &ServerOptions{HasTools: true}), nil)
	if _, err := plain.CallToolAsTask(context.Background(), &CallToolParams{Name: "x"}, nil); !errors.Is(err, ErrNotSupported) {
		t.Errorf("a server without tasks: %v", err)
	}
}

// A server may write the answer that creates a task after the task ended,
// with a snapshot that says "completed" (or "failed") without the outcome;
// the client fetches it with tasks/get. Ours answers with the task as
// created ("working"), so the answer is rewritten on its way here.
func TestClientTaskEndedBeforeCreationAnswer(t *testing.T) {
	s, _, _ := taskServer(nil)
	var rewritten atomic.Int32
	cs := connectVia(t, s, &ClientOptions{ProtocolVersion: Version20260728}, func(c Conn) Conn {
		return rewriteConn{c, func(m []byte) []byte {
			if bytes.Contains(m, []byte(`"resultType":"task"`)) && bytes.Contains(m, []byte(`"status":"working"`)) {
				rewritten.Add(1)
				return bytes.Replace(m, []byte(`"status":"working"`), []byte(`"status":"completed"`), 1)
			}
			return m
		}}
	})
	fast := &TaskCallOptions{TTL: time.Minute, PollInterval: time.Millisecond}
	defer func() {
		if rewritten.Load() == 0 {
			t.Error("no creation answer was rewritten: the test tested nothing")
		}
	}()
	for i := range 20 {
		res, err := cs.CallToolAsTask(context.Background(), &CallToolParams{Name: "must"}, fast)
		if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*TextContent).Text, "tool failure") {
			t.Fatalf("call %d: %+v %v", i, res, err)
		}
	}
}

// rewriteConn passes what a server writes through f.
type rewriteConn struct {
	Conn
	f func([]byte) []byte
}

func (c rewriteConn) WriteMessage(m []byte) error { return c.Conn.WriteMessage(c.f(m)) }
