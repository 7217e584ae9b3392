package openapi

// An operation's inputs, its parameters in four locations and its request
// body, become the properties of one input schema. Names may clash across
// locations (a path "id" and a query "id", a query "name" and a body
// property "name"): every input whose name is shared is then renamed
// <location>_<name>, the locations being path, query, header, cookie and
// body; a name still taken after that gets the first free suffix of _2,
// _3 and so on, inputs taken in the order path, query, header, cookie,
// body.

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/net/http/httpguts"
)

// operation is what a call needs: how each argument is sent.
type operation struct {
	method   string
	template []part
	params   []*param
	body     *reqBody
	accept   string
	schema   json.RawMessage
	compile  func() (*jsonschema.Schema, error)
}

// part is a piece of the path template: literal text, or a parameter.
type part struct {
	literal string
	param   *param
}

// param is a parameter and how it is serialised.
type param struct {
	name          string // as sent
	arg           string // the argument's name
	in            string
	style         string
	explode       bool
	allowReserved bool
	asJSON        bool // a parameter with content: application/json
}

// input is one property of the input schema on its way there.
type input struct {
	loc      string
	name     string
	schema   any
	required bool
	set      func(arg string)
}

// ignoredHeaders are header parameters that are never sent from
// arguments: the first three as the specification says, the others
// because they frame or route the request, which is no argument's to
// change.
var ignoredHeaders = []string{
	"Accept", "Content-Type", "Authorization",
	"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "Upgrade", "Te", "Trailer",
	"Proxy-Authorization", "Proxy-Connection", "Cookie", "Expect",
}

// mapOperation builds the operation and its input schema's root.
func mapOperation(conv *schemaConv, o *opInfo, used defSet) (*operation, map[string]any, error) {
	op := &operation{method: o.method, accept: acceptOf(o.op)}
	var inputs []*input
	params, err := parameters(o)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range params {
		in, err := mapParam(conv, p, used)
		if err != nil {
			return nil, nil, err
		}
		if in == nil {
			continue
		}
		pp := in.param
		in.set = func(arg string) { pp.arg = arg }
		op.params = append(op.params, pp)
		inputs = append(inputs, &in.input)
	}
	if op.template, err = parseTemplate(o.path, op.params); err != nil {
		return nil, nil, err
	}
	bodyInputs, err := mapBody(conv, o.op, op, used)
	if err != nil {
		return nil, nil, err
	}
	inputs = append(inputs, bodyInputs...)
	nameInputs(inputs)
	props := map[string]any{}
	var required []any
	for _, in := range inputs {
		props[in.name] = in.schema
		if in.required {
			required = append(required, in.name)
		}
	}
	root := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		root["required"] = required
	}
	op.compile = sync.OnceValues(func() (*jsonschema.Schema, error) { return compileSchema(op.schema) })
	return op, root, nil
}

// parameters are the path item's parameters with the operation's, which
// replace those of the same name and location.
func parameters(o *opInfo) ([]*openapi3.Parameter, error) {
	var out []*openapi3.Parameter
	index := map[string]int{}
	for _, list := range []openapi3.Parameters{o.item.Parameters, o.op.Parameters} {
		for _, r := range list {
			if r == nil || r.Value == nil {
				ref := ""
				if r != nil {
					ref = r.Ref
				}
				return nil, skipf(SkipParameter, "the parameter %q is not resolved", ref)
			}
			p := r.Value
			key := p.In + "\x00" + strings.ToLower(p.Name)
			if i, ok := index[key]; ok {
				out[i] = p
				continue
			}
			index[key] = len(out)
			out = append(out, p)
		}
	}
	// The locations in the order their clashes are settled.
	order := map[string]int{"path": 0, "query": 1, "header": 2, "cookie": 3}
	slices.SortStableFunc(out, func(a, b *openapi3.Parameter) int { return order[a.In] - order[b.In] })
	return out, nil
}

type paramInput struct {
	input
	param *param
}

// styles are the styles each location allows, its default first.
var styles = map[string][]string{
	"path":   {"simple", "label", "matrix"},
	"query":  {"form", "spaceDelimited", "pipeDelimited", "deepObject"},
	"header": {"simple"},
	"cookie": {"form"},
}

