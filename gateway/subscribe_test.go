package gateway

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
)

// A client of either era subscribes to resources of upstreams of either
// era through the gateway and is told of their updates under the
// published URI, and only of those it subscribed to; the subscription is
// made again upstream after the upstream restarts.
func TestGatewayResourceSubscriptions(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, perRequestRelayUpstreams(t)...)
	waitState(t, g, StateReady, StateIdle)
	for _, era := range []string{"2025-11-25", mcp.Version20260728} {
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
			if err := cs.Subscribe(ctx, "nobody+mem://a"); err == nil && era != mcp.Version20260728 {
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

// An upstream subscription lasts while some client holds it: the
// gateway unsubscribes upstream once the last holder unsubscribes or its
// session ends, and subscribes again when someone asks again. One
// session's subscriptions are bounded.
func TestGatewayUpstreamSubscriptionsPruned(t *testing.T) {
	var logs logBuffer
	rec := newMethodRecorder(t, "alpha", "")
	cfg := &config.Config{Servers: map[string]*config.Server{"alpha": {Name: "alpha", URL: rec.srv.URL + "/mcp", ServerOptions: config.ServerOptions{ProtocolVersion: "2025-11-25"}}}, Limits: config.Limits{SubscriptionsPerSession: 3}}
	g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
	waitState(t, g, StateReady)
	ctx := context.Background()
	a := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	b := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	for _, cs := range []*mcp.ClientSession{a, b} {
		if err := cs.Subscribe(ctx, "alpha+mem://a"); err != nil {
			t.Fatal(err)
		}
	}
	if n := rec.count("resources/subscribe"); n != 1 {
		t.Fatalf("%d subscriptions upstream for two holders, want 1", n)
	}
	if err := a.Unsubscribe(ctx, "alpha+mem://a"); err != nil {
		t.Fatal(err)
	}
	if err := a.Ping(ctx); err != nil { // the pruner has had its turn
		t.Fatal(err)
	}
	if n := rec.count("resources/unsubscribe"); n != 0 {
		t.Errorf("unsubscribed upstream while b still holds it (%d)", n)
	}
	b.Close()
	waitUntil(t, func() bool { return rec.count("resources/unsubscribe") == 1 }, "the upstream unsubscription after the last holder's session ended")
	if err := a.Subscribe(ctx, "alpha+mem://a"); err != nil {
		t.Fatal(err)
	}
	if n := rec.count("resources/subscribe"); n != 2 {
		t.Errorf("%d subscriptions upstream after a new holder came, want 2", n)
	}
	for _, uri := range []string{"alpha+mem://b", "alpha+mem://c"} {
		if err := a.Subscribe(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Subscribe(ctx, "alpha+mem://d"); err == nil || !strings.Contains(err.Error(), "already holds 3 resource subscriptions") {
		t.Errorf("a fourth subscription of one session: %v", err)
	}
}
