package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// Tools one caller calls one after the other, within coCallWindow, are
// "called together"; the search index offers each beside the other once
// that has happened a few times. The audit log, when kept, teaches the
// same at start, so the knowledge survives restarts.

const coCallWindow = 5 * time.Minute

type coCallTracker struct {
	mu   sync.Mutex
	last map[string]lastCall // caller → their last successful call
}

type lastCall struct {
	tool string
	at   time.Time
}

// callerKey names a caller: their principal, or for anonymous callers
// their session.
func callerKey(ctx context.Context, req *mcp.Request) string {
	if p := displayPrincipal(ctx); p != "" {
		tn, _ := TenantFrom(ctx)
		return "p:" + p + "\x00" + tn
	}
	// A session's id, where it has one, is the same on every replica.
	if req.Session != nil && req.Session.ID() != "" {
		return "s:" + req.Session.ID()
	}
	return fmt.Sprintf("s:%p", req.Session)
}

func (c *coCallTracker) called(ix *toolsearch.Index, caller, tool string, at time.Time) {
	c.mu.Lock()
	if c.last == nil {
		c.last = map[string]lastCall{}
	}
	prev, ok := c.last[caller]
	if len(c.last) >= maxCallers {
		c.shrink(at)
	}
	c.last[caller] = lastCall{tool, at}
	c.mu.Unlock()
	if ok && prev.tool != tool && at.Sub(prev.at) <= coCallWindow {
		ix.AddCoCall(prev.tool, tool)
	}
}

// maxCallers bounds the callers remembered, against many anonymous
// sessions.
const maxCallers = 1 << 16

// shrink drops callers quiet for longer than the window and, if that is
// not enough, any others down to half the bound, so that a full map is
// swept once per maxCallers/2 new callers rather than on every call.
func (c *coCallTracker) shrink(now time.Time) {
	for k, v := range c.last {
		if now.Sub(v.at) > coCallWindow {
			delete(c.last, k)
		}
	}
	for k := range c.last {
		if len(c.last) <= maxCallers/2 {
			break
		}
		delete(c.last, k)
	}
}

// learnFromAudit replays the audit log's recent successful calls.
func (g *Gateway) learnFromAudit(ctx context.Context) {
	recs, err := g.audit.Query(ctx, 30*24*time.Hour, 100_000)
	if err != nil {
		g.logger.Warn("gateway: could not read the audit log for related tools", "error", err)
		return
	}
	var t coCallTracker
	for _, r := range slices.Backward(recs) { // oldest first
		if r.Method == "tools/call" && r.Outcome == "ok" && r.Upstream != "" && r.Principal != "" {
			t.called(g.search, "p:"+r.Principal+"\x00"+r.Tenant, r.Tool, r.Time)
		}
	}
}
