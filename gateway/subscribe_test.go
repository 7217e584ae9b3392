package gateway

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
)

// A client of either era subscribes to resources of upstreams of either
// era through the gateway and is told of their updates under the
// published URI, and only of those it subscribed to; the subscription is
// made again upstream after the upstream restarts.
func TestGatewayResourceSubscriptions(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, modernRelayUpstreams(t)...)
	waitState(t, g, StateReady, StateIdle)
	for _, era := range []string{"2025-11-25", mcp.ModernVersion} {
		t.Run(era, func(t *testing.T) {
			updated := make(chan string, 16)
			cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: era,
				ResourceUpdatedHandler: func(_ context.Context, _ *mcp.ClientSession, uri string) { updated <- uri }})
			next := func(what string) string {
				t.Helper()
				select {
				case u := <-updated:
					return u
				case <-time.After(10 * time.Second):
					t.Fatalf("no update: %s", what)
					return ""
				}
			}
			ctx := context.Background()
			for _, s := range []string{"alpha", "gamma"} {
				if err := cs.Subscribe(ctx, s+"+mem://a"); err != nil {
					t.Fatalf("subscribe to %s+mem://a: %v", s, err)
				}
				// Not subscribed: b's update is not passed on, so the
				// next one seen is a's.
				callText(t, cs, s+"_touch", map[string]string{"uri": "mem://b"})
				callText(t, cs, s+"_touch", map[string]string{"uri": "mem://a"})
				if got := next(s); got != s+"+mem://a" {
					t.Errorf("%s's update arrived as %q", s, got)
				}
			}
			if err := cs.Subscribe(ctx, "nobody+mem://a"); err == nil && era != mcp.ModernVersion {
				t.Error("a subscription to no server's resource was accepted")
			}
		})
	}
	// alpha is killed and restarted: its subscription is made again.
	updated := make(chan string, 16)
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25",
		ResourceUpdatedHandler: func(_ context.Context, _ *mcp.ClientSession, uri string) { updated <- uri }})
	if err := cs.Subscribe(context.Background(), "alpha+mem://a"); err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(callText(t, cs, "alpha_pid", nil))
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	waitUntil(t, func() bool {
		res, err := cs.CallTool(context.Background(), "alpha_pid", nil)
		return err == nil && !res.IsError && res.Content[0].(*mcp.TextContent).Text != strconv.Itoa(pid)
	}, "alpha to come back")
	callText(t, cs, "alpha_touch", map[string]string{"uri": "mem://a"})
	select {
	case got := <-updated:
		if got != "alpha+mem://a" {
			t.Errorf("after the restart: %q", got)
		}
	case <-time.After(10 * time.Second):
		t.Errorf("no update after the restart; log:\n%s", tail(logs.String(), 2000))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
