package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
)

// A tool that its upstream runs only as a task is published as one that
// may run as a task: a client of either era calls it plainly and the
// gateway runs the upstream task and waits for it, past the upstream's
// timeout (1s here), which bounds calls and not tasks. A 2026-07-28
// upstream with tasks decides for itself: a plain call goes plainly (so
// echo answers at once) and again as a task when the upstream asks for
// the extension, timed as a call, so its job is reached only as a task
// of the gateway's (a 2025-11-25 client's here), untimed.
func TestGatewayUpstreamTasks(t *testing.T) {
	var logs logBuffer
	ups := perRequestRelayUpstreams(t)
	for _, u := range ups {
		u.Timeout = config.Duration(time.Second)
	}
	g := runGateway(t, &logs, ups...)
	waitState(t, g, StateReady, StateIdle)
	for _, era := range []string{"2025-11-25", mcp.Version20260728} {
		cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: era})
		for tool, err := range cs.Tools(context.Background()) {
			if err != nil {
				t.Fatal(err)
			}
			// 2026-07-28 has no execution member: the server decides.
			if tool.Name == "alpha_job" && era != mcp.Version20260728 && (tool.Execution == nil || tool.Execution.TaskSupport != mcp.TaskSupportOptional) {
				t.Errorf("%s: alpha_job listed with execution %+v, want optional", era, tool.Execution)
			}
		}
		if got := callText(t, cs, "alpha_job", map[string]string{"text": "x"}); got != "alpha did x" {
			t.Errorf("%s, alpha_job: %q", era, got)
		}
		if got := callText(t, cs, "gamma_echo", map[string]string{"text": "e"}); got != "gamma: e" {
			t.Errorf("%s, gamma_echo: %q", era, got)
		}
		if _, err := cs.CallTool(context.Background(), "gamma_job", map[string]string{"text": "x"}); rpcCode(err) != CodeUpstreamTimeout {
			t.Errorf("%s, gamma_job called plainly: %v, want the timeout's code", era, err)
		}
	}
	cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25"})
	res, err := cs.CallToolAsTask(context.Background(), &mcp.CallToolParams{Name: "gamma_job", Arguments: []byte(`{"text":"y"}`)}, &mcp.TaskCallOptions{PollInterval: 20 * time.Millisecond})
	if err != nil || res.Content[0].(*mcp.TextContent).Text != "gamma did y" {
		t.Errorf("gamma_job as a task of the gateway's: %+v %v", res, err)
	}
}
