package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/mcpgate/mcpgate/mcp"
	"github.com/mcpgate/mcpgate/toolsearch"
)

// The meta-tools give clients that know only tools/list and tools/call
// the whole catalog through three tools. Their definitions never change
// and name no other tool, so that a client's prompt cache of the tool
// list survives upstreams coming and going.
const (
	MetaSearchTools  = "search_tools"
	MetaDescribeTool = "describe_tool"
	MetaCallTool     = "call_tool"
)

func isMetaTool(name string) bool {
	return name == MetaSearchTools || name == MetaDescribeTool || name == MetaCallTool
}

type searchToolsIn struct {
	Query string `json:"query" jsonschema:"maxLength=4096" jsonschema_description:"What you want to do, in a few words (for example: create a GitHub issue)"`
	K     int    `json:"k,omitempty" jsonschema_description:"How many tools to return, 1 to 20 (default 5)"`
}

type describeToolIn struct {
	Name string `json:"name" jsonschema_description:"The tool's name, as search_tools gave it"`
}

type callToolIn struct {
	Name      string         `json:"name" jsonschema_description:"The tool's name, as search_tools gave it"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema_description:"The tool's arguments, as its input schema describes them"`
}

// foundTool is a tool as the meta-tools show it: what a model needs to
// call it.
type foundTool struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	InputSchema any      `json:"inputSchema"`
	Related     []string `json:"related,omitempty"`
}

type foundTools struct {
	Tools []foundTool `json:"tools"`
}

func (g *Gateway) addMetaTools() error {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}
	var err error
	add := func(f func() error) {
		if err == nil {
			err = f()
		}
	}
	add(func() error {
		return addTool(g.server, &mcp.Tool{
			Name:        MetaSearchTools,
			Title:       "Search tools",
			Description: "Find the tools that can do something. Returns the best matching tools with their full input schemas; call one with call_tool. Search again with other words if none fits.",
			Annotations: readOnly,
		}, g.searchTools)
	})
	add(func() error {
		return addTool(g.server, &mcp.Tool{
			Name:        MetaDescribeTool,
			Title:       "Describe a tool",
			Description: "Get a tool's full definition (description and input schema) by name.",
			Annotations: readOnly,
		}, g.describeTool)
	})
	add(func() error {
		return addTool(g.server, &mcp.Tool{
			Name:        MetaCallTool,
			Title:       "Call a tool",
			Description: "Call a tool found with search_tools, by name, with arguments that follow its input schema. Returns the tool's own result.",
		}, g.callToolMeta)
	})
	return err
}

func (g *Gateway) searchTools(ctx context.Context, req *mcp.CallToolRequest, in searchToolsIn) (*mcp.CallToolResult, foundTools, error) {
	k := in.K
	switch {
	case k <= 0:
		k = 5
	case k > 20:
		k = 20
	}
	allow := g.allowFor(ctx)
	// The search is a span of its own under the call's; the query is an
	// argument, so it is not recorded.
	sctx, span := g.tracing.start(ctx, spanToolSearch, attrSearchK.Int(k))
	hits := g.rankTools(sctx, toolsearch.Query{Text: in.Query, K: k, Allow: func(n string) bool { return !isMetaTool(n) && allow(n) }})
	span.SetAttributes(attrSearchHits.Int(len(hits)))
	g.tracing.end(span)
	g.searched(ctx, req.Request, in.Query, hits)
	out := foundTools{Tools: make([]foundTool, 0, len(hits))}
	for _, h := range hits {
		out.Tools = append(out.Tools, foundTool{Name: h.Name, Description: h.Tool.Description, InputSchema: h.Tool.InputSchema, Related: g.visibleNames(ctx, h.Related)})
	}
	if len(out.Tools) == 0 {
		return textResult(fmt.Sprintf("No tool matches %q. Try other words: what the tool acts on, or what it does.", in.Query)), out, nil
	}
	return nil, out, nil
}

