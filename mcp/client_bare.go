package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Bare tool servers: hand-written JSON-RPC loops, often from a template,
// that answer tools/list and tools/call but not the MCP lifecycle
// (initialize is answered "-32601 Method not found") and return a tool's
// value itself ({"sum": 5}) where MCP wants a CallToolResult. Rather
// than fail to connect to them, the client recognises them and speaks
// the part of MCP they know: tools, and nothing else.

// BareMode says whether the client treats a server as a bare tool server:
// one that answers tools/list and tools/call but not the MCP lifecycle.
type BareMode uint8

const (
	// BareDetect, the zero value, asks initialize first; a server that
	// answers it with -32601 (Method not found) and then answers
	// tools/list is spoken to as a bare tool server.
	BareDetect BareMode = iota
	// BareNever fails Connect when initialize fails, whatever the code.
	BareNever
	// BareAlways skips the handshake: the session is bare from the
	// start and sends nothing until the first call.
	BareAlways
)

// Bare reports whether the session speaks to a bare tool server: one
// without the MCP lifecycle, whose only capability is tools (see
// ClientOptions.Bare). Its InitializeResult is made up: tools only, an
// empty serverInfo and no protocol revision.
func (cs *ClientSession) Bare() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.bare
}

// handshake runs initialize, or takes the server for a bare tool server
// when it does not know initialize and does know tools/list.
func (cs *ClientSession) handshake(ctx context.Context) error {
	err := cs.initialize(ctx)
	var ce *CallError
	if err == nil || cs.client.opts.Bare != BareDetect || !errors.As(err, &ce) ||
		ce.Method != methodInitialize || ce.Err.Code != jsonrpc.CodeMethodNotFound {
		return err
	}
	// The probe is bounded like server/discover's: a server that knows
	// neither method may not answer at all.
	pctx, cancel := context.WithTimeout(ctx, cs.client.opts.ProbeTimeout)
	defer cancel()
	var raw jsontext.Value
	perr := cs.call(pctx, methodToolsList, nil, &raw, callOptions{})
	if perr == nil {
		_, perr = decodeBareTools(raw)
	}
	if perr != nil {
		return fmt.Errorf("%w (nor is it a bare tool server: tools/list failed too: %w)", err, perr)
	}
	cs.becomeBare(true)
	return nil
}

// becomeBare makes the session bare; detected says whether the server
// was found out (else the caller asked).
func (cs *ClientSession) becomeBare(detected bool) {
	cs.mu.Lock()
	cs.bare = true
	cs.init = &InitializeResult{Capabilities: ServerCapabilities{Tools: &ToolCapabilities{}}, ServerInfo: &Implementation{}}
	cs.mu.Unlock()
	if detected {
		cs.logger.Warn("mcp: the server does not speak the MCP lifecycle (it answered initialize with -32601 Method not found, and tools/list without it); speaking to it as a bare tool server: tools only, no notifications")
	} else {
		// Asked for: news to nobody but whoever debugs.
		cs.logger.Debug("mcp: speaking to the server as a bare tool server, without the MCP lifecycle, as configured: tools only, no notifications")
	}
}

// pingBare checks a bare server with the one request it is known to
// answer: many such servers answer ping with -32601, which would read as
// a failure.
func (cs *ClientSession) pingBare(ctx context.Context, o callOptions) error {
	var raw jsontext.Value
	return cs.call(ctx, methodToolsList, nil, &raw, o)
}

// listToolsBare lists a bare server's tools, taking a bare array for the
// list and giving a tool without an input schema one that takes any
// object, as MCP requires one.
func (cs *ClientSession) listToolsBare(ctx context.Context, p *PaginatedParams, o callOptions) (*ListToolsResult, error) {
	var raw jsontext.Value
	if err := cs.request(ctx, methodToolsList, p, &raw, o); err != nil {
		return nil, err
	}
	res, err := decodeBareTools(raw)
	if err != nil {
		return nil, fmt.Errorf("mcp: the server's %s result is malformed: %w", methodToolsList, err)
	}
	return res, nil
}

func decodeBareTools(raw jsontext.Value) (*ListToolsResult, error) {
	var res ListToolsResult
	var err error
	if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '[' {
		err = unmarshalValue(b, &res.Tools)
	} else {
		err = unmarshalValue(raw, &res)
	}
	if err != nil {
		return nil, err
	}
	kept := res.Tools[:0]
	for _, t := range res.Tools {
		if t == nil || t.Name == "" {
			continue
		}
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{"type": "object"}
		}
		kept = append(kept, t)
	}
	res.Tools = kept
	return &res, nil
}

// callToolBare calls a bare server's tool. Its value becomes the
// result's structured content, with its JSON as the text for clients
// that read only text; an error it answers with becomes an isError
// result, as a tool's failure is in MCP, so that a model sees it.
func (cs *ClientSession) callToolBare(ctx context.Context, p *CallToolParams, o callOptions) (*CallToolResult, error) {
	var raw jsontext.Value
	err := cs.request(ctx, methodToolsCall, p, &raw, o)
	var ce *CallError
	if errors.As(err, &ce) {
		return &CallToolResult{Content: []Content{&TextContent{Text: ce.Err.Message}}, IsError: true}, nil
	}
	if err != nil {
		return nil, err
	}
	return bareToolResult(raw)
}

// bareToolResult turns a bare server's tools/call result into a
// CallToolResult. One that is already a CallToolResult (it has content)
// is kept as it is. An object is the structured content; any other value
// is wrapped as {"result": value}, structured content being an object.
func bareToolResult(raw jsontext.Value) (*CallToolResult, error) {
	var probe struct {
		Content jsontext.Value `json:"content"`
	}
	if unmarshalValue(raw, &probe) == nil && probe.Content != nil {
		var res CallToolResult
		if unmarshalValue(raw, &res) == nil {
			return &res, nil
		}
		// A value of its own with a member named content: not ours.
	}
	var v any
	if err := unmarshalValue(raw, &v); err != nil {
		return nil, fmt.Errorf("mcp: the server's %s result is malformed: %w", methodToolsCall, err)
	}
	compact := jsontext.Value(bytes.Clone(raw))
	if err := compact.Compact(); err != nil {
		return nil, fmt.Errorf("mcp: the server's %s result is malformed: %w", methodToolsCall, err)
	}
	switch v := v.(type) {
	case nil:
		return &CallToolResult{Content: []Content{}}, nil
	case map[string]any:
		return &CallToolResult{Content: []Content{&TextContent{Text: string(compact)}}, StructuredContent: v}, nil
	case string:
		return &CallToolResult{Content: []Content{&TextContent{Text: v}}, StructuredContent: map[string]any{"result": v}}, nil
	default:
		return &CallToolResult{Content: []Content{&TextContent{Text: string(compact)}}, StructuredContent: map[string]any{"result": v}}, nil
	}
}
