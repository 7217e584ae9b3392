package gateway

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// Learning from use (toolSearch.learn). A search_tools result, then a
// successful call of one of the tools it returned by the same caller
// (callerKey: the principal and tenant, or an anonymous caller's
// session), directly or through call_tool, within clickWindow, is a
// click: the query's words led to that tool. The tenant's later searches
// rank with what its clicks taught (toolsearch.Clicks); one tenant's
// never change another's, and callers with no tenant share theirs.
//
// Clicks are kept in memory, bounded and fading (a half-life of a
// week), and in the state database (clickstore.go) when it is a file or
// a Postgres database: a restart replays them, and replicas sharing a
// Postgres state database replay each other's within seconds, so that
// they learn together. Replicas sharing a Redis share the searches they
// served too (clicks_shared.go), so that a call makes a click whichever
// replica served its search.

// clickWindow is how long after a search a call of one of its tools is
// taken as chosen from it.
const clickWindow = 10 * time.Minute

// A caller's last searches are remembered, not only the last: agents
// often search two or three ways before they call.
const searchesPerCaller = 4

// maxClickQuery bounds the query text kept for a click: a longer query
// says no more of what it wants, and callers are many.
const maxClickQuery = 512

// clickTracker remembers each caller's last searches until a call shows
// what they chose, and holds the click model; its zero value is ready.
type clickTracker struct {
	// now is the clock; nil means time.Now.
	now   func() time.Time
	once  sync.Once
	model *toolsearch.Clicks
	made  atomic.Bool
	// store keeps the clicks in the state database; nil when the state
	// is kept in memory.
	store *clickStore
	// shared keeps the searches in the replicas' Redis; nil for a
	// gateway alone.
	shared *sharedSearches

	mu   sync.Mutex
	last map[string][]*shownSearch // caller → their last searches, newest last
}

// shownSearch is a search as the caller saw it.
type shownSearch struct {
	tenant, query string
	tools         []string // the hits, by published name
	credited      []string // the hits already counted as chosen
	at            time.Time
}

func (c *clickTracker) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// clickModel is the gateway's click model, made on first use.
func (g *Gateway) clickModel() *toolsearch.Clicks {
	c := &g.clicks
	c.once.Do(func() {
		c.model = toolsearch.NewClicks(g.search, &toolsearch.ClickOptions{Now: c.clock})
		c.store.start(c.model)
		c.made.Store(true)
	})
	return c.model
}

// learns reports whether search learns from use.
func (g *Gateway) learns() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cfg.ToolSearch.Learns()
}

// rankTools is the index's search, re-ranked with the clicks of the
// caller's tenant while learning is on.
func (g *Gateway) rankTools(ctx context.Context, q toolsearch.Query) []toolsearch.Hit {
	if !g.learns() {
		return g.search.Search(ctx, q)
	}
	tenant, _ := TenantFrom(ctx)
	return g.clickModel().Search(ctx, tenant, q)
}

// searched remembers what a search showed its caller, for clicked.
func (g *Gateway) searched(ctx context.Context, req *mcp.Request, query string, hits []toolsearch.Hit) {
	if len(hits) == 0 || !g.learns() {
		return
	}
	if len(query) > maxClickQuery {
		cut := maxClickQuery
		for cut > 0 && !utf8.RuneStart(query[cut]) {
			cut-- // not in the middle of a character
		}
		query = query[:cut]
	}
	s := &shownSearch{query: query, tools: make([]string, len(hits))}
	s.tenant, _ = TenantFrom(ctx)
	for i, h := range hits {
		s.tools[i] = h.Name
	}
	key := callerKey(ctx, req)
	g.clicks.remember(key, s)
	if sh := g.clicks.shared; sh != nil {
		if err := sh.remember(ctx, key, s); err != nil {
			sh.fail(g, err)
		}
	}
}

// remember keeps s as caller's latest search.
func (c *clickTracker) remember(key string, s *shownSearch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s.at = c.clock()
	if c.last == nil {
		c.last = map[string][]*shownSearch{}
	}
	prev, ok := c.last[key]
	if !ok && len(c.last) >= maxCallers {
		c.shrink(s.at)
	}
	if len(prev) >= searchesPerCaller {
		prev = slices.Delete(prev, 0, len(prev)-searchesPerCaller+1)
	}
	c.last[key] = append(prev, s)
}

// clicked counts a successful call of tool as chosen from the caller's
// latest search that showed it, once per search: in the background, in
// Redis, when a replica said the caller searched (see runSharedClicks).
func (g *Gateway) clicked(ctx context.Context, req *mcp.Request, tool string) {
	key, now := callerKey(ctx, req), g.clicks.clock()
	if sh := g.clicks.shared; sh != nil && g.learns() && sh.searchedRecently(key, now) {
		select {
		case sh.jobs <- sharedClick{key, tool, now}:
		default:
			if sh.dropped.Add(1) == 1 {
				g.logger.Warn("tool search learning: too many calls waiting to be looked up in Redis; some clicks are not counted")
			}
		}
		return
	}
	g.creditLocal(key, tool, now)
}

// creditLocal counts a call of tool by caller as chosen from the latest
// search this replica showed it that showed the tool, once per search.
func (g *Gateway) creditLocal(key, tool string, now time.Time) {
	c := &g.clicks
	c.mu.Lock()
	var chosen *shownSearch
	for _, s := range slices.Backward(c.last[key]) {
		if now.Sub(s.at) <= clickWindow && slices.Contains(s.tools, tool) && !slices.Contains(s.credited, tool) {
			s.credited = append(s.credited, tool)
			chosen = s
			break
		}
	}
	c.mu.Unlock()
	if chosen != nil && g.learns() {
		g.clickModel().RecordAt(chosen.tenant, chosen.query, tool, now)
		c.store.add(chosen.tenant, chosen.query, tool, now)
	}
}

// shrink drops callers whose searches are all older than the window and,
// if that is not enough, any others down to half the bound (see
// coCallTracker.shrink).
func (c *clickTracker) shrink(now time.Time) {
	for k, ss := range c.last {
		if now.Sub(ss[len(ss)-1].at) > clickWindow {
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

// ResetLearning forgets what tool search learnt from the calls of
// tenant's callers ("" for callers with no tenant): at once here, and
// within seconds in the state database and the replicas that share it.
func (g *Gateway) ResetLearning(tenant string) {
	if !g.learns() && !g.clicks.made.Load() {
		return // nothing learnt, and the database is not to be touched
	}
	g.clickModel().Reset(tenant)
	g.clicks.store.add(tenant, "", "", g.clicks.clock())
}
