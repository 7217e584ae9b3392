package gateway

import (
	"context"
	"fmt"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpgate/mcpgate/gateway/config"
	"github.com/mcpgate/mcpgate/mcp"
)

// listMiddleware shapes tools/list for callers who see some server in
// minimal or search mode; everyone else gets the engine's list as it is,
// at no cost.
func (g *Gateway) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, req *mcp.Request) (any, error) {
		select {
		case <-g.discovered: // the usual case: long over
		default:
			// A client that lists once, at once, sees every upstream.
			if listsTools(req) {
				g.awaitDiscovery(ctx)
			}
		}
		if req.Method != "tools/list" {
			return next(ctx, req)
		}
		res, err := next(ctx, req)
		if err != nil {
			return res, err
		}
		if minimal, search := g.listings(ctx); !minimal && !search {
			return res, nil
		}
		return g.shapeList(ctx, res)
	}
}

// listsTools reports whether a request lists what the upstreams offer:
// a list, tool search, or a meta-tool.
func listsTools(req *mcp.Request) bool {
	switch req.Method {
	case "tools/list", "prompts/list", "resources/list", "resources/templates/list", MethodDiscover:
		return true
	case "tools/call":
		call, _ := calledTool(req.RawParams)
		return isMetaTool(call.Name)
	}
	return false
}

// shapeList rewrites one page of tools/list: minimal-mode tools lose
// their schemas and all but a line of description, search-mode tools
// that are not pinned are left out (the meta-tools find them).
func (g *Gateway) shapeList(ctx context.Context, res any) (any, error) {
	data, err := jsonv2.Marshal(res)
	if err != nil {
		return nil, err
	}
	var page struct {
		Tools      []jsontext.Value `json:"tools"`
		NextCursor string           `json:"nextCursor,omitempty"`
	}
	if err := jsonv2.Unmarshal(data, &page, jsonv2.RejectUnknownMembers(false)); err != nil {
		return nil, err
	}
	out := make([]any, 0, len(page.Tools))
	modes := map[string]string{} // by server, for this page
	for _, raw := range page.Tools {
		var head struct {
			Name        string               `json:"name"`
			Title       string               `json:"title,omitempty"`
			Description string               `json:"description,omitempty"`
			Annotations *mcp.ToolAnnotations `json:"annotations,omitzero"`
		}
		if jsonv2.Unmarshal(raw, &head, jsonv2.RejectUnknownMembers(false)) != nil {
			out = append(out, raw)
			continue
		}
		u := g.owner(head.Name)
		if u == nil { // the gateway's own tools, meta-tools included
			out = append(out, raw)
			continue
		}
		mode, ok := modes[u.cfg.Name]
		if !ok {
			mode = g.listingFor(ctx, u.cfg.Name)
			modes[u.cfg.Name] = mode
		}
		switch mode {
		case config.ListingSearch:
			if g.pinned(head.Name) {
				out = append(out, raw)
			}
		case config.ListingMinimal:
			out = append(out, minimalTool{
				Name: head.Name, Title: head.Title, Description: firstLine(head.Description), Annotations: head.Annotations,
				InputSchema: map[string]any{"type": "object"},
				Meta:        mcp.Meta{MetaSchema: "deferred"},
			})
		default:
			out = append(out, raw)
		}
	}
	return struct {
		Tools      []any  `json:"tools"`
		NextCursor string `json:"nextCursor,omitempty"`
	}{out, page.NextCursor}, nil
}

// minimalTool is a tool as a minimal listing shows it. The input schema
// stays (the spec requires one) but says only "an object"; the real one
// is a tools/getSchema (or describe_tool) away.
type minimalTool struct {
	Name        string               `json:"name"`
	Title       string               `json:"title,omitempty"`
	Description string               `json:"description,omitempty"`
	InputSchema map[string]any       `json:"inputSchema"`
	Annotations *mcp.ToolAnnotations `json:"annotations,omitzero"`
	Meta        mcp.Meta             `json:"_meta,omitempty"`
}

// firstLine is a description's first sentence, at most 160 characters.
func firstLine(desc string) string {
	desc = strings.TrimSpace(desc)
	end := len(desc)
	for i := 0; i < len(desc); i++ {
		if desc[i] == '\n' || (desc[i] == '.' && (i+1 == len(desc) || desc[i+1] == ' ' || desc[i+1] == '\n')) {
			end = i
			if desc[i] == '.' {
				end++
			}
			break
		}
	}
	s := strings.Join(strings.Fields(desc[:end]), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// examplesOf returns a tool's configured examples, or one built from its
// schema: each required parameter with its example, default, first enum
// value or a placeholder of its type.
func examplesOf(t *mcp.Tool) []any {
	if meta, ok := t.Meta[MetaTool].(map[string]any); ok {
		if ex, ok := meta["examples"].([]any); ok && len(ex) > 0 {
			return ex
		}
	}
	schema, _ := t.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	required := requiredSet(schema)
	ex := map[string]any{}
	for name, p := range props {
		if !required[name] {
			continue
		}
		ex[name] = placeholder(p)
	}
	return []any{ex}
}

// requiredSet is the names a schema's "required" lists.
func requiredSet(schema map[string]any) map[string]bool {
	out := map[string]bool{}
	req, _ := schema["required"].([]any)
	for _, r := range req {
		if s, ok := r.(string); ok {
			out[s] = true
		}
	}
	return out
}

func placeholder(p any) any {
	m, _ := p.(map[string]any)
	if v, ok := m["examples"].([]any); ok && len(v) > 0 {
		return v[0]
	}
	for _, k := range []string{"example", "default", "const"} {
		if v, ok := m[k]; ok {
			return v
		}
	}
	if v, ok := m["enum"].([]any); ok && len(v) > 0 {
		return v[0]
	}
	typ, _ := m["type"].(string)
	if ts, ok := m["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	switch typ {
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		return map[string]any{}
	default:
		return "<" + placeholderText(m["description"]) + ">"
	}
}

// placeholderText is a parameter's description cut short, or "string".
func placeholderText(desc any) string {
	s, _ := desc.(string)
	if s == "" {
		return "string"
	}
	if r := []rune(firstLine(s)); len(r) > 40 {
		return string(r[:40])
	}
	return firstLine(s)
}

// documentation renders a tool in Markdown: its description, then its
// parameters with type, whether required, and description.
func documentation(t *mcp.Tool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", t.Name)
	if t.Title != "" {
		fmt.Fprintf(&b, "%s\n\n", t.Title)
	}
	if t.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(t.Description))
	}
	schema, _ := t.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if len(props) == 0 {
		b.WriteString("No parameters.\n")
		return b.String()
	}
	required := requiredSet(schema)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	slices.Sort(names)
	b.WriteString("## Parameters\n\n")
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		typ, _ := p["type"].(string)
		desc, _ := p["description"].(string)
		req := "optional"
		if required[n] {
			req = "required"
		}
		fmt.Fprintf(&b, "- `%s` (%s, %s)", n, typeOr(typ), req)
		if desc != "" {
			fmt.Fprintf(&b, ": %s", strings.Join(strings.Fields(desc), " "))
		}
		if e, ok := p["enum"].([]any); ok {
			fmt.Fprintf(&b, " One of: %v.", e)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func typeOr(t string) string {
	if t == "" {
		return "any"
	}
	return t
}
