package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Tool describes a tool. InputSchema and OutputSchema may be any value
// that encodes as a JSON Schema object (a map, a json.RawMessage, a
// []byte or string of JSON text); AddTool infers both from Go types when
// they are nil.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  any              `json:"inputSchema"`
	OutputSchema any              `json:"outputSchema,omitzero"`
	Annotations  *ToolAnnotations `json:"annotations,omitzero"`
	Icons        []Icon           `json:"icons,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitzero"`
	Meta         Meta             `json:"_meta,omitempty"`

	// TaskAfter, for a tool that may run as a task, is how long a call of
	// a client of the tasks extension (2026-07-28) runs before it is
	// answered with a task. Zero makes the task before the handler runs.
	// Input the handler asks for within that time is gathered with the
	// call itself, round by round, as the extension recommends; a handler
	// that ends within it answers directly. Not sent to clients.
	TaskAfter time.Duration `json:"-"`

	// Unvalidated leaves the arguments unchecked here and the schemas
	// uncompiled: for a proxy, whose upstream owns the schemas and
	// validates the call itself (a schema this engine cannot compile is
	// then no reason to hide the tool). The schemas must still be JSON
	// objects. Not sent to clients.
	Unvalidated bool `json:"-"`
}

// ToolAnnotations are hints about a tool's behaviour. Clients treat them
// as untrusted unless they trust the server.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitzero"`
	DestructiveHint *bool  `json:"destructiveHint,omitzero"`
	IdempotentHint  bool   `json:"idempotentHint,omitzero"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitzero"`
}

// ToolExecution says how a tool may be run (2025-11-25).
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"` // forbidden, optional or required
}

// CallToolParams are the params of tools/call.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitzero"`
	// Task asks a 2025-11-25 server to run the call as a task.
	Task *TaskParams `json:"task,omitzero"`
	Meta Meta        `json:"_meta,omitempty"`
}

