package gateway

import (
	"cmp"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/mcphttp"
)

// statefulEnv makes the test binary statefulUpstream (see TestMain).
const statefulEnv = "MCPGATE_TEST_STATEFUL"

// statefulUpstream keeps the notes it is given, in memory and in the
// file NOTES_FILE names: the state a process shared by several clients
// lets one client see of another's.
func statefulUpstream() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "stateful", Version: "1"}, nil)
	var mu sync.Mutex
	var notes []string
	mcp.AddTool(s, &mcp.Tool{Name: "remember", Description: "Keeps a note"}, func(ctx context.Context, req *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		notes = append(notes, in.Text)
		defer s.ResourceUpdated("notes://all")
		if f := os.Getenv("NOTES_FILE"); f != "" {
			if err := os.WriteFile(f, []byte(strings.Join(notes, ",")), 0o600); err != nil {
				return nil, nil, err
			}
		}
		return mcp.TextResult("kept"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "recall", Description: "The notes kept"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		mu.Lock()
		defer mu.Unlock()
		return mcp.TextResult(strings.Join(notes, ",")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "where", Description: "Its process id and notes file"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return mcp.TextResult(strconv.Itoa(os.Getpid()) + " " + os.Getenv("NOTES_FILE")), nil, nil
	})
	s.AddResource(&mcp.Resource{URI: "notes://all", Name: "all notes"}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		mu.Lock()
		defer mu.Unlock()
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: strings.Join(notes, ",")}}}, nil
	})
	return s
}

// notesServer configures statefulUpstream with the given instances,
// its notes in the instance's own directory.
func notesServer(instances string) *configServer {
	return &configServer{Name: "notes", Command: os.Args[0],
		Env:           map[string]string{statefulEnv: "1", "NOTES_FILE": "${MCPGATE_INSTANCE_DIR}/notes.txt"},
		ServerOptions: config.ServerOptions{Instances: instances}}
}

// where is the process id and notes file of the instance serving cs.
func where(t *testing.T, cs *mcp.ClientSession) (pid int, file string) {
	t.Helper()
	p, file, _ := strings.Cut(callText(t, cs, "notes_where", nil), " ")
	pid, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return pid, file
}

// processGone reports whether pid has exited.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) || isZombie(pid)
}

// Issue 21: with instances: session, each client session has a process of
// its own, started by its first call: two sessions keep their notes (in
// memory, and in a file in a directory of each instance's own) apart,
// and the server's tools are listed before any session has an instance.
func TestSessionInstancesKeepEachSessionsStateApart(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, notesServer(config.InstancesSession))
	waitState(t, g, StateIdle)
	a, b := connectTo(t, g.Server(), nil), connectTo(t, g.Server(), nil)
	if names := toolNames(t, a); !slices.Contains(names, "notes_remember") || g.instances.running("notes") != 0 {
		t.Fatalf("listed %v with %d instances running; want the tools listed before any instance", names, g.instances.running("notes"))
	}
	callText(t, a, "notes_remember", textIn{"a's secret"})
	callText(t, b, "notes_remember", textIn{"b's secret"})
	callText(t, a, "notes_remember", textIn{"a again"})
	for _, tc := range []struct {
		cs   *mcp.ClientSession
		want string
	}{{a, "a's secret,a again"}, {b, "b's secret"}} {
		if got := callText(t, tc.cs, "notes_recall", nil); got != tc.want {
			t.Errorf("recall = %q, want %q", got, tc.want)
		}
		_, file := where(t, tc.cs)
		if b, err := os.ReadFile(file); err != nil || string(b) != tc.want {
			t.Errorf("the notes file %s holds %q (%v), want %q", file, b, err, tc.want)
		}
	}
	pa, fa := where(t, a)
	pb, fb := where(t, b)
	if pa == pb || filepath.Dir(fa) == filepath.Dir(fb) || g.instances.running("notes") != 2 {
		t.Errorf("processes %d and %d, files %s and %s, %d instances: want one each", pa, pb, fa, fb, g.instances.running("notes"))
	}
}

