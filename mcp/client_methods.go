package mcp

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// serverCaps returns the server's declared capabilities and revision.
func (cs *ClientSession) serverCaps() (ServerCapabilities, revision) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.init == nil {
		return ServerCapabilities{}, cs.rev
	}
	return cs.init.Capabilities, cs.rev
}

// require fails a call the server declared no support for, naming what is
// missing, instead of sending it to be refused.
func (cs *ClientSession) require(method string) error {
	caps, rev := cs.serverCaps()
	var ok bool
	var what string
	switch method {
	case methodToolsList, methodToolsCall:
		ok, what = caps.Tools != nil, "tools"
	case methodResourcesList, methodResourceTemplatesList, methodResourcesRead:
		ok, what = caps.Resources != nil, "resources"
	case methodResourcesSubscribe, methodResourcesUnsubscribe:
		ok, what = caps.Resources != nil && caps.Resources.Subscribe, "resources.subscribe"
	case methodPromptsList, methodPromptsGet:
		ok, what = caps.Prompts != nil, "prompts"
	case methodLoggingSetLevel:
		ok, what = caps.Logging != nil, "logging"
	case methodCompletionComplete:
		// The completions capability arrived with 2025-03-26; before it
		// completion went with prompts or resources.
		if rev.completionsCap() {
			ok, what = caps.Completions != nil, "completions"
		} else {
			ok, what = caps.Prompts != nil || caps.Resources != nil, "prompts or resources (completion at 2024-11-05)"
		}
	default:
		return nil
	}
	if !ok {
		return fmt.Errorf("%w: %s needs the %s capability, which the server (protocol %s) did not declare", ErrNotSupported, method, what, rev)
	}
	return nil
}

// request is call for a method the server must have declared (see
// require).
func (cs *ClientSession) request(ctx context.Context, method string, params, result any, o callOptions) error {
	if err := cs.require(method); err != nil {
		return err
	}
	return cs.call(ctx, method, params, result, o)
}

// Ping checks that the server answers.
// A bare session is checked with tools/list, the one request such a
// server is known to answer.
func (cs *ClientSession) Ping(ctx context.Context) error {
	o := callerOptions(ctx)
	if cs.Bare() {
		return cs.pingBare(ctx, o)
	}
	if cs.isPerRequest() {
		// 2026-07-28 has no ping; discovery is the cheapest request. Nor
		// has it sessions to start again.
		o.reinit = false
		return cs.call(ctx, methodServerDiscover, nil, nil, o)
	}
	return cs.call(ctx, methodPing, nil, nil, o)
}

// ListTools returns one page of the server's tools.
func (cs *ClientSession) ListTools(ctx context.Context, p *PaginatedParams) (*ListToolsResult, error) {
	o := callerOptions(ctx)
	if cs.Bare() {
		return cs.listToolsBare(ctx, p, o)
	}
	var res ListToolsResult
	if err := cs.request(ctx, methodToolsList, p, &res, o); err != nil {
		return nil, err
	}
	if cs.isPerRequest() {
		cs.checkToolHeaders(&res)
	}
	return &res, nil
}

// checkToolHeaders drops the tools whose x-mcp-header annotations are
// invalid (the spec's rule for HTTP clients; one bad tool must not take
// the others with it) and remembers the others' annotations.
func (cs *ClientSession) checkToolHeaders(res *ListToolsResult) {
	kept := res.Tools[:0]
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.paramHeaders == nil {
		cs.paramHeaders = map[string][]paramHeader{}
	}
	for _, t := range res.Tools {
		hs, err := toolParamHeaders(t.InputSchema)
		if err != nil {
			cs.logger.Warn("mcp: ignoring a tool with an invalid x-mcp-header annotation", "tool", t.Name, "error", err)
			delete(cs.paramHeaders, t.Name)
			continue
		}
		if len(hs) > 0 {
			cs.paramHeaders[t.Name] = hs
		} else {
			delete(cs.paramHeaders, t.Name)
		}
		kept = append(kept, t)
	}
	res.Tools = kept
}

// Tools iterates over all the server's tools, page by page.
func (cs *ClientSession) Tools(ctx context.Context) iter.Seq2[*Tool, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) ([]*Tool, string, error) {
		res, err := cs.ListTools(ctx, cursorParams(cursor))
		if err != nil {
			return nil, "", err
		}
		return res.Tools, res.NextCursor, nil
	})
}