// CallToolResult is the result of tools/call.
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitzero"`
	IsError           bool      `json:"isError,omitzero"`
	Meta              Meta      `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes a result, including its content blocks.
func (r *CallToolResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Content           []jsontext.Value `json:"content"`
		StructuredContent any              `json:"structuredContent"`
		IsError           bool             `json:"isError"`
		Meta              Meta             `json:"_meta"`
	}
	if err := jsonv2.Unmarshal(b, &w, jsontext.AllowInvalidUTF8(true)); err != nil {
		return err
	}
	content, err := decodeContents(w.Content)
	if err != nil {
		return err
	}
	*r = CallToolResult{Content: content, StructuredContent: w.StructuredContent, IsError: w.IsError, Meta: w.Meta}
	return nil
}

// ListToolsResult is the result of tools/list.
type ListToolsResult struct {
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

// ToolHandler handles tools/call for one tool. An error it returns becomes
// an isError result carrying the error's text, so the model can react; a
// *jsonrpc.Error is sent as a protocol error instead.
type ToolHandler func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error)

// CallToolRequest is a tools/call request with its decoded params.
type CallToolRequest struct {
	*Request
	Params *CallToolParams
}

// serverTool is a registered tool with what the hot path needs ready:
// the compiled input schema and the tool's encoding for each revision.
type serverTool struct {
	tool    *Tool
	handler ToolHandler
	input   *schema
	output  *schema
	// outputTrusted is set for typed tools, whose structured content is
	// encoded from the type the output schema was derived from.
	outputTrusted bool
	encodings     [rev20260728 + 1]jsontext.Value
	// paramHeaders are the input schema's x-mcp-header annotations,
	// checked once here rather than on every call.
	paramHeaders []paramHeader
}

// AddTool registers a tool with a handler that receives the raw
// arguments. The input schema is required and is checked against the
// JSON Schema dialect it names (2020-12 by default); arguments are
// validated against it before h runs. A tool with the same name is
// replaced.
func (s *Server) AddTool(t *Tool, h ToolHandler) error {
	st, err := newServerTool(t, h)
	if err != nil {
		return err
	}
	s.tools.update([]*serverTool{st}, nil)
	s.countTaskTools()
	s.changed(notificationToolsListChanged)
	return nil
}

// RemoveTools unregisters the named tools.
func (s *Server) RemoveTools(names ...string) {
	if s.tools.update(nil, names) {
		s.countTaskTools()
		s.changed(notificationToolsListChanged)
	}
}

func newServerTool(t *Tool, h ToolHandler) (*serverTool, error) {
	return newServerToolInferred(t, h, false, false)
}

// newServerToolInferred is newServerTool for a tool whose input or output
// schema (as the flags say) was inferred from Go types: valid by
// construction, its validator is compiled when first needed.
func newServerToolInferred(t *Tool, h ToolHandler, inferredIn, inferredOut bool) (*serverTool, error) {
	if t == nil || h == nil {
		return nil, errors.New("mcp: AddTool needs a tool and a handler")
	}
	if err := ValidateToolName(t.Name); err != nil {
		return nil, err
	}
	if t.InputSchema == nil {
		return nil, fmt.Errorf("mcp: tool %q has no input schema; use {\"type\":\"object\"} for a tool without parameters", t.Name)
	}
	if t.Unvalidated {
		return newUnvalidatedTool(t, h)
	}
	compile := func(v any, inferred bool) (*schema, error) {
		if raw, ok := v.(jsontext.Value); ok && inferred {
			return inferredSchema(raw)
		}
		return compileSchema(v, true)
	}
	in, err := compile(t.InputSchema, inferredIn)
	if err != nil {
		return nil, fmt.Errorf("mcp: tool %q: input schema: %w", t.Name, err)
	}
	st := &serverTool{tool: t, handler: h, input: in}
	if bytes.Contains(in.raw, []byte(`"x-mcp-header"`)) {
		// An invalid annotation makes the whole tool invalid (2026-07-28):
		// clients would drop it, so it is refused here, where the author
		// sees why.
		var schema any
		if err := unmarshalValue(in.raw, &schema); err == nil {
			if st.paramHeaders, err = toolParamHeaders(schema); err != nil {
				return nil, fmt.Errorf("mcp: tool %q: %w", t.Name, err)
			}
		}
	}
	if t.OutputSchema != nil {
		if st.output, err = compile(t.OutputSchema, inferredOut); err != nil {
			return nil, fmt.Errorf("mcp: tool %q: output schema: %w", t.Name, err)
		}
	}
	for r := rev20241105; r <= rev20260728; r++ {
		b, err := marshal(toolForRevision(t, r, in, st.output))
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q cannot be encoded: %w", t.Name, err)
		}
		st.encodings[r] = b
	}
	return st, nil
}

// newUnvalidatedTool registers t with its schemas as they are.
func newUnvalidatedTool(t *Tool, h ToolHandler) (*serverTool, error) {
	raw, err := schemaJSON(t.InputSchema)
	if err != nil || len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("mcp: tool %q: the input schema must be a JSON object", t.Name)
	}
	st := &serverTool{tool: t, handler: h, input: &schema{raw: raw, trivial: true}, outputTrusted: true}
	if t.OutputSchema != nil {
		out, err := schemaJSON(t.OutputSchema)
		if err != nil || len(out) == 0 || out[0] != '{' {
			return nil, fmt.Errorf("mcp: tool %q: the output schema must be a JSON object", t.Name)
		}
		st.output = &schema{raw: out, trivial: true}
	}
	for r := rev20241105; r <= rev20260728; r++ {
		b, err := marshal(toolForRevision(t, r, st.input, st.output))
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q cannot be encoded: %w", t.Name, err)
		}
		st.encodings[r] = b
	}
	return st, nil
}

// UpdateTools removes the named tools and adds others with handler h, as
// one change: one list_changed, one rebuild of the registry. For servers
// whose tools come and go in groups, such as a gateway's upstreams. An
// invalid tool fails the whole update, and nothing changes.
func (s *Server) UpdateTools(remove []string, add []*Tool, h ToolHandler) error {
	sts := make([]*serverTool, 0, len(add))
	for _, t := range add {
		st, err := newServerTool(t, h)
		if err != nil {
			return err
		}
		sts = append(sts, st)
	}
	if s.tools.update(sts, remove) {
		s.countTaskTools()
		s.changed(notificationToolsListChanged)
	}
	return nil
}

// ValidateToolName checks a name against the spec's rules: 1 to 128
// characters from A-Z, a-z, 0-9, '_', '-' and '.'.
func ValidateToolName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("mcp: tool name %q must have 1 to 128 characters", truncateString(name, 40))
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return fmt.Errorf("mcp: tool name %q has the character %q; use only letters, digits, '_', '-' and '.'", name, c)
		}
	}
	return nil
}

// toolForRevision returns the definition a client of revision r
// understands, with the schemas in their compiled JSON form.
func toolForRevision(t *Tool, r revision, in, out *schema) *Tool {
	c := *t
	c.InputSchema = in.raw
	if out != nil {
		c.OutputSchema = out.raw
	}
	if !r.structuredOutput() {
		c.OutputSchema = nil
	}
	if !r.titles() {
		c.Title = ""
	}
	if !r.toolAnnotations() {
		c.Annotations = nil
	}
	if !r.metaOnDefinitions() {
		c.Meta = nil
	}
	if !r.icons() {
		c.Icons, c.Execution = nil, nil
	}
	if r == rev20260728 {
		// execution.taskSupport is 2025-11-25 only: with the tasks
		// extension the server decides per call.
		c.Execution = nil
	}
	return &c
}

func (s *Server) listTools(ctx context.Context, req *Request) (any, error) {
	var p PaginatedParams
	if err := unmarshalParams(req.RawParams, &p); err != nil {
		return nil, err
	}
	items, next, err := s.tools.page(p.Cursor, s.opts.PageSize)
	if err != nil {
		return nil, err
	}
	if s.opts.Filter != nil {
		items = slices.DeleteFunc(slices.Clone(items), func(t *serverTool) bool { return !s.visible(ctx, KindTool, t.tool.Name) })
	}
	// The page is assembled from each tool's cached encoding.
	n := 16 + len(next)
	for _, t := range items {
		n += len(t.encodings[req.rev]) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"tools":[`...)
	for i, t := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, t.encodings[req.rev]...)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":`...)
		b, _ = jsontext.AppendQuote(b, next)
	}
	b = append(b, '}')
	return encoded(b), nil
}