// Issue 21: a session's instance stops when the session ends (its
// process exits and its directory is removed) or when it has idled for
// the server's idleTimeout; the other sessions' instances carry on, and
// an idled session gets a fresh instance on its next call.
func TestSessionInstanceStopsWithItsSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle config.Duration
		end  func(cs *mcp.ClientSession)
	}{
		{"the session ends", 0, func(cs *mcp.ClientSession) { cs.Close() }},
		{"the instance idles", config.Duration(1), func(*mcp.ClientSession) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			s := notesServer(config.InstancesSession)
			s.IdleTimeout = tc.idle
			g := runGateway(t, &logs, s)
			waitState(t, g, StateIdle)
			a, b := connectTo(t, g.Server(), nil), connectTo(t, g.Server(), nil)
			pa, fa := where(t, a)
			pb, _ := where(t, b)
			if _, err := os.Stat(filepath.Dir(fa)); tc.idle == 0 && err != nil {
				t.Fatal(err)
			}
			tc.end(a)
			waitUntil(t, func() bool { return processGone(pa) }, "process %d to exit:\n%s", pa, &logs)
			waitUntil(t, func() bool {
				_, err := os.Stat(filepath.Dir(fa))
				return errors.Is(err, os.ErrNotExist)
			}, "the instance's directory %s to be removed", filepath.Dir(fa))
			if tc.idle == 0 {
				if processGone(pb) || g.instances.running("notes") != 1 {
					t.Errorf("the other session's process is gone (%v) or %d instances run", processGone(pb), g.instances.running("notes"))
				}
				callText(t, b, "notes_remember", textIn{"still here"})
				return
			}
			if again, _ := where(t, a); again == pa {
				t.Errorf("the idled session's next call reached process %d again", pa)
			}
		})
	}
}

// Issue 21: past maxInstances (for the server) or
// maxInstancesPerPrincipal (for one caller; callers over pipes are all
// the anonymous one) a session's call gets -32015 naming the server and
// the cap, and the session it refused gets an instance once another
// session ends.
func TestSessionInstanceCaps(t *testing.T) {
	for _, tc := range []struct {
		name     string
		max, per int
		cap      string
	}{
		{"per server", 1, 5, "maxInstances"},
		{"per caller", 5, 1, "maxInstancesPerPrincipal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			s := notesServer(config.InstancesSession)
			s.MaxInstances, s.MaxInstancesPerPrincipal = tc.max, tc.per
			g := runGateway(t, &logs, s)
			waitState(t, g, StateIdle)
			a, b := connectTo(t, g.Server(), nil), connectTo(t, g.Server(), nil)
			callText(t, a, "notes_remember", textIn{"a"})
			_, err := b.CallTool(context.Background(), "notes_recall", nil)
			var e *jsonrpc.Error
			if !errors.As(err, &e) || e.Code != CodeInstanceLimit || !strings.Contains(e.Message, `"notes"`) || !strings.Contains(e.Message, tc.cap) ||
				!strings.Contains(string(e.Data), `"cap":"`+tc.cap+`"`) || !strings.Contains(string(e.Data), `"limit":1`) {
				t.Fatalf("the session over the cap got %v; want -32015 naming notes and %s", err, tc.cap)
			}
			a.Close()
			waitUntil(t, func() bool { return g.instances.running("notes") == 0 }, "the first session's instance to stop")
			if got := callText(t, b, "notes_recall", nil); got != "" {
				t.Errorf("the second session's own instance recalls %q", got)
			}
		})
	}
}