// CallTool calls a tool with arguments given as any value that encodes as
// a JSON object (a struct, a map, a json.RawMessage) or nil. A tool that
// failed comes back as a result with IsError set, not as an error.
func (cs *ClientSession) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	p := &CallToolParams{Name: name}
	if args != nil {
		b, err := marshal(args)
		if err != nil {
			return nil, fmt.Errorf("mcp: encoding the arguments of %s: %w", name, err)
		}
		p.Arguments = b
	}
	return cs.CallToolParams(ctx, p)
}

// CallToolParams is CallTool with the params spelled out (to set _meta).
func (cs *ClientSession) CallToolParams(ctx context.Context, p *CallToolParams) (*CallToolResult, error) {
	o := callerOptions(ctx)
	if cs.Bare() {
		return cs.callToolBare(ctx, p, o)
	}
	var res CallToolResult
	if !cs.isPerRequest() {
		if err := cs.request(ctx, methodToolsCall, p, &res, o); err != nil {
			return nil, err
		}
		return &res, nil
	}
	o.headers = cs.callHeaders(p)
	err := cs.request(ctx, methodToolsCall, p, &res, o)
	var ce *CallError
	if errors.As(err, &ce) && ce.Err.Code == CodeHeaderMismatch {
		// The tool's annotations changed, or were never listed: list
		// again and retry once, as the spec advises.
		for _, lerr := range cs.Tools(ctx) {
			if lerr != nil {
				return nil, err
			}
		}
		o.headers = cs.callHeaders(p)
		err = cs.request(ctx, methodToolsCall, p, &res, o)
	}
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// callHeaders returns the call's Mcp-Param-* headers, nil for none.
func (cs *ClientSession) callHeaders(p *CallToolParams) map[string]string {
	cs.mu.Lock()
	hs := cs.paramHeaders[p.Name]
	cs.mu.Unlock()
	if len(hs) == 0 || p.Arguments == nil {
		return nil
	}
	if h := paramHeaderValues(hs, p.Arguments); len(h) > 0 {
		return h
	}
	return nil
}

// ListResources returns one page of the server's resources.
func (cs *ClientSession) ListResources(ctx context.Context, p *PaginatedParams) (*ListResourcesResult, error) {
	var res ListResourcesResult
	if err := cs.request(ctx, methodResourcesList, p, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Resources iterates over all the server's resources.
func (cs *ClientSession) Resources(ctx context.Context) iter.Seq2[*Resource, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) ([]*Resource, string, error) {
		res, err := cs.ListResources(ctx, cursorParams(cursor))
		if err != nil {
			return nil, "", err
		}
		return res.Resources, res.NextCursor, nil
	})
}

// ListResourceTemplates returns one page of the server's resource
// templates.
func (cs *ClientSession) ListResourceTemplates(ctx context.Context, p *PaginatedParams) (*ListResourceTemplatesResult, error) {
	var res ListResourceTemplatesResult
	if err := cs.request(ctx, methodResourceTemplatesList, p, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// ResourceTemplates iterates over all the server's resource templates.
func (cs *ClientSession) ResourceTemplates(ctx context.Context) iter.Seq2[*ResourceTemplate, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) ([]*ResourceTemplate, string, error) {
		res, err := cs.ListResourceTemplates(ctx, cursorParams(cursor))
		if err != nil {
			return nil, "", err
		}
		return res.ResourceTemplates, res.NextCursor, nil
	})
}

// ReadResource reads a resource.
func (cs *ClientSession) ReadResource(ctx context.Context, uri string) (*ReadResourceResult, error) {
	var res ReadResourceResult
	if err := cs.request(ctx, methodResourcesRead, &ReadResourceParams{URI: uri}, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe asks for notifications/resources/updated about uri, delivered
// to ClientOptions.ResourceUpdatedHandler.
func (cs *ClientSession) Subscribe(ctx context.Context, uri string) error {
	if cs.isPerRequest() {
		return cs.subscribePerRequest(ctx, uri)
	}
	return cs.request(ctx, methodResourcesSubscribe, &ReadResourceParams{URI: uri}, nil, callerOptions(ctx))
}

// Unsubscribe undoes Subscribe.
func (cs *ClientSession) Unsubscribe(ctx context.Context, uri string) error {
	if cs.isPerRequest() {
		cs.unsubscribePerRequest(uri)
		return nil
	}
	return cs.request(ctx, methodResourcesUnsubscribe, &ReadResourceParams{URI: uri}, nil, callerOptions(ctx))
}

// ListPrompts returns one page of the server's prompts.
func (cs *ClientSession) ListPrompts(ctx context.Context, p *PaginatedParams) (*ListPromptsResult, error) {
	var res ListPromptsResult
	if err := cs.request(ctx, methodPromptsList, p, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Prompts iterates over all the server's prompts.
func (cs *ClientSession) Prompts(ctx context.Context) iter.Seq2[*Prompt, error] {
	return paginate(ctx, func(ctx context.Context, cursor string) ([]*Prompt, string, error) {
		res, err := cs.ListPrompts(ctx, cursorParams(cursor))
		if err != nil {
			return nil, "", err
		}
		return res.Prompts, res.NextCursor, nil
	})
}

// GetPrompt renders a prompt with its arguments.
func (cs *ClientSession) GetPrompt(ctx context.Context, name string, args map[string]string) (*GetPromptResult, error) {
	var res GetPromptResult
	if err := cs.request(ctx, methodPromptsGet, &GetPromptParams{Name: name, Arguments: args}, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// Complete asks for completions of a prompt's or resource template's
// argument.
func (cs *ClientSession) Complete(ctx context.Context, p *CompleteParams) (*CompleteResult, error) {
	var res CompleteResult
	if err := cs.request(ctx, methodCompletionComplete, p, &res, callerOptions(ctx)); err != nil {
		return nil, err
	}
	return &res, nil
}

// SetLoggingLevel asks the server to send log messages at level and
// above, delivered to ClientOptions.LoggingMessageHandler.
func (cs *ClientSession) SetLoggingLevel(ctx context.Context, level LoggingLevel) error {
	if cs.isPerRequest() {
		// No setLevel in 2026-07-28: each request names its level.
		if err := cs.require(methodLoggingSetLevel); err != nil {
			return err
		}
		cs.mu.Lock()
		cs.logLevel = level
		cs.mu.Unlock()
		return nil
	}
	return cs.request(ctx, methodLoggingSetLevel, &SetLevelParams{Level: level}, nil, callerOptions(ctx))
}

// NotifyRootsListChanged tells the server the client's roots changed.
func (cs *ClientSession) NotifyRootsListChanged(ctx context.Context) error {
	return cs.notify(ctx, notificationRootsListChanged, nil)
}

func cursorParams(cursor string) *PaginatedParams {
	if cursor == "" {
		return nil
	}
	return &PaginatedParams{Cursor: cursor}
}

// maxPages bounds a listing, so a server that never stops paginating
// cannot keep a caller looping.
const maxPages = 10000

// paginate yields every item of every page, stopping at the first error,
// at a cursor seen before, or after maxPages pages.
func paginate[T any](ctx context.Context, page func(context.Context, string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		seen := map[string]bool{}
		cursor := ""
		for n := 0; ; n++ {
			if n == maxPages {
				yield(zero, fmt.Errorf("mcp: gave up after %d pages: the server keeps returning a nextCursor", maxPages))
				return
			}
			items, next, err := page(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if seen[next] {
				yield(zero, fmt.Errorf("mcp: the server returned the cursor %q twice; stopping to avoid a loop", truncateString(next, 64)))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// ApplyElicitationDefaults fills in, for a form-mode elicitation being
// accepted, each field of the requested schema that the user left out
// and that has a default (SEP-1034), so the server receives what the form
// showed. content may be nil; the filled map is returned.
func ApplyElicitationDefaults(p *ElicitParams, content map[string]any) map[string]any {
	if content == nil {
		content = map[string]any{}
	}
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	b, err := marshal(p.RequestedSchema)
	if err != nil || unmarshalValue(b, &schema) != nil {
		return content
	}
	for name, prop := range schema.Properties {
		if _, set := content[name]; !set && prop.Default != nil {
			content[name] = prop.Default
		}
	}
	return content
}
