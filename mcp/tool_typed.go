package mcp

import (
	"context"
	"fmt"
	"reflect"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// ToolHandlerFor handles a tool whose arguments decode into In and whose
// structured result is Out. Returning a nil result is fine: the engine
// builds one from out. An error becomes an isError result.
type ToolHandlerFor[In, Out any] func(ctx context.Context, req *CallToolRequest, in In) (*CallToolResult, Out, error)

// AddTool registers a typed tool on s. Unless t sets them, the input
// schema is inferred from In and, when Out is not an interface type, the
// output schema from Out (see the package docs for the struct tags). The
// arguments are validated against the input schema, with its defaults
// filled in, before h runs; out becomes the result's structuredContent
// and, when h returned no content, its JSON text as well.
//
// AddTool panics if t is invalid or a schema cannot be derived: both are
// programming errors, found the first time the program runs.
func AddTool[In, Out any](s *Server, t *Tool, h ToolHandlerFor[In, Out]) {
	st, err := newTypedTool(t, h)
	if err != nil {
		panic(err)
	}
	s.tools.update([]*serverTool{st}, nil)
	s.countTaskTools()
	s.changed(notificationToolsListChanged)
}

func newTypedTool[In, Out any](t *Tool, h ToolHandlerFor[In, Out]) (*serverTool, error) {
	if t == nil || h == nil {
		return nil, fmt.Errorf("mcp: AddTool needs a tool and a handler")
	}
	tt := *t
	inferredIn, inferredOut := tt.InputSchema == nil, false
	if tt.InputSchema == nil {
		m, err := inferSchema(reflect.TypeFor[In]())
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q: cannot infer an input schema from %v: %w", t.Name, reflect.TypeFor[In](), err)
		}
		tt.InputSchema = m
	}
	outType := reflect.TypeFor[Out]()
	hasOut := outType.Kind() != reflect.Interface
	if tt.OutputSchema == nil && hasOut {
		m, err := inferSchema(outType)
		if err != nil {
			return nil, fmt.Errorf("mcp: tool %q: cannot infer an output schema from %v: %w", t.Name, outType, err)
		}
		if schemaType(m) != "object" {
			return nil, fmt.Errorf("mcp: tool %q: the output type %v must be a struct or a map (structured content is a JSON object)", t.Name, outType)
		}
		tt.OutputSchema, inferredOut = m, true
	}
	var st *serverTool
	raw := func(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
		args := st.input.withDefaults(req.Params.Arguments)
		if len(args) == 0 {
			args = jsontext.Value("{}")
		}
		var in In
		if err := json.Unmarshal(args, &in, jsontext.AllowInvalidUTF8(true)); err != nil {
			return ErrorResult("Invalid arguments for tool %q: %s", req.Params.Name, describeUnmarshalError(err)), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &CallToolResult{}
		}
		if res.IsError || res.StructuredContent != nil {
			return res, nil
		}
		if !hasOut && any(out) == nil {
			return res, nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("the tool's result cannot be encoded: %w", err)
		}
		res.StructuredContent = jsontext.Value(b)
		if len(res.Content) == 0 {
			// Structured output is also sent as text, for clients that
			// read only content.
			res.Content = []Content{&TextContent{Text: string(b)}}
		}
		return res, nil
	}
	var err error
	st, err = newServerToolInferred(&tt, raw, inferredIn, inferredOut)
	if err != nil {
		return nil, err
	}
	st.outputTrusted = true
	return st, nil
}
