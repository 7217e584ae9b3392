package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/mcpgate/mcpgate/internal/wire"
	"github.com/mcpgate/mcpgate/jsonrpc"
)

func marshal(v any) ([]byte, error) { return json.Marshal(v) }

// encodeResult encodes a handler's result: a tool's result of text
// blocks through the fast encoder (see appendToolResult), another tool's
// result with its blocks encoded in one pass (see block), anything else
// with marshal.
func encodeResult(res any) ([]byte, error) {
	if r, ok := res.(*CallToolResult); ok && r != nil {
		if b, ok := appendToolResult(make([]byte, 0, 64+textLen(r)), r); ok {
			return b, nil
		}
		blocks := make([]block, len(r.Content))
		for i, c := range r.Content {
			blocks[i] = block{c}
		}
		return marshal(&toolResultWire{Content: blocks, StructuredContent: r.StructuredContent, IsError: r.IsError, Meta: r.Meta})
	}
	return marshal(res)
}

// toolResultWire is CallToolResult with its blocks as the engine encodes
// them. TestToolResultFastEncoding holds the two to the same output.
type toolResultWire struct {
	Content           []block `json:"content"`
	StructuredContent any     `json:"structuredContent,omitzero"`
	IsError           bool    `json:"isError,omitzero"`
	Meta              Meta    `json:"_meta,omitempty"`
}

func textLen(r *CallToolResult) int {
	n := 0
	for _, c := range r.Content {
		if t, ok := c.(*TextContent); ok && t != nil {
			n += len(t.Text) + 32
		}
	}
	return n
}

// appendToolResult appends r as marshal encodes it, with
// wire.AppendTextResult (whose doc says what it saves), when r holds only
// text blocks without annotations or _meta; ok is false otherwise, and
// the caller then uses marshal.
func appendToolResult(b []byte, r *CallToolResult) ([]byte, bool) {
	if r.Meta != nil {
		return b, false
	}
	var few [4]string // most results have one block
	texts := few[:0]
	for _, c := range r.Content {
		t, ok := c.(*TextContent)
		if !ok || t == nil || t.Annotations != nil || t.Meta != nil {
			return b, false
		}
		texts = append(texts, t.Text)
	}
	var structured []byte
	if r.StructuredContent != nil {
		var err error
		if structured, err = marshal(r.StructuredContent); err != nil {
			return b, false
		}
	}
	return wire.AppendTextResult(b, texts, structured, r.IsError)
}

// encoded is a result the engine assembled from parts it had already
// validated, sent without another encoding pass. Middleware sees it as
// JSON text (it marshals as itself).
type encoded []byte

func (e encoded) MarshalJSON() ([]byte, error) { return e, nil }

// unmarshalParams decodes request params into v. Absent params decode as
// an empty object. A mismatch is an invalid-params error that names the
// member at fault.
func unmarshalParams(raw []byte, v any) error {
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, v, jsontext.AllowInvalidUTF8(true)); err != nil {
		return jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "Invalid params: %s", describeUnmarshalError(err))
	}
	return nil
}

// describeUnmarshalError names where in the params a decoding error was.
func describeUnmarshalError(err error) string {
	var se *json.SemanticError
	if errors.As(err, &se) {
		where := string(se.JSONPointer)
		if where == "" {
			where = "the params"
		}
		want := ""
		if se.GoType != nil {
			want = goTypeName(se.GoType.Kind().String())
		}
		got := ""
		if se.JSONKind != 0 {
			got = kindName(se.JSONKind)
		}
		switch {
		case want != "" && got != "":
			return fmt.Sprintf("%s must be %s, not %s", where, want, got)
		case se.Err != nil:
			return fmt.Sprintf("%s: %v", where, se.Err)
		}
		return fmt.Sprintf("%s has the wrong type", where)
	}
	var sy *jsontext.SyntacticError
	if errors.As(err, &sy) {
		return fmt.Sprintf("invalid JSON at %s: %v", sy.JSONPointer, sy.Err)
	}
	return err.Error()
}

func goTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return ""
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "something else"
}

// findMember returns the raw value of the top-level member name of a JSON
// object, or nil. It tolerates repeated names (the first counts) and
// invalid UTF-8, and does not check the text after the member.
func findMember(obj []byte, name string) []byte { return wire.Member(obj, name) }

// nameIs reports whether raw, a member name as read (quoted), is name.
func nameIs(raw []byte, name string) bool { return wire.NameIs(raw, name) }

// scanDecoder is a jsontext.Decoder kept for reuse: a new one costs a few
// allocations, and the engine reads members of params and results on
// every request.
type scanDecoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var scanDecoders = sync.Pool{New: func() any { return new(scanDecoder) }}

// getScanDecoder returns a pooled decoder reading b in place: values it
// returns are slices of b.
func getScanDecoder(b []byte, opts ...jsontext.Options) *scanDecoder {
	sd := scanDecoders.Get().(*scanDecoder)
	sd.buf = *bytes.NewBuffer(b)
	sd.dec.Reset(&sd.buf, opts...)
	return sd
}

// release returns the decoder to the pool, keeping nothing of its input.
func (sd *scanDecoder) release() {
	sd.buf = bytes.Buffer{}
	sd.dec.Reset(&sd.buf)
	scanDecoders.Put(sd)
}

func stack() string { return string(debug.Stack()) }

// unmarshalValue decodes a peer-supplied value.
func unmarshalValue(b []byte, v any) error {
	return json.Unmarshal(b, v, jsontext.AllowInvalidUTF8(true))
}
