package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"path"
	"slices"
	"strings"

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
func (u *upstream) refresh(ctx context.Context, cs *mcp.ClientSession) error {
	if u.tenantKey != "" {
		return nil // the shared instance publishes the server's items
	}
	u.g.refreshMu.Lock()
	defer u.g.refreshMu.Unlock()
	caps := cs.InitializeResult().Capabilities
	pol := u.cfg.Tools
	name := u.cfg.Name
	cat := &catalog{tools: map[string]string{}, tasks: map[string]string{}, prompts: map[string]string{}}
	var tools []*mcp.Tool
	if caps.Tools != nil {
		for t, err := range cs.Tools(ctx) {
			if err != nil {
				return err
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
			if other := u.g.owner(pub); other != nil && other != u {
				u.logger.Error("gateway: a tool name collides with another server's; rename it in the configuration", "name", pub, "other", other.cfg.Name)
				continue
			}
			c := *t
			c.Name, c.Unvalidated, c.Execution = pub, true, nil
			if ts := taskSupport(cs, t); ts != mcp.TaskSupportForbidden {
				// The gateway runs the upstream's task itself (a plain
				// call waits for it), so a client may ask for a task of
				// the gateway's or not: optional either way.
				cat.tasks[pub] = ts
				c.Execution = &mcp.ToolExecution{TaskSupport: mcp.TaskSupportOptional}
			}
			if d, ok := pol.Descriptions[orig]; ok {
				c.Description = d
			}
			if m, ok := pol.Meta[orig]; ok {
				meta := mcp.Meta{}
				for k, v := range t.Meta {
					meta[k] = v
				}
				meta[MetaTool] = m
				c.Meta = meta
			}
			cat.tools[pub] = orig
			tools = append(tools, &c)
		}
	}
	var prompts []*mcp.Prompt
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx) {
			if err != nil {
				return err
			}
			c := *p
			c.Name = u.g.publishName(name, p.Name)
			if _, dup := cat.prompts[c.Name]; dup {
				continue
			}
			cat.prompts[c.Name] = p.Name
			prompts = append(prompts, &c)
		}
	}
	var resources []*mcp.Resource
	var templates []*mcp.ResourceTemplate
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx) {
			if err != nil {
				return err
			}
			c := *r
			c.URI = publishURI(name, r.URI)
			cat.resources = append(cat.resources, c.URI)
			resources = append(resources, &c)
		}
		for t, err := range cs.ResourceTemplates(ctx) {
			if err != nil {
				return err
			}
			c := *t
			c.URITemplate = publishURI(name, t.URITemplate)
			cat.templates = append(cat.templates, c.URITemplate)
			templates = append(templates, &c)
		}
	}
	b, _ := json.Marshal([]any{tools, prompts, resources, templates})
	cat.sum = sha256.Sum256(b)
	u.g.publish(u, cat, tools, prompts, resources, templates)
	return nil
}

// publish replaces what u published with a new catalog.
func (g *Gateway) publish(u *upstream, cat *catalog, tools []*mcp.Tool, prompts []*mcp.Prompt, resources []*mcp.Resource, templates []*mcp.ResourceTemplate) {
	g.mu.Lock()
	if g.upstreams[u.cfg.Name] != u {
		g.mu.Unlock()
		return // stopped by a reload while it listed
	}
	old := u.catalog
	u.catalog = cat
	if old != nil && old.sum == cat.sum {
		g.mu.Unlock()
		return // nothing changed: no list_changed for the clients
	}
	for pub := range cat.tools {
		g.toolOwner[pub] = u
	}
	for pub := range cat.prompts {
		g.promptOwner[pub] = u
	}
	var goneTools, gonePrompts []string
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
	}
	g.mu.Unlock()
	g.indexTools(u.cfg.Name, tools)
	if err := g.server.UpdateTools(goneTools, tools, g.callTool); err != nil {
		g.logger.Error("gateway: could not publish the upstream's tools", "upstream", u.cfg.Name, "error", err)
	}
	if len(gonePrompts) > 0 {
		g.server.RemovePrompts(gonePrompts...)
	}
	for _, p := range prompts {
		g.server.AddPrompt(p, g.getPrompt)
	}
	if old != nil {
		if gone := without(old.resources, cat.resources); len(gone) > 0 {
			g.server.RemoveResources(gone...)
		}
		if gone := without(old.templates, cat.templates); len(gone) > 0 {
			g.server.RemoveResourceTemplates(gone...)
		}
	}
	for _, r := range resources {
		g.server.AddResource(r, g.readResource)
	}
	for _, t := range templates {
		if err := g.server.AddResourceTemplate(t, g.readResource); err != nil {
			u.logger.Warn("gateway: skipped a resource template", "template", t.URITemplate, "error", err)
		}
	}
}

// withdraw unpublishes everything of a down upstream; the others stay.
func (g *Gateway) withdraw(u *upstream) {
	g.mu.Lock()
	old := u.catalog
	u.catalog = nil
	if old != nil {
		for pub := range old.tools {
			delete(g.toolOwner, pub)
		}
		for pub := range old.prompts {
			delete(g.promptOwner, pub)
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
	u.logger.Warn("gateway: withdrew the upstream's tools until it recovers", "tools", len(old.tools))
}

func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
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
	if cs.ProtocolVersion() == mcp.ModernVersion {
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
