package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"maps"
	"path"
	"strings"
	"time"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/gateway/pins"
	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// MetaTool is the _meta key under which configured metadata about a tool
// (category, rate limits, scopes, related tools) is published.
const MetaTool = toolsearch.MetaKey

// catalog is what one upstream publishes through the gateway: each name
// and URI as the downstream client sees it, with the upstream's own.
type catalog struct {
	sum       [32]byte          // of everything published, to skip republishing the same
	tools     map[string]string // published name → upstream name
	tasks     map[string]string // published name → the upstream's task support, where not forbidden
	prompts   map[string]string
	resources []string // published URIs
	templates []string // published URI templates
	pins      pinView  // what the definition pins decided (pinning.go)

	// resend: the published tools that their upstream says are read-only
	// or idempotent, whose calls are sent again when a connection fails
	// before their answer (sendAgain).
	resend map[string]bool
}

// publishName joins the server's name and an item's: always prefixed, so
// that adding a server never renames anything. Characters a tool name
// may not have become '_', and the result is cut to the spec's 128.
func (g *Gateway) publishName(server, name string) string {
	b := []byte(server + g.sep + name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	return string(b)
}

// publishURI prefixes a URI (or URI template) with its server's name as
// a scheme of its own ("fs+file:///a.txt"), so reads route back to it.
func publishURI(server, uri string) string { return server + "+" + uri }

// splitURI undoes publishURI.
func splitURI(uri string) (server, orig string, ok bool) {
	return strings.Cut(uri, "+")
}

// allowed applies the server's allow and deny lists to a tool name.
func allowed(name string, allow, deny []string) bool {
	match := func(globs []string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, name); ok {
				return true
			}
		}
		return false
	}
	return (len(allow) == 0 || match(allow)) && !match(deny)
}

// refresh lists everything the upstream offers and publishes it in place
// of what it published before. The list_changed notifications of the
// upstream call it again, so the gateway's lists are served from memory.
//
// Refreshes of one upstream run one at a time, and a refresh asked for
// while another runs is folded into the next one; nothing gateway-wide is
// held while the upstream is listed, so one upstream's slowness is
// invisible to the others. Each refresh has the upstream's timeout as
// its deadline, and each kind of listing is bounded in items and bytes
// (maxListItems, maxListBytes).
func (u *upstream) refresh(ctx context.Context, cs *mcp.ClientSession) error {
	return u.refreshAs(ctx, cs, nil)
}

// refreshAs is refresh, calling started (if set) once it has its turn.
func (u *upstream) refreshAs(ctx context.Context, cs *mcp.ClientSession, started func()) error {
	if u.tenantKey != "" || u.inst.owner != nil {
		return nil // the shared instance publishes the server's items
	}
	asked := u.refreshAsked.Add(1)
	u.refreshMu.Lock()
	defer u.refreshMu.Unlock()
	if started != nil {
		started()
	}
	if u.refreshDone >= asked {
		return nil // a refresh that started after this one was asked for has published
	}
	start := u.refreshAsked.Load()
	if _, ok := ctx.Deadline(); !ok {
		// A refresh on list_changed; a connection's first listing has
		// the start timeout already.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, u.timeout())
		defer cancel()
	}
	l, err := u.list(ctx, cs)
	if err != nil {
		return err
	}
	u.g.publish(u, l)
	u.refreshDone = start
	return nil
}

// listChanged is the upstream's list_changed handler. The refresh runs
// on a goroutine of its own: the client's notification handlers run one
// at a time, and a call's answer waits behind them for its progress
// notifications, so a handler waiting on an upstream that never answers
// its listing would hold that upstream's calls too. A storm of
// notifications costs one refresh running and one waiting.
func (u *upstream) listChanged(ctx context.Context, cs *mcp.ClientSession) {
	if u.refreshQueued.Swap(true) {
		return // one waiting already; it will list after this change
	}
	go func() {
		if err := u.refreshAs(ctx, cs, func() { u.refreshQueued.Store(false) }); err != nil && ctx.Err() == nil {
			u.logger.Warn("gateway: could not list the upstream again after it changed; keeping what it published before", "error", err)
		}
	}()
}