// mapParam returns a parameter's input, or nil for one that is ignored.
func mapParam(conv *schemaConv, p *openapi3.Parameter, used defSet) (*paramInput, error) {
	allowed, ok := styles[p.In]
	if !ok {
		return nil, skipf(SkipParameter, "the parameter %q is in %q, not in path, query, header or cookie", p.Name, p.In)
	}
	if p.Name == "" {
		return nil, skipf(SkipParameter, "a parameter in %s has no name", p.In)
	}
	switch p.In {
	case "header":
		if slices.ContainsFunc(ignoredHeaders, func(h string) bool { return strings.EqualFold(h, p.Name) }) {
			return nil, nil
		}
		if !httpguts.ValidHeaderFieldName(p.Name) {
			return nil, skipf(SkipParameter, "the header parameter %q is not a valid header name", p.Name)
		}
	case "cookie":
		if !httpguts.ValidHeaderFieldName(p.Name) {
			return nil, skipf(SkipParameter, "the cookie parameter %q is not a valid cookie name", p.Name)
		}
	}
	style := p.Style
	if style == "" {
		style = allowed[0]
	}
	if !slices.Contains(allowed, style) {
		return nil, skipf(SkipParameter, "the parameter %q in %s has the style %q; %s allows %s", p.Name, p.In, style, p.In, strings.Join(allowed, ", "))
	}
	explode := style == "form"
	if p.Explode != nil {
		explode = *p.Explode
	}
	pp := &param{name: p.Name, in: p.In, style: style, explode: explode, allowReserved: p.AllowReserved}
	schemaRef := p.Schema
	if schemaRef == nil && len(p.Content) > 0 {
		_, media := pickMedia(p.Content, []int{bodyJSON})
		if media == nil {
			return nil, skipf(SkipParameter, "the parameter %q has content %s; only JSON is sent", p.Name, listed(slices.Sorted(maps.Keys(p.Content))))
		}
		pp.asJSON = true
		schemaRef = media.Schema
	}
	schema, err := conv.convert(schemaRef, used, 1)
	if err != nil {
		return nil, skipf(SkipSchema, "the parameter %q: %v", p.Name, err)
	}
	schema = annotate(schema, p.Description, p.Deprecated)
	return &paramInput{input: input{loc: p.In, name: p.Name, schema: schema, required: p.Required || p.In == "path"}, param: pp}, nil
}

// annotate adds a description and deprecation to a converted schema,
// copying it: converted schemas may be shared.
func annotate(schema any, desc string, deprecated bool) any {
	desc = strings.TrimSpace(desc)
	if desc == "" && !deprecated {
		return schema
	}
	var out map[string]any
	switch s := schema.(type) {
	case map[string]any:
		out = maps.Clone(s)
	case bool:
		if !s {
			return schema
		}
		out = map[string]any{}
	default:
		return schema
	}
	if _, has := out["description"]; !has && desc != "" {
		out["description"] = desc
	}
	if deprecated {
		out["deprecated"] = true
	}
	return out
}

// parseTemplate splits a path template into literals and parameters.
func parseTemplate(tmpl string, params []*param) ([]part, error) {
	byName := map[string]*param{}
	for _, p := range params {
		if p.in == "path" {
			byName[p.name] = p
		}
	}
	var parts []part
	rest := tmpl
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, skipf(SkipPath, "the path template %q has a '}' without its '{'", tmpl)
			}
			parts = append(parts, part{literal: rest})
			break
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return nil, skipf(SkipPath, "the path template %q has a '}' without its '{'", tmpl)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, skipf(SkipPath, "the path template %q has a '{' without its '}'", tmpl)
		}
		name := rest[open+1 : open+end]
		p, ok := byName[name]
		if !ok {
			return nil, skipf(SkipPath, "the path template %q names {%s}, which is not a path parameter", tmpl, name)
		}
		if open > 0 {
			parts = append(parts, part{literal: rest[:open]})
		}
		parts = append(parts, part{param: p})
		rest = rest[open+end+1:]
	}
	return parts, nil
}

// nameInputs settles the inputs' names, as the file's comment says.
func nameInputs(inputs []*input) {
	count := map[string]int{}
	for _, in := range inputs {
		count[in.name]++
	}
	taken := map[string]bool{}
	for _, in := range inputs {
		name := in.name
		if count[name] > 1 {
			name = in.loc + "_" + name
		}
		base := name
		for i := 2; taken[name]; i++ {
			name = base + "_" + strconv.Itoa(i)
		}
		taken[name] = true
		in.name = name
		in.set(name)
	}
}
