package interop

// Our server with other clients: each client holds a short session with
// `mcpgate serve` (the task store) and one with the fixtures server (our
// engine serving the conformance fixtures plus the interop_* tools), over
// every transport it has and at every revision it can be made to offer.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mcpgate/mcpgate/mcp"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// target is where a client connects: a command it starts (stdio) or a
// URL (Streamable HTTP, or the legacy HTTP+SSE transport at /sse).
type target struct {
	transport string // stdio, http, sse
	command   string
	args      []string
	url       string
}

var transportLabel = map[string]string{"stdio": "stdio", "http": "streamable-http", "sse": "http+sse (2024-11-05)", "cluster": clusterLabel}

// ourTargets returns the task store and the fixtures as tr serves them;
// "cluster" is Streamable HTTP through HAProxy in front of replicas.
func ourTargets(t *testing.T, tr string) (tasks, fixtures target) {
	switch tr {
	case "stdio":
		tc, ta := tasksCommand(t)
		fc, fa := fixturesCommand()
		return target{transport: tr, command: tc, args: ta}, target{transport: tr, command: fc, args: fa}
	case "http":
		return target{transport: tr, url: env.tasksURL}, target{transport: tr, url: env.fixturesURL}
	case "sse":
		sse := func(u string) string { return strings.TrimSuffix(u, "/mcp") + "/sse" }
		return target{transport: tr, url: sse(env.tasksURL)}, target{transport: tr, url: sse(env.fixturesURL)}
	case "cluster":
		return clusterTargets(t)
	}
	t.Fatalf("unknown transport %s", tr)
	return
}

// clientUnderTest is a client library (or bridge) and how to connect it.
type clientUnderTest struct {
	name string
	// versions lists what to offer over each transport; "" leaves the
	// choice to the client.
	versions map[string][]string
	feats    func(tr string) features
	connect  func(ctx context.Context, t *testing.T, tgt target, version string) (session, error)
}

// withSession connects, runs f, and closes the session (also when f
// fails the test).
func withSession(ctx context.Context, t *testing.T, r *row, c clientUnderTest, tgt target, version string, f func(session)) {
	t.Helper()
	s, err := c.connect(ctx, t, tgt, version)
	if err != nil {
		fatalf(t, r, "connecting to %s: %v", tgt.command+tgt.url, err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
		if ts, ok := s.(*tsSession); ok && len(ts.clientErrors) > 0 {
			t.Errorf("the TypeScript client reported errors: %q", ts.clientErrors)
		}
		if n, ok := s.(interface{ Notes() []string }); ok {
			for _, note := range n.Notes() {
				r.note("%s", note)
			}
		}
	}()
	f(s)
}

// runWithOurServer runs c against the task store and the fixtures over
// each transport and revision.
func runWithOurServer(t *testing.T, c clientUnderTest) {
	for _, tr := range []string{"stdio", "http", "sse", "cluster"} {
		for _, v := range c.versions[tr] {
			name := tr + "/" + v
			if v == "" {
				name = tr + "/default"
			}
			t.Run(name, func(t *testing.T) {
				r := record(t, c.name, "mcpgate serve + fixtures", transportLabel[tr], v)
				ctx := testCtx(t, 60*time.Second)
				tasks, fixtures := ourTargets(t, tr)
				withSession(ctx, t, r, c, tasks, v, func(s session) { tasksScenario(ctx, t, r, s) })
				withSession(ctx, t, r, c, fixtures, v, func(s session) { fixturesScenario(ctx, t, r, s, c.feats(tr)) })
			})
		}
	}
}

// withDefault is the revisions plus the client's own choice.
var withDefault = append([]string{""}, revisions...)

func TestGoSDKClient(t *testing.T) {
	t.Parallel()
	runWithOurServer(t, clientUnderTest{
		name: "Go SDK v1.8.0 client",
		// The SDK's default probes with server/discover: mcpgate speaks
		// 2026-07-28, so that is what the default reaches.
		versions: map[string][]string{"stdio": withDefault, "http": withDefault, "sse": {"2024-11-05"}, "cluster": withDefault},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			var tr gomcp.Transport
			switch tgt.transport {
			case "stdio":
				cmd := exec.Command(tgt.command, tgt.args...)
				cmd.Stderr = logWriter(t)
				tr = &gomcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}
			case "http":
				tr = &gomcp.StreamableClientTransport{Endpoint: tgt.url}
			case "sse":
				tr = &gomcp.SSEClientTransport{Endpoint: tgt.url}
			}
			return connectGoSDK(ctx, tr, v)
		},
	})
}

func TestMCPGoClient(t *testing.T) {
	t.Parallel()
	runWithOurServer(t, clientUnderTest{
		name:     "mcp-go v1.2.1 client",
		versions: map[string][]string{"stdio": withDefault, "http": withDefault, "sse": {"2024-11-05"}, "cluster": withDefault},
		// mcp-go sends notifications/cancelled over stdio only: over HTTP it
		// just drops the request (by design, see its cancelRequest).
		feats: func(tr string) features {
			f := allFeatures
			f.cancel = tr == "stdio"
			return f
		},
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			var tr transport.Interface
			switch tgt.transport {
			case "stdio":
				tr = transport.NewStdioWithOptions(tgt.command, nil, tgt.args, transport.WithCommandStderrWriter(logWriter(t)))
			case "http":
				h, err := transport.NewStreamableHTTP(tgt.url)
				if err != nil {
					return nil, err
				}
				tr = h
			case "sse":
				h, err := transport.NewSSE(tgt.url)
				if err != nil {
					return nil, err
				}
				tr = h
			}
			return connectMCPGo(ctx, tr, v)
		},
	})
}