// optional lists one optional kind (prompts, resources, templates). The
// failure of the server to list it leaves the kind empty and is logged,
// once for as long as it lasts, and tried again with backoff (or on
// list_changed); what takes the whole listing down is only what says the
// session cannot go on: its end, the refresh's deadline, the bounds.
func (u *upstream) optional(ctx context.Context, kind string, list func() error) error {
	err := list()
	if err == nil {
		u.mu.Lock()
		delete(u.optionalFailed, kind)
		u.mu.Unlock()
		return nil
	}
	if ctx.Err() != nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, mcp.ErrSessionClosed) || errors.Is(err, errListBound) {
		return err
	}
	u.mu.Lock()
	if u.optionalFailed == nil {
		u.optionalFailed = map[string]time.Duration{}
	}
	wait, seen := u.optionalFailed[kind]
	wait = min(max(2*wait, 30*time.Second), 30*time.Minute)
	u.optionalFailed[kind] = wait
	cs := u.cs
	u.mu.Unlock()
	if !seen {
		u.logger.Warn("gateway: the upstream could not list its "+kind+"; serving its other items without them, and trying again later", "error", err, "retry_in", wait)
	}
	if cs != nil {
		time.AfterFunc(wait, func() {
			if u.currentSession() == cs {
				u.listChanged(context.Background(), cs)
			}
		})
	}
	return nil
}

// errListBound marks a listing past maxListItems or maxListBytes.
var errListBound = errors.New("a listing bound was reached")

// currentSession is the upstream's live session, or nil.
func (u *upstream) currentSession() *mcp.ClientSession {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.cs
}

// listing is what one refresh read, as the gateway would publish it
// before the definition pins have their say (pinning.go).
type listing struct {
	cat       *catalog
	tools     []*mcp.Tool // as published
	sources   []toolSource
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

// toolSource is a published tool as its upstream defined it: what pins
// cover, and what a pinned definition is published from again.
type toolSource struct {
	tool  *mcp.Tool // the upstream's
	tasks string    // its task support (taskSupport)
	// The pin's view of it, worked out once per listing.
	def     pins.Definition
	hash    string
	flagged []pins.Finding
}

// listBudget bounds one kind of a listing; every published item passes
// through take, which also adds it to the catalog's digest.
type listBudget struct {
	u                  *upstream
	kind               string
	items, bytes       int
	maxItems, maxBytes int
	sum                hash.Hash
}

func (u *upstream) budget(kind string, sum hash.Hash) *listBudget {
	b := &listBudget{u: u, kind: kind, maxItems: u.cfg.MaxListItems, maxBytes: u.cfg.MaxListBytes, sum: sum}
	if b.maxItems <= 0 {
		b.maxItems = config.DefaultMaxListItems
	}
	if b.maxBytes <= 0 {
		b.maxBytes = config.DefaultMaxListBytes
	}
	return b
}

func (b *listBudget) take(item any) error {
	data, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("%s: %w", b.kind, err)
	}
	b.items++
	b.bytes += len(data)
	switch {
	case b.items > b.maxItems:
		return fmt.Errorf("%w: the server listed more than %d %s, the most the gateway reads (maxListItems); raise maxListItems for this server if it really offers that many", errListBound, b.maxItems, b.kind)
	case b.bytes > b.maxBytes:
		return fmt.Errorf("%w: the server's %s take more than %d bytes, the most the gateway reads (maxListBytes); raise maxListBytes for this server if they really are that large", errListBound, b.kind, b.maxBytes)
	}
	b.sum.Write(data)
	b.sum.Write([]byte{'\n'})
	return nil
}

