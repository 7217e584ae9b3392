package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/internal/testservice"
	"github.com/mcpgate/mcpgate/mcp"
)

// pinReplica is one of several gateways whose state.db is one Postgres
// database, as the replicas of a deployment are configured.
type pinReplica struct {
	g    *Gateway
	logs *logBuffer
	cs   *mcp.ClientSession
}

// pinReplicas makes n gateways for the same configuration, its state.db
// the Postgres database at url, and starts them one right after the
// other, so that their first listings meet.
func pinReplicas(t *testing.T, n int, url string, up *changingUpstream) []*pinReplica {
	t.Helper()
	rs := make([]*pinReplica, n)
	for i := range rs {
		sc := *up.cfg
		cfg := &config.Config{Servers: map[string]*config.Server{sc.Name: &sc}, State: config.State{DB: url}}
		logs := &logBuffer{}
		g, err := New(cfg, &Options{Logger: logs.logger()})
		if err != nil {
			t.Fatal(err)
		}
		rs[i] = &pinReplica{g: g, logs: logs}
	}
	for _, r := range rs {
		ctx, cancel := context.WithCancel(context.Background())
		r.g.Start(ctx)
		t.Cleanup(func() {
			cancel()
			r.g.Close()
		})
	}
	for _, r := range rs {
		waitState(t, r.g, StateReady)
		r.cs = connectTo(t, r.g.Server(), nil)
	}
	return rs
}

// pinRows reads the pins table of the Postgres database at url, as
// "SERVER/TOOL APPROVED_BY", without the store: the pins are in
// Postgres, not anywhere else.
func pinRows(t *testing.T, url string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT server || '/' || tool || ' ' || approved_by FROM pins ORDER BY server, tool`)
	if err != nil {
		t.Fatalf("reading the pins in Postgres: %v", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A tool withheld under approve, or under block, is published by every
// replica once an operator approves it: through one replica's admin
// API, or with mcpgate pins approve (a store of its own) against the
// database. The replica that approved publishes at once; the others
// notice within their poll of the store.
func TestPinsApprovedThroughOneReplicaArePublishedByTheOthers(t *testing.T) {
	pg := testservice.Postgres(t)
	ctx := context.Background()
	for i, tc := range []struct {
		name    string
		policy  string
		approve func(t *testing.T, rs []*pinReplica, url string) []pins.Approval
	}{
		{"approve, through a replica", config.PinsApprove, func(t *testing.T, rs []*pinReplica, _ string) []pins.Approval {
			as, err := rs[0].g.ApprovePins(ctx, "alpha", "", "", "admin API")
			if err != nil {
				t.Fatal(err)
			}
			return as
		}},
		{"block, through the command line", config.PinsBlock, func(t *testing.T, _ []*pinReplica, url string) []pins.Approval {
			cli, err := pins.Open(url)
			if err != nil {
				t.Fatal(err)
			}
			defer cli.Close()
			as, err := cli.Approve(ctx, "alpha", "search", "")
			if err != nil {
				t.Fatal(err)
			}
			return as
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := pg.CreateDatabase(fmt.Sprintf("approve%d", i))
			up := newChangingUpstream(t, "alpha", tc.policy, &mcp.Tool{Name: "search", Description: searchV1})
			rs := pinReplicas(t, 3, url, up)
			waitUntil(t, func() bool {
				p, err := rs[1].g.pins.Get(ctx, "alpha", "search")
				return err == nil && p.State() == pins.StateNew
			}, "the new tool recorded as waiting for approval")
			for i, r := range rs {
				if names := toolNames(t, r.cs); slices.Contains(names, "alpha_search") {
					t.Fatalf("replica %d lists a new tool under %s: %v", i, tc.policy, names)
				}
			}
			if as := tc.approve(t, rs, url); len(as) != 1 || as[0].Skipped != "" {
				t.Fatalf("approvals %+v", as)
			}
			for i, r := range rs {
				waitUntil(t, describedAs(t, r.cs, "alpha_search", searchV1), "replica %d to publish the approved tool", i)
				if got := callText(t, r.cs, "alpha_search", nil); got != "search ran" {
					t.Errorf("replica %d: call %q", i, got)
				}
			}
			if got := pinRows(t, url); len(got) != 1 || got[0] != "alpha/search operator" {
				t.Errorf("the database's pins: %q; want alpha/search, approved by the operator", got)
			}
		})
	}
}

// Replicas that start together all meet a server's tools for the first
// time: under warn each tool is pinned once, on first use, and no
// replica fails to record or read the pins.
func TestReplicasPinningAtOnceRecordOnePinEach(t *testing.T) {
	pg := testservice.Postgres(t)
	url := pg.CreateDatabase("firstuse")
	var tools []*mcp.Tool
	for i := range 8 {
		tools = append(tools, &mcp.Tool{Name: fmt.Sprintf("tool%d", i), Description: fmt.Sprintf("Does thing %d.", i)})
	}
	up := newChangingUpstream(t, "alpha", config.PinsWarn, tools...)
	rs := pinReplicas(t, 3, url, up)
	for i, r := range rs {
		waitUntil(t, func() bool { return len(toolNames(t, r.cs)) >= len(tools) }, "replica %d to publish the tools", i)
	}
	got := pinRows(t, url)
	var want []string
	for _, tool := range tools {
		want = append(want, "alpha/"+tool.Name+" "+pins.ByFirstUse)
	}
	if !slices.Equal(got, want) {
		t.Errorf("the database's pins:\n%q\nwant\n%q", got, want)
	}
	for i, r := range rs {
		if l := r.logs.String(); strings.Contains(l, "could not record the tool pins") || strings.Contains(l, "could not read the tool pins") {
			t.Errorf("replica %d failed on the pins:\n%s", i, grepLines(l, "pins"))
		}
	}
}

// A Postgres that stops while the replicas run is logged once by each,
// and once more when it answers again; an approval made then reaches
// every replica, without a restart.
func TestPinStoreLostAndBackIsLoggedAndApprovalsStillArrive(t *testing.T) {
	pg := testservice.Postgres(t)
	url := pg.CreateDatabase("lost")
	up := newChangingUpstream(t, "alpha", config.PinsApprove, &mcp.Tool{Name: "search", Description: searchV1})
	rs := pinReplicas(t, 2, url, up)
	ctx := context.Background()
	waitUntil(t, func() bool {
		p, err := rs[0].g.pins.Get(ctx, "alpha", "search")
		return err == nil && p.State() == pins.StateNew
	}, "the new tool recorded as waiting for approval")

	pg.Stop()
	for i, r := range rs {
		waitUntil(t, func() bool { return strings.Contains(r.logs.String(), "the pin store does not answer") }, "replica %d to log the lost store", i)
	}
	pg.Start()
	for i, r := range rs {
		waitUntil(t, func() bool { return strings.Contains(r.logs.String(), "the pin store answers again") }, "replica %d to log the store back", i)
		if n := strings.Count(r.logs.String(), "the pin store does not answer"); n != 1 {
			t.Errorf("replica %d logged the lost store %d times, want once", i, n)
		}
	}
	cli, err := pins.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if as, err := cli.Approve(ctx, "alpha", "search", ""); err != nil || len(as) != 1 || as[0].Skipped != "" {
		t.Fatalf("approve: %+v, %v", as, err)
	}
	for i, r := range rs {
		waitUntil(t, describedAs(t, r.cs, "alpha_search", searchV1), "replica %d to publish the tool approved after the restart", i)
	}
}