// Issue 21: shared (the default) is one process for every session, as
// before; tenant is one process for each tenant (with no credentials of
// its own), shared by the tenant's sessions.
func TestSharedAndTenantInstances(t *testing.T) {
	for _, tc := range []struct {
		instances string
		tenants   [3]string // the tenants of three sessions
		same      [3]bool   // whether session i shares session 0's process
	}{
		{"", [3]string{"", "", ""}, [3]bool{true, true, true}},
		{config.InstancesShared, [3]string{"acme", "acme", "globex"}, [3]bool{true, true, true}},
		{config.InstancesTenant, [3]string{"acme", "acme", "globex"}, [3]bool{true, true, false}},
	} {
		t.Run(cmp.Or(tc.instances, "unset"), func(t *testing.T) {
			var logs logBuffer
			cfg := &config.Config{Servers: map[string]*config.Server{"notes": notesServer(tc.instances)},
				Tenants: map[string]*config.Tenant{"acme": {}, "globex": {}}}
			g := runConfigured(t, cfg, &Options{Logger: logs.logger()})
			waitState(t, g, StateIdle)
			var first int
			for i, tn := range tc.tenants {
				cs := connectAs(t, g.Server(), tn, nil)
				pid, _ := where(t, cs)
				if i == 0 {
					first = pid
					callText(t, cs, "notes_remember", textIn{"first"})
				}
				recalled := callText(t, cs, "notes_recall", nil)
				if (pid == first) != tc.same[i] || (recalled == "first") != tc.same[i] {
					t.Errorf("session %d (tenant %q): process %d (the first's %d), recalls %q; want shared %v", i, tn, pid, first, recalled, tc.same[i])
				}
			}
		})
	}
}

// Issue 21: over HTTP a session is the Mcp-Session-Id's: its notes carry
// from call to call, and its instance stops when the client ends the
// session (DELETE). A 2026-07-28 client has no session beyond a request,
// so each of its requests gets an instance of its own, stopped after it.
func TestSessionInstancesOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		version string
		recalls string
	}{
		{"2025-11-25", "kept"},
		{mcp.Version20260728, ""},
	} {
		t.Run(tc.version, func(t *testing.T) {
			var logs logBuffer
			g := runGateway(t, &logs, notesServer(config.InstancesSession))
			waitState(t, g, StateIdle)
			srv := httptest.NewServer(mcphttp.NewHandler(g.Server(), nil))
			t.Cleanup(srv.Close)
			cs, err := mcp.NewClient(nil, &mcp.ClientOptions{ProtocolVersion: tc.version}).Connect(context.Background(), &mcphttp.ClientTransport{Endpoint: srv.URL + "/mcp", DisableLegacyFallback: true})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			callText(t, cs, "notes_remember", textIn{"kept"})
			if got := callText(t, cs, "notes_recall", nil); got != tc.recalls {
				t.Errorf("recall = %q, want %q", got, tc.recalls)
			}
			if tc.recalls == "" {
				waitUntil(t, func() bool { return g.instances.running("notes") == 0 }, "the requests' instances to stop")
				return
			}
			pid, _ := where(t, cs)
			cs.Close()
			waitUntil(t, func() bool { return processGone(pid) }, "process %d to exit once the session is deleted", pid)
		})
	}
}

// Issue 21: a session's instance's resources are that session's: news
// that one changed goes to that session, not to every session subscribed
// to the same published URI (whose instance is another process).
func TestSessionInstanceUpdatesReachOnlyTheirSession(t *testing.T) {
	var logs logBuffer
	g := runGateway(t, &logs, notesServer(config.InstancesSession))
	waitState(t, g, StateIdle)
	connect := func() (*mcp.ClientSession, chan string) {
		updated := make(chan string, 16)
		// A session of its own: a 2026-07-28 client has none, and gets an
		// instance per request.
		cs := connectTo(t, g.Server(), &mcp.ClientOptions{ProtocolVersion: "2025-11-25",
			ResourceUpdatedHandler: func(_ context.Context, _ *mcp.ClientSession, uri string) { updated <- uri }})
		if err := cs.Subscribe(context.Background(), "notes+notes://all"); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		return cs, updated
	}
	a, aUpdated := connect()
	b, bUpdated := connect()
	next := func(ch chan string, who string) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(waitFor):
			t.Fatalf("%s heard of no update to its own notes; log:\n%s", who, tail(logs.String(), 2000))
		}
	}
	callText(t, a, "notes_remember", textIn{"a's"})
	next(aUpdated, "a")
	// b's own update comes after any that a's instance sent it: the
	// one sent for a's note was sent before a's call returned.
	callText(t, b, "notes_remember", textIn{"b's"})
	next(bUpdated, "b")
	// A round trip each, for anything still on its way.
	callText(t, a, "notes_recall", nil)
	callText(t, b, "notes_recall", nil)
	if n, m := len(bUpdated), len(aUpdated); n != 0 || m != 0 {
		t.Errorf("%d more updates reached b and %d a: another session's instance's updates leaked", n, m)
	}
}