func TestTypeScriptClient(t *testing.T) {
	t.Parallel()
	d := startTSDriver(t)
	runWithOurServer(t, clientUnderTest{
		name: "TS SDK 1.32.2 client",
		// Its default offer is 2025-11-25, the last of these.
		versions: map[string][]string{"stdio": revisions, "http": revisions, "sse": {"2024-11-05"}, "cluster": revisions},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			return d.connect(ctx, tsTarget{transport: tgt.transport, command: tgt.command, args: tgt.args, url: tgt.url}, v)
		},
	})
}

// TestOurClient is our own client (mcphttp.ClientTransport) against our
// servers: over one server's Streamable HTTP, and through HAProxy in
// front of replicas, where each request may reach another replica.
func TestOurClient(t *testing.T) {
	t.Parallel()
	runWithOurServer(t, clientUnderTest{
		name:     "mcpgate client",
		versions: map[string][]string{"http": withDefault, "cluster": withDefault},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			return connectOurs(ctx, t, ourHTTPTransport(t, tgt.url), v)
		},
	})
}

// TestTypeScriptV2Client is the TypeScript SDK v2 client
// (@modelcontextprotocol/client) in each of its versionNegotiation modes:
// its default, legacy (initialize, offering 2025-11-25); "auto" (a
// server/discover probe, then 2026-07-28 or initialize; over stdio the
// probe runs on a sibling process); and pinned to 2026-07-28.
func TestTypeScriptV2Client(t *testing.T) {
	t.Parallel()
	d := startTSDriver(t, "--v2")
	modes := []string{"", "auto", perRequestRevision}
	runWithOurServer(t, clientUnderTest{
		name:     "TS SDK v2 2.4.0 client",
		versions: map[string][]string{"stdio": modes, "http": modes, "sse": {""}, "cluster": modes},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			mode := map[string]string{"": "legacy", "auto": "auto", perRequestRevision: "pin"}[v]
			s, err := d.connect(ctx, tsTarget{transport: tgt.transport, command: tgt.command, args: tgt.args, url: tgt.url, negotiation: mode}, "")
			if err == nil && v != "" && s.Negotiated() != perRequestRevision {
				s.Close()
				return nil, fmt.Errorf("negotiation %s reached %q, want %s: mcpgate speaks it", mode, s.Negotiated(), perRequestRevision)
			}
			return s, err
		},
	})
}

// mcpRemoteCommand is mcp-remote, the stdio-to-HTTP bridge desktop
// clients use for remote servers, pointed at url. It probes the OAuth
// well-known paths first (mcpgate answers 404 without auth), then passes
// the client's messages through, initialize included, so the offered
// revision reaches mcpgate.
func mcpRemoteCommand(t *testing.T, tr, url string) (string, []string, map[string]string) {
	strategy := map[string]string{"http": "http-only", "sse": "sse-only"}[tr]
	// MCP_REMOTE_CONFIG_DIR: its token store, kept out of the home directory.
	return env.node, []string{npmBin("mcp-remote", "dist/proxy.js"), url, "--transport", strategy},
		map[string]string{"MCP_REMOTE_CONFIG_DIR": t.TempDir()}
}

// TestMCPRemote: the TypeScript client, as a desktop app would be, speaks
// stdio to mcp-remote, which speaks HTTP to mcpgate.
func TestMCPRemote(t *testing.T) {
	t.Parallel()
	d := startTSDriver(t)
	runWithOurServer(t, clientUnderTest{
		name:     "mcp-remote 0.15.1 bridge (TS SDK client on its stdio)",
		versions: map[string][]string{"http": revisions, "sse": {"2024-11-05"}, "cluster": revisions},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			cmd, args, env := mcpRemoteCommand(t, tgt.transport, tgt.url)
			return d.connect(ctx, tsTarget{transport: "stdio", command: cmd, args: args, env: env}, v)
		},
	})
}

// TestMCPRemoteOurClient has mcpgate at both ends of mcp-remote.
func TestMCPRemoteOurClient(t *testing.T) {
	t.Parallel()
	runWithOurServer(t, clientUnderTest{
		name:     "mcp-remote 0.15.1 bridge (mcpgate client on its stdio)",
		versions: map[string][]string{"http": {"2025-11-25"}, "cluster": {"2025-11-25"}},
		feats:    func(string) features { return allFeatures },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			name, args, env := mcpRemoteCommand(t, tgt.transport, tgt.url)
			cmd := exec.Command(name, args...)
			cmd.Env = os.Environ()
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			return connectOurs(ctx, t, &mcp.CommandTransport{Command: cmd, Logger: testLogger(t), TerminateTimeout: time.Second}, v)
		},
	})
}

// TestInspectorCLI runs the MCP Inspector's CLI mode, one method a run:
// no progress or cancellation there. It offers one revision of its own.
func TestInspectorCLI(t *testing.T) {
	t.Parallel()
	runWithOurServer(t, clientUnderTest{
		name:     "MCP Inspector 2.12.0 --cli",
		versions: map[string][]string{"stdio": {""}, "http": {""}, "sse": {""}, "cluster": {""}},
		feats:    func(string) features { return features{resources: true, prompts: true} },
		connect: func(ctx context.Context, t *testing.T, tgt target, v string) (session, error) {
			return connectInspector(ctx, t, tgt)
		},
	})
}
