package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/mcpgate/mcpgate/mcp"
)

// Definition is what a pin covers of a tool: its upstream's definition,
// before the gateway's own changes (renames, description overrides,
// _meta). Schemas and annotations are canonical JSON.
type Definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Of is the [Definition] of an upstream's tool.
func Of(t *mcp.Tool) (Definition, error) {
	d := Definition{Name: t.Name, Title: t.Title, Description: t.Description}
	var err error
	if d.InputSchema, err = canonical(t.InputSchema); err != nil {
		return d, fmt.Errorf("tool %q: inputSchema: %w", t.Name, err)
	}
	if d.OutputSchema, err = canonical(t.OutputSchema); err != nil {
		return d, fmt.Errorf("tool %q: outputSchema: %w", t.Name, err)
	}
	if t.Annotations != nil {
		if d.Annotations, err = canonical(t.Annotations); err != nil {
			return d, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
		}
	}
	return d, nil
}

// canonical encodes v as RFC 8785 JSON; nil (and JSON null) is nil.
func canonical(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	val := jsontext.Value(b)
	if err := val.Canonicalize(); err != nil {
		return nil, err
	}
	if string(val) == "null" || string(val) == "{}" && isAnnotations(v) {
		return nil, nil
	}
	return json.RawMessage(val), nil
}

// isAnnotations: empty annotations are no annotations, so that a server
// that starts sending "annotations": {} has not changed its tool.
func isAnnotations(v any) bool {
	_, ok := v.(*mcp.ToolAnnotations)
	return ok
}

// JSON is the definition's canonical encoding, which its hash covers.
func (d Definition) JSON() []byte {
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // strings and canonical JSON values always encode
	}
	val := jsontext.Value(b)
	if err := val.Canonicalize(); err != nil {
		panic(err)
	}
	return val
}

// Hash is the hex SHA-256 of the definition's canonical JSON.
func (d Definition) Hash() string {
	s := sha256.Sum256(d.JSON())
	return hex.EncodeToString(s[:])
}

// Parse decodes a definition from its JSON (as the store keeps it).
func Parse(b []byte) (Definition, error) {
	var d Definition
	if len(b) == 0 {
		return d, fmt.Errorf("empty definition")
	}
	err := json.Unmarshal(b, &d)
	return d, err
}

// Apply sets what the definition covers on a copy of t: the tool as the
// definition describes it, with t's other fields (execution, _meta).
func (d Definition) Apply(t *mcp.Tool) (*mcp.Tool, error) {
	c := *t
	c.Name, c.Title, c.Description = d.Name, d.Title, d.Description
	c.InputSchema, c.OutputSchema, c.Annotations = nil, nil, nil
	if len(d.InputSchema) > 0 {
		var s any
		if err := json.Unmarshal(d.InputSchema, &s); err != nil {
			return nil, err
		}
		c.InputSchema = s
	}
	if len(d.OutputSchema) > 0 {
		var s any
		if err := json.Unmarshal(d.OutputSchema, &s); err != nil {
			return nil, err
		}
		c.OutputSchema = s
	}
	if len(d.Annotations) > 0 {
		c.Annotations = &mcp.ToolAnnotations{}
		if err := json.Unmarshal(d.Annotations, c.Annotations); err != nil {
			return nil, err
		}
	}
	return &c, nil
}
