package gateway

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/internal/testbin"
	"github.com/mcpgate/mcpgate/mcp"
)

// A bare tool server, configured or detected, publishes its tools under
// its prefix; its values come back as structured content and text, its
// errors as isError results; health checks do not take it for dead for
// not knowing ping.
func TestBareUpstreamPublishesItsTools(t *testing.T) {
	bin := testbin.Build(t, testbin.BareServer)
	for _, tc := range []struct {
		protocol   string
		initialize bool // whether the gateway asks it initialize
	}{
		{"", true},
		{"bare", false},
	} {
		t.Run("protocol="+tc.protocol, func(t *testing.T) {
			var logs logBuffer
			srv := &configServer{Name: "calc", Command: bin, Protocol: tc.protocol, ServerOptions: config.ServerOptions{
				Start: "eager", HealthInterval: config.Duration(20 * time.Millisecond), Timeout: config.Duration(10 * time.Second)}}
			g, cs := startGateway(t, &logs, nil, srv)
			if got, want := toolNames(t, cs), []string{"calc_add", "calc_greet", "calc_hang", "calc_lookup", "calc_note"}; !reflect.DeepEqual(got, want) {
				t.Errorf("tools %v, want %v", got, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), waitFor) // a bound on a hang
			defer cancel()
			res, err := cs.CallTool(ctx, "calc_add", map[string]any{"a": 2, "b": 3})
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := res.Content[0].(*mcp.TextContent); res.IsError || len(res.Content) != 1 || text == nil || text.Text != `{"sum":5}` ||
				!reflect.DeepEqual(res.StructuredContent, map[string]any{"sum": 5.0}) {
				t.Errorf("calc_add: %+v, want {\"sum\":5} as structured content and text", res)
			}
			res, err = cs.CallTool(ctx, "calc_lookup", nil)
			if err != nil {
				t.Fatal(err)
			}
			if text, _ := res.Content[0].(*mcp.TextContent); !res.IsError || text == nil || text.Text != "the database is locked" {
				t.Errorf("calc_lookup: %+v, want an isError result with the upstream's message", res)
			}
			// Health checks, every 20ms, have asked it something a few times.
			waitUntil(t, func() bool {
				l := logs.String()
				return strings.Count(l, "got tools/list")+strings.Count(l, "got ping") >= 6
			}, "health checks")
			for _, st := range g.Status() {
				if st.Name == "calc" && (st.State != StateReady || !st.Bare) {
					t.Errorf("status %+v, want ready and bare", st)
				}
			}
			log := logs.String()
			for _, never := range []string{"got ping", "got notifications/", "health check failed"} {
				if strings.Contains(log, never) {
					t.Errorf("the log has %q:\n%s", never, log)
				}
			}
			if got := strings.Contains(log, "got initialize"); got != tc.initialize {
				t.Errorf("initialize asked: %v, want %v", got, tc.initialize)
			}
		})
	}
}

// protocol: mcp is MCP only: a server that does not know initialize is
// down, with initialize's error.
func TestUpstreamOfProtocolMCPIsNotTakenForBare(t *testing.T) {
	bin := testbin.Build(t, testbin.BareServer)
	var logs logBuffer
	g := runGateway(t, &logs, &configServer{Name: "calc", Command: bin, Protocol: "mcp", ServerOptions: config.ServerOptions{Start: "eager"}})
	waitState(t, g, StateDown, StateFailed)
	st := g.Status()[0]
	if st.Bare || !strings.Contains(st.Error, "-32601") || !strings.Contains(st.Error, "initialize") {
		t.Errorf("status %+v, want initialize's -32601 and not bare", st)
	}
}