func (s *Server) callTool(ctx context.Context, req *Request) (any, error) {
	// The params and the handler's request in one allocation.
	call := &struct {
		req CallToolRequest
		p   CallToolParams
	}{req: CallToolRequest{Request: req}}
	call.req.Params = &call.p
	p := &call.p
	if err := unmarshalParams(req.RawParams, p); err != nil {
		return nil, err
	}
	if p.Name == "" {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: name is required; call tools/list to see the available tools")
	}
	st, ok := s.tools.get(p.Name)
	if !ok || !s.visible(ctx, KindTool, p.Name) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: unknown tool %q; call tools/list to see the available tools", truncateString(p.Name, 128))
	}
	if len(p.Arguments) > 0 && p.Arguments[0] == 'n' {
		p.Arguments = nil // null arguments are no arguments
	}
	if len(p.Arguments) > 0 && p.Arguments[0] != '{' {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: arguments must be an object, not %s", kindName(jsontext.Kind(p.Arguments[0])))
	}
	if problems := st.input.validate(p.Arguments); problems != "" {
		// Input validation failures are tool errors, so the model sees
		// what to fix (the 2025-11-25 rule, safe for older clients too).
		return errorResult(fmt.Sprintf("Invalid arguments for tool %q: %s", p.Name, problems)), nil
	}
	mode, err := s.taskModeFor(req, st, p)
	if err != nil {
		return nil, err
	}
	if mode == runTask {
		return s.callToolTask(ctx, req, st, p)
	}
	res, err := st.handler(ctx, &call.req)
	return s.finishToolCall(ctx, req, st, p, res, err)
}

// finishToolCall turns what a tool handler returned into the call's
// answer: a plain error becomes an isError result the model can read.
func (s *Server) finishToolCall(ctx context.Context, req *Request, st *serverTool, p *CallToolParams, res *CallToolResult, err error) (any, error) {
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) || ctx.Err() != nil {
			return nil, err
		}
		return errorResult(err.Error()), nil
	}
	if res == nil {
		res = &CallToolResult{}
	}
	if st.output != nil && !st.outputTrusted && res.StructuredContent != nil && !res.IsError {
		if problems := st.output.validateValue(res.StructuredContent); problems != "" {
			s.logger.Error("mcp: tool result does not match its output schema", "tool", p.Name, "problems", problems)
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "Internal error: tool %q returned structured content that does not match its output schema", p.Name)
		}
	}
	return resultForRevision(res, req.rev), nil
}

// resultForRevision drops what a client of revision r cannot read.
func resultForRevision(res *CallToolResult, r revision) *CallToolResult {
	content, changed := contentForRevision(r, res.Content)
	if r.structuredOutput() && !changed {
		return res
	}
	c := *res
	c.Content = content
	if !r.structuredOutput() {
		c.StructuredContent = nil
	}
	return &c
}

func errorResult(text string) *CallToolResult {
	r := TextResult(text)
	r.IsError = true
	return r
}

// TextResult returns a result of one text block.
func TextResult(text string) *CallToolResult {
	// The result, its content slice and the block in one allocation, not
	// three: this is the result of most tool calls.
	x := &struct {
		r CallToolResult
		c [1]Content
		t TextContent
	}{t: TextContent{Text: text}}
	x.c[0] = &x.t
	x.r.Content = x.c[:]
	return &x.r
}

// ErrorResult returns an isError result of one text block, for a tool
// that failed in a way the model should see.
func ErrorResult(format string, args ...any) *CallToolResult {
	return errorResult(fmt.Sprintf(format, args...))
}
