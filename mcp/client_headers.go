package mcp

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcpgate/mcpgate/internal/httpmeta"
)

// x-mcp-header (2026-07-28): a tool's input schema may name arguments
// that an HTTP client repeats as Mcp-Param-{Name} headers, so that
// proxies can route on them. The client checks each tool's annotations
// when it lists tools, drops the tools whose annotations are invalid (as
// the spec requires), and computes the headers of each call; the HTTP
// transport sends them.

// paramHeader is an x-mcp-header annotation. The type is shared with the
// HTTP transport, which checks a 2026-07-28 call's Mcp-Param-* headers
// against the server's tools.
type paramHeader = httpmeta.ParamHeader

// toolParamHeaders returns a tool's x-mcp-header annotations, or an error
// saying why they make the tool invalid.
func toolParamHeaders(schema any) ([]paramHeader, error) {
	root, _ := schema.(map[string]any)
	var out []paramHeader
	seen := map[string]bool{}
	reached := 0
	var walk func(node map[string]any, path []string) error
	walk = func(node map[string]any, path []string) error {
		props, _ := node["properties"].(map[string]any)
		for name, p := range props {
			prop, ok := p.(map[string]any)
			if !ok {
				continue
			}
			sub := append(append([]string(nil), path...), name)
			if h, ok := prop["x-mcp-header"]; ok {
				reached++
				name, ok := h.(string)
				switch {
				case !ok || name == "":
					return fmt.Errorf("property %s: x-mcp-header must be a non-empty string", strings.Join(sub, "."))
				case !isToken(name):
					return fmt.Errorf("property %s: x-mcp-header %q is not an HTTP token", strings.Join(sub, "."), name)
				case seen[strings.ToLower(name)]:
					return fmt.Errorf("x-mcp-header %q is used twice", name)
				}
				typ, _ := prop["type"].(string)
				if typ != "string" && typ != "integer" && typ != "boolean" {
					return fmt.Errorf("property %s: x-mcp-header is allowed only on string, integer and boolean properties, not %v", strings.Join(sub, "."), prop["type"])
				}
				seen[strings.ToLower(name)] = true
				out = append(out, paramHeader{Name: name, Path: sub, Type: typ})
			}
			if err := walk(prop, sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root, nil); err != nil {
		return nil, err
	}
	// An annotation anywhere else (under items, anyOf, $defs...) cannot be
	// reached from the arguments by property names alone.
	if total := countAnnotations(root); total != reached {
		return nil, fmt.Errorf("an x-mcp-header annotation is not reachable through properties alone")
	}
	return out, nil
}

func countAnnotations(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "x-mcp-header" {
				n++
			}
			n += countAnnotations(e)
		}
	case []any:
		for _, e := range x {
			n += countAnnotations(e)
		}
	}
	return n
}

// isToken reports whether s is an RFC 9110 token.
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// paramHeaderValues computes the Mcp-Param-* headers of a call.
func paramHeaderValues(hs []paramHeader, args any) map[string]string {
	if len(hs) == 0 || args == nil {
		return nil
	}
	b, err := marshal(args)
	if err != nil {
		return nil
	}
	var m map[string]any
	if unmarshalValue(b, &m) != nil {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		var v any = m
		for _, k := range h.Path {
			o, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = o[k]
		}
		switch x := v.(type) {
		case string:
			out["Mcp-Param-"+h.Name] = httpmeta.EncodeValue(x)
		case bool:
			out["Mcp-Param-"+h.Name] = strconv.FormatBool(x)
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				out["Mcp-Param-"+h.Name] = strconv.FormatInt(int64(x), 10)
			} else {
				out["Mcp-Param-"+h.Name] = strconv.FormatFloat(x, 'f', -1, 64)
			}
		}
	}
	return out
}