// list reads everything the upstream offers, within the budgets.
func (u *upstream) list(ctx context.Context, cs *mcp.ClientSession) (*listing, error) {
	caps := cs.InitializeResult().Capabilities
	pol := u.cfg.Tools
	name := u.cfg.Name
	sum := sha256.New()
	l := &listing{cat: &catalog{tools: map[string]string{}, tasks: map[string]string{}, resend: map[string]bool{}, prompts: map[string]string{}}}
	cat := l.cat
	if caps.Tools != nil {
		b := u.budget("tools", sum)
		for t, err := range cs.Tools(ctx) {
			if err != nil {
				return nil, err
			}
			if !allowed(t.Name, pol.Allow, pol.Deny) {
				continue
			}
			orig := t.Name
			local := orig
			if r, ok := pol.Rename[orig]; ok {
				local = r
			}
			pub := u.g.publishName(name, local)
			if prev, dup := cat.tools[pub]; dup {
				u.logger.Error("gateway: two tools of the upstream publish the same name; keeping the first", "name", pub, "kept", prev, "dropped", orig)
				continue
			}
			if isMetaTool(pub) {
				// The gateway's own name wins, in every listing mode: a
				// tool published over it would break tool search.
				u.logger.Error("gateway: a tool name collides with one of the gateway's tool search tools; rename it in the configuration", "name", pub, "tool", orig)
				continue
			}
			ts := taskSupport(cs, t)
			c := u.shapeTool(t, pub, ts)
			if err := b.take(c); err != nil {
				return nil, err
			}
			if ts != mcp.TaskSupportForbidden {
				cat.tasks[pub] = ts
			}
			cat.tools[pub] = orig
			if a := t.Annotations; a != nil && (a.ReadOnlyHint || a.IdempotentHint) {
				cat.resend[pub] = true
			}
			l.tools = append(l.tools, c)
			l.sources = append(l.sources, toolSource{tool: t, tasks: ts})
		}
	}
	// The other kinds are optional: one that fails (a server that
	// declares resources but answers resources/list with -32601, or
	// fails inside) is left empty for this server, and the tools stay.
	if caps.Prompts != nil {
		err := u.optional(ctx, "prompts", func() error {
			var ps []*mcp.Prompt
			names := map[string]string{}
			b := u.budget("prompts", sum)
			for p, err := range cs.Prompts(ctx) {
				if err != nil {
					return err
				}
				c := *p
				c.Name = u.g.publishName(name, p.Name)
				c.Meta = foreignMeta(p.Meta)
				if _, dup := names[c.Name]; dup {
					continue
				}
				if err := b.take(&c); err != nil {
					return err
				}
				names[c.Name] = p.Name
				ps = append(ps, &c)
			}
			maps.Copy(cat.prompts, names)
			l.prompts = ps
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if caps.Resources != nil {
		err := u.optional(ctx, "resources", func() error {
			var rs []*mcp.Resource
			var uris []string
			b := u.budget("resources", sum)
			for r, err := range cs.Resources(ctx) {
				if err != nil {
					return err
				}
				c := *r
				c.URI = publishURI(name, r.URI)
				c.Meta = foreignMeta(r.Meta)
				if err := b.take(&c); err != nil {
					return err
				}
				uris = append(uris, c.URI)
				rs = append(rs, &c)
			}
			cat.resources, l.resources = uris, rs
			return nil
		})
		if err != nil {
			return nil, err
		}
		err = u.optional(ctx, "resource templates", func() error {
			var ts []*mcp.ResourceTemplate
			var uris []string
			b := u.budget("resource templates", sum)
			for t, err := range cs.ResourceTemplates(ctx) {
				if err != nil {
					return err
				}
				c := *t
				c.URITemplate = publishURI(name, t.URITemplate)
				c.Meta = foreignMeta(t.Meta)
				if err := b.take(&c); err != nil {
					return err
				}
				uris = append(uris, c.URITemplate)
				ts = append(ts, &c)
			}
			cat.templates, l.templates = uris, ts
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	copy(cat.sum[:], sum.Sum(nil))
	return l, nil
}

// shapeTool is an upstream's tool t as the gateway publishes it under
// the name pub, with the configuration's description and _meta.
func (u *upstream) shapeTool(t *mcp.Tool, pub, tasks string) *mcp.Tool {
	pol := u.cfg.Tools
	c := *t
	c.Name, c.Unvalidated, c.Execution = pub, true, nil
	if tasks != mcp.TaskSupportForbidden {
		// The gateway runs the upstream's task itself (a plain call
		// waits for it), so a client may ask for a task of the gateway's
		// or not: optional either way.
		c.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
	}
	if d, ok := pol.Descriptions[t.Name]; ok {
		c.Description = d
	}
	// The gateway's _meta namespace is the operator's: what the upstream
	// put there is dropped, and only the configuration writes it.
	c.Meta = foreignMeta(t.Meta)
	if m, ok := pol.Meta[t.Name]; ok {
		meta := maps.Clone(c.Meta)
		if meta == nil {
			meta = mcp.Meta{}
		}
		meta[MetaTool] = m
		c.Meta = meta
	}
	return &c
}

// gatewayMeta is the prefix of the _meta keys that belong to the gateway.
const gatewayMeta = "io.mcpgate/"

// foreignMeta is an upstream's _meta without the gateway's keys.
func foreignMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k := range m {
		if strings.HasPrefix(k, gatewayMeta) {
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
		}
	}
	if out == nil {
		return m
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// publish replaces what u published with a new listing, as the
// definition pins decide (pinning.go): the gateway's maps change under
// its lock in one pass, the server's registries in one batch per kind,
// outside it. Names another server publishes already are left out.
// Publications of one upstream (and its withdrawal) run one at a time.
func (g *Gateway) publish(u *upstream, raw *listing) {
	u.pubMu.Lock()
	defer u.pubMu.Unlock()
	u.raw = raw
	g.publishLocked(u, g.applyPins(u, raw))
}

// republish publishes u's last listing again, for the pins to decide
// anew (after an approval); nothing when u is withdrawn.
func (g *Gateway) republish(u *upstream) {
	u.pubMu.Lock()
	defer u.pubMu.Unlock()
	if u.raw != nil {
		g.publishLocked(u, g.applyPins(u, u.raw))
	}
}

func (g *Gateway) publishLocked(u *upstream, l *listing) {
	cat := l.cat
	g.mu.Lock()
	if g.upstreams[u.cfg.Name] != u {
		g.mu.Unlock()
		return // stopped by a reload while it listed
	}
	old := u.catalog
	if old != nil && old.sum == cat.sum {
		u.catalog = cat
		g.mu.Unlock()
		return // nothing changed: no list_changed for the clients
	}
	tools := l.tools[:0:0]
	for _, t := range l.tools {
		if other := g.toolOwner[t.Name]; other != nil && other != u {
			u.logger.Error("gateway: a tool name collides with another server's; rename it in the configuration", "name", t.Name, "other", other.cfg.Name)
			delete(cat.tools, t.Name)
			delete(cat.tasks, t.Name)
			continue
		}
		g.toolOwner[t.Name] = u
		delete(g.downTools, t.Name)
		tools = append(tools, t)
	}
	for name, du := range g.downTools {
		if du.cfg.Name == u.cfg.Name {
			// Gone from the server's list since it was down: a tool the
			// server no longer has is unknown now.
			if _, ok := cat.tools[name]; !ok {
				delete(g.downTools, name)
			}
		}
	}
	prompts := l.prompts[:0:0]
	for _, p := range l.prompts {
		if other := g.promptOwner[p.Name]; other != nil && other != u {
			delete(cat.prompts, p.Name)
			continue
		}
		g.promptOwner[p.Name] = u
		prompts = append(prompts, p)
	}
	u.catalog = cat
	var goneTools, gonePrompts, goneResources, goneTemplates []string
	if old != nil {
		for pub := range old.tools {
			if _, ok := cat.tools[pub]; !ok {
				goneTools = append(goneTools, pub)
				delete(g.toolOwner, pub)
			}
		}
		for pub := range old.prompts {
			if _, ok := cat.prompts[pub]; !ok {
				gonePrompts = append(gonePrompts, pub)
				delete(g.promptOwner, pub)
			}
		}
		goneResources = without(old.resources, cat.resources)
		goneTemplates = without(old.templates, cat.templates)
	}
	g.mu.Unlock()
	g.indexTools(u.cfg.Name, tools)
	if err := g.server.UpdateTools(goneTools, tools, g.callTool); err != nil {
		g.logger.Error("gateway: could not publish the upstream's tools", "upstream", u.cfg.Name, "error", err)
	}
	if err := g.server.UpdatePrompts(gonePrompts, prompts, g.getPrompt); err != nil {
		u.logger.Warn("gateway: could not publish the upstream's prompts", "error", err)
	}
	if err := g.server.UpdateResources(goneResources, l.resources, g.readResource); err != nil {
		u.logger.Warn("gateway: could not publish the upstream's resources", "error", err)
	}
	if err := g.server.UpdateResourceTemplates(goneTemplates, l.templates, g.readResource); err != nil {
		u.logger.Warn("gateway: skipped resource templates", "error", err)
	}
}

// withdraw unpublishes everything of an upstream; the others stay. The
// tools of one that is down (not gone) are remembered in downTools, so a
// call of one is told that its server is unavailable and to retry, not
// that the tool does not exist.
func (g *Gateway) withdraw(u *upstream, gone bool) {
	u.pubMu.Lock()
	defer u.pubMu.Unlock()
	u.raw = nil
	g.mu.Lock()
	old := u.catalog
	u.catalog = nil
	if old != nil {
		for pub := range old.tools {
			if g.toolOwner[pub] == u {
				delete(g.toolOwner, pub)
				if !gone {
					g.downTools[pub] = u
				}
			}
		}
		for pub := range old.prompts {
			if g.promptOwner[pub] == u {
				delete(g.promptOwner, pub)
			}
		}
	}
	if gone {
		for name, du := range g.downTools {
			if du == u {
				delete(g.downTools, name)
			}
		}
	}
	g.mu.Unlock()
	if old == nil {
		return
	}
	g.search.SetServer(u.cfg.Name, nil)
	g.server.UpdateTools(mapKeys(old.tools), nil, nil)
	g.server.RemovePrompts(mapKeys(old.prompts)...)
	g.server.RemoveResources(old.resources...)
	g.server.RemoveResourceTemplates(old.templates...)
	if gone {
		u.logger.Info("gateway: removed the upstream's tools", "tools", len(old.tools))
		return
	}
	u.logger.Warn("gateway: withdrew the upstream's tools until it recovers", "tools", len(old.tools))
}

// without returns the items of a that b lacks, in linear time.
func without(a, b []string) []string {
	in := make(map[string]struct{}, len(b))
	for _, x := range b {
		in[x] = struct{}{}
	}
	var out []string
	for _, x := range a {
		if _, ok := in[x]; !ok {
			out = append(out, x)
		}
	}
	return out
}

func mapKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// taskServerDecides is the task support of a 2026-07-28 upstream's tool
// when the upstream has the tasks extension: tools declare nothing, and
// the server decides, call by call, for callers that declare it.
const taskServerDecides = "server decides"

// taskSupport is how the upstream runs a tool: a 2025-11-25 tool says,
// a 2026-07-28 server with the tasks extension decides.
func taskSupport(cs *mcp.ClientSession, t *mcp.Tool) string {
	if cs.ProtocolVersion() == mcp.Version20260728 {
		if _, ok := cs.InitializeResult().Capabilities.Extensions[mcp.ExtensionTasks]; ok {
			return taskServerDecides
		}
		return mcp.TaskSupportForbidden
	}
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return mcp.TaskSupportForbidden
	}
	return t.Execution.TaskSupport
}
