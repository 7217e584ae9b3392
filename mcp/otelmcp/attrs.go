package otelmcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/mcpgate/mcpgate/jsonrpc"
	"github.com/mcpgate/mcpgate/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/semconv/v1.40.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// What the client and the server spans share: reading a request's
// params for its target and trace context, the span's name and
// attributes, and how an outcome becomes error.type and a status.

// Error types for outcomes that carry no JSON-RPC error code.
const (
	// errToolError is the semantic conventions' error.type for a
	// tools/call whose result has isError set.
	errToolError = "tool_error"
	// errTimeout is error.type for a call whose deadline passed.
	errTimeout = "timeout"
	// errCancelled is error.type for a call its caller cancelled.
	errCancelled = "cancelled"
)

// params are the members of a request's params the spans read.
type params struct {
	Name      string          `json:"name"`
	URI       string          `json:"uri"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"_meta"`
}

// readParams decodes what the spans need from raw params; params that
// do not decode (the server answers those itself) give nothing.
func readParams(method string, raw json.RawMessage) params {
	var p params
	if len(raw) == 0 {
		return p
	}
	_ = jsonv2.Unmarshal(raw, &p)
	switch method {
	case "tools/call", "prompts/get":
		p.URI = ""
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		p.Name = ""
	default:
		p.Name, p.URI = "", ""
	}
	return p
}

// carrier returns the string members of _meta, where SEP-414 puts
// traceparent, tracestate and baggage.
func (p params) carrier() propagation.MapCarrier {
	c := propagation.MapCarrier{}
	for k, v := range p.Meta {
		if s, ok := v.(string); ok {
			c[k] = s
		}
	}
	return c
}

// spanName is the semantic conventions' {mcp.method.name} {target}: the
// tool's or prompt's name, never a resource's URI (unbounded).
func spanName(method string, p params) string {
	if p.Name != "" {
		return method + " " + p.Name
	}
	return method
}

// requestAttrs are a request's attributes, for its span and its
// duration. sessionID and version may be "".
func (c *config) requestAttrs(method string, id jsonrpc.ID, sessionID, version string, p params) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 7+len(c.attrs))
	attrs = append(attrs, semconv.McpMethodNameKey.String(method))
	attrs = append(attrs, c.attrs...)
	if !id.IsZero() {
		attrs = append(attrs, semconv.JSONRPCRequestID(id.String()))
	}
	if sessionID != "" {
		attrs = append(attrs, semconv.McpSessionID(sessionID))
	}
	if version != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(version))
	}
	switch {
	case method == "tools/call" && p.Name != "":
		attrs = append(attrs, semconv.GenAIToolName(p.Name), semconv.GenAIOperationNameExecuteTool)
	case method == "prompts/get" && p.Name != "":
		attrs = append(attrs, semconv.GenAIPromptName(p.Name))
	case p.URI != "":
		attrs = append(attrs, semconv.McpResourceURI(p.URI))
	}
	return attrs
}

// outcome is how a request ended, as error.type and the JSON-RPC code.
type outcome struct {
	errType string // "" for success
	code    string // the JSON-RPC error code; "" when there is none
	message string
}

// errorOutcome classifies err, an error a call ended with.
func errorOutcome(ctx context.Context, err error) outcome {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		code := strconv.Itoa(int(rpc.Code))
		return outcome{errType: code, code: code, message: rpc.Message}
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(context.Cause(ctx), context.DeadlineExceeded):
		return outcome{errType: errTimeout, message: err.Error()}
	case errors.Is(err, context.Canceled):
		return outcome{errType: errCancelled, message: err.Error()}
	}
	return outcome{errType: string(mcpconv.ErrorTypeOther), message: err.Error()}
}

// toolError is the outcome of a tools/call answered with isError set.
var toolError = outcome{errType: errToolError, message: "the tool reported an error"}

// finish sets the outcome on the span and returns attrs with the
// outcome's error.type and rpc.response.status_code added.
func (o outcome) finish(span trace.Span, attrs []attribute.KeyValue) []attribute.KeyValue {
	if o.errType == "" {
		return attrs
	}
	n := len(attrs)
	attrs = append(attrs, semconv.ErrorTypeKey.String(o.errType))
	if o.code != "" {
		attrs = append(attrs, semconv.RPCResponseStatusCode(o.code))
	}
	span.SetAttributes(attrs[n:]...)
	span.SetStatus(codes.Error, o.message)
	return attrs
}

// metricAttrs are the attributes of attrs the duration histograms take:
// not the method, which Record adds, nor what is unique to a request or
// a session (its id, a resource's URI), which would make a series each.
func metricAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, kv := range attrs {
		switch kv.Key {
		case semconv.McpMethodNameKey, semconv.JSONRPCRequestIDKey, semconv.McpSessionIDKey, semconv.McpResourceURIKey:
			continue
		}
		out = append(out, kv)
	}
	return out
}

// isToolError reports whether a tools/call result, encoded, has isError
// set.
func isToolError(raw []byte) bool {
	var r struct {
		IsError bool `json:"isError"`
	}
	return len(raw) > 0 && jsonv2.Unmarshal(raw, &r) == nil && r.IsError
}

// resultIsToolError reports whether a server handler's tools/call
// result has isError set: a *mcp.CallToolResult, or a result that
// encodes itself.
func resultIsToolError(res any) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r != nil && r.IsError
	case json.Marshaler:
		b, err := r.MarshalJSON()
		return err == nil && isToolError(b)
	}
	return false
}
