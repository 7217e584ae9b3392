package openapi

import (
	"fmt"
	"maps"
	"mime"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// outputSchema is the schema of the first 2xx JSON response: an object
// schema as it is, any other wrapped in an object as its "result", as
// ResultFromResponse wraps a value that is not an object. Nil when no 2xx
// response has a JSON schema.
func outputSchema(conv *schemaConv, o *openapi3.Operation, used defSet) (map[string]any, error) {
	r := successSchema(o)
	if r == nil || r.Value == nil {
		return nil, nil
	}
	if isObject(r.Value) {
		v, err := conv.body(r.Value, used, 1)
		if err != nil {
			return nil, fmt.Errorf("the response: %w", err)
		}
		root, ok := v.(map[string]any)
		if !ok {
			return nil, nil
		}
		root["type"] = "object"
		return root, nil
	}
	v, err := conv.convert(r, used, 1)
	if err != nil {
		return nil, fmt.Errorf("the response: %w", err)
	}
	return map[string]any{"type": "object", "properties": map[string]any{"result": v}, "required": []any{"result"}}, nil
}

// successSchema is the JSON schema of the first 2xx response, by code.
func successSchema(o *openapi3.Operation) *openapi3.SchemaRef {
	if o.Responses == nil {
		return nil
	}
	codes := o.Responses.Map()
	for _, code := range slices.Sorted(maps.Keys(codes)) {
		if len(code) != 3 || code[0] != '2' {
			continue
		}
		resp := codes[code]
		if resp == nil || resp.Value == nil {
			continue
		}
		if _, media := pickMedia(resp.Value.Content, []int{bodyJSON}); media != nil && media.Schema != nil {
			return media.Schema
		}
	}
	return nil
}

// acceptOf is the Accept header: the media types of the 2xx responses.
func acceptOf(o *openapi3.Operation) string {
	if o.Responses == nil {
		return ""
	}
	seen := map[string]bool{}
	for code, resp := range o.Responses.Map() {
		if len(code) != 3 || code[0] != '2' || resp == nil || resp.Value == nil {
			continue
		}
		for mt := range resp.Value.Content {
			if _, _, err := mime.ParseMediaType(mt); err == nil {
				seen[mt] = true
			}
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), ", ")
}