func (g *Gateway) describeTool(ctx context.Context, req *mcp.CallToolRequest, in describeToolIn) (*mcp.CallToolResult, any, error) {
	t, err := g.lookupTool(ctx, in.Name)
	if err != nil || isMetaTool(in.Name) {
		return errResult(fmt.Sprintf("Unknown tool %q. Use search_tools to find tools and their names.", in.Name)), nil, nil
	}
	return nil, t, nil
}

// callToolMeta calls the named tool as tools/call would, after checking
// the arguments against the tool's real schema (its upstream checks them
// too, but a clear error here costs the model one turn less).
func (g *Gateway) callToolMeta(ctx context.Context, req *mcp.CallToolRequest, in callToolIn) (*mcp.CallToolResult, any, error) {
	if isMetaTool(in.Name) {
		return errResult(fmt.Sprintf("%s calls the tools that search_tools finds, not itself or the other search tools.", MetaCallTool)), nil, nil
	}
	t, err := g.lookupTool(ctx, in.Name)
	if err != nil {
		return errResult(fmt.Sprintf("Unknown tool %q. Use search_tools to find tools and their names.", in.Name)), nil, nil
	}
	// The arguments go on as the client wrote them (member order too).
	var raw struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := jsonv2.Unmarshal(req.Params.Arguments, &raw, jsonv2.RejectUnknownMembers(false)); err != nil {
		return nil, nil, err
	}
	args := raw.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if problems := g.validators.check(t, args); problems != "" {
		return errResult(fmt.Sprintf("Invalid arguments for tool %q: %s. Use describe_tool to see its input schema.", in.Name, problems)), nil, nil
	}
	// The inner call is a span of its own, the parent of the upstream hop.
	cctx, span := g.tracing.start(ctx, MetaCallTool+" "+in.Name, semconv.GenAIToolName(in.Name))
	res, err := g.callTool(cctx, &mcp.CallToolRequest{Request: req.Request, Params: &mcp.CallToolParams{Name: in.Name, Arguments: args}})
	g.tracing.endCall(span, res, err)
	return res, nil, err
}

// addTool registers a typed tool, turning AddTool's panic (a schema that
// cannot be derived) into an error.
func addTool[In, Out any](s *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gateway: meta-tool %s: %v", t.Name, p)
		}
	}()
	mcp.AddTool(s, t, h)
	return nil
}

// toolCall is the part of tools/call params the gateway reads itself.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

// calledTool reads the tool a tools/call calls and its arguments: for a
// call through call_tool, the tool it names (via), so that limits, logs
// and the audit record count the tool that runs.
func calledTool(params []byte) (call toolCall, via bool) {
	// Decoded on every call, so with the faster codec; a malformed
	// params leaves the name empty, and the handler says what is wrong.
	if len(params) > 0 {
		jsonv2.Unmarshal(params, &call, jsonv2.RejectUnknownMembers(false))
	}
	if call.Name != MetaCallTool {
		return call, false
	}
	var inner toolCall
	if len(call.Arguments) == 0 || jsonv2.Unmarshal(call.Arguments, &inner) != nil || inner.Name == "" {
		return call, false
	}
	return inner, true
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: true}
}

// validators compiles each tool's input schema once, for call_tool.
type validators struct {
	mu sync.Mutex
	m  map[*mcp.Tool]*mcp.InputValidator
}

func (v *validators) check(t *mcp.Tool, args json.RawMessage) string {
	v.mu.Lock()
	iv, ok := v.m[t]
	v.mu.Unlock()
	if !ok {
		var err error
		iv, err = mcp.NewInputValidator(t.InputSchema)
		if err != nil {
			iv = nil // a schema we cannot compile: the upstream judges
		}
		v.mu.Lock()
		if v.m == nil || len(v.m) > 1<<14 {
			v.m = map[*mcp.Tool]*mcp.InputValidator{} // tools are republished; forget old ones
		}
		v.m[t] = iv
		v.mu.Unlock()
	}
	if iv == nil {
		return ""
	}
	return iv.Validate(args)
}
