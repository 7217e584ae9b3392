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
	"bytes"
	"encoding/json"
	"maps"
	"mime"
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

// body kinds, by media type.
const (
	bodyJSON = iota
	bodyForm
	bodyMultipart
	bodyText
)

// reqBody is the request body and how it is sent.
type reqBody struct {
	mediaType string
	kind      int
	// arg names the argument holding the whole body; empty when its
	// properties are arguments of their own, as fields says.
	arg      string
	fields   []field
	required bool
	// encoding says how each property of a form or multipart body is sent.
	encoding map[string]*fieldEncoding
}

// field is a body property merged into the arguments.
type field struct{ arg, name string }

// fieldEncoding is a form or multipart property's Encoding Object, with
// what its schema says about it.
type fieldEncoding struct {
	style         string
	explode       bool
	allowReserved bool
	contentType   string
	binary        bool
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
			return nil, skipf(SkipParameter, "the parameter %q has content %s; only JSON is sent", p.Name, strings.Join(slices.Sorted(maps.Keys(p.Content)), ", "))
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

// pickMedia chooses the media type to send among content's: the first of
// kinds, in that order, and within a kind the first by name, an exact
// application/json before the other JSON types.
func pickMedia(content openapi3.Content, kinds []int) (string, *openapi3.MediaType) {
	best, bestRank := "", -1
	for _, key := range slices.Sorted(maps.Keys(content)) {
		kind, ok := mediaKind(key)
		if !ok || content[key] == nil {
			continue
		}
		rank := slices.Index(kinds, kind)
		if rank < 0 {
			continue
		}
		rank *= 2
		if key != "application/json" {
			rank++
		}
		if bestRank < 0 || rank < bestRank {
			best, bestRank = key, rank
		}
	}
	if bestRank < 0 {
		return "", nil
	}
	return best, content[best]
}

// mediaKind classifies a media type.
func mediaKind(mt string) (int, bool) {
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(mt))
	}
	switch {
	case base == "application/json" || strings.HasSuffix(base, "+json") || base == "*/*" || base == "application/*":
		return bodyJSON, true
	case base == "application/x-www-form-urlencoded":
		return bodyForm, true
	case base == "multipart/form-data":
		return bodyMultipart, true
	case strings.HasPrefix(base, "text/") || base == "application/octet-stream":
		return bodyText, true
	}
	return 0, false
}

// sendAs is the Content-Type for a media type key: wildcards become JSON.
func sendAs(key string) string {
	if strings.Contains(key, "*") {
		return "application/json"
	}
	return key
}

// mapBody maps the request body to inputs.
func mapBody(conv *schemaConv, o *openapi3.Operation, op *operation, used defSet) ([]*input, error) {
	if o.RequestBody == nil {
		return nil, nil
	}
	rb := o.RequestBody.Value
	if rb == nil {
		return nil, skipf(SkipBody, "the request body %q is not resolved", o.RequestBody.Ref)
	}
	if len(rb.Content) == 0 {
		return nil, nil
	}
	key, media := pickMedia(rb.Content, []int{bodyJSON, bodyForm, bodyMultipart, bodyText})
	if media == nil {
		return nil, skipf(SkipBody, "the request body's media types (%s) are none of JSON, form, multipart or text", strings.Join(slices.Sorted(maps.Keys(rb.Content)), ", "))
	}
	kind, _ := mediaKind(key)
	b := &reqBody{mediaType: sendAs(key), kind: kind, required: rb.Required}
	op.body = b
	var s *openapi3.Schema
	if media.Schema != nil {
		s = media.Schema.Value
	}
	if kind == bodyText {
		b.arg = "body"
		schema := annotate(map[string]any{"type": "string"}, rb.Description, false)
		return []*input{{loc: "body", name: "body", schema: schema, required: rb.Required, set: func(a string) { b.arg = a }}}, nil
	}
	if kind != bodyJSON {
		if s != nil && !isObject(s) {
			return nil, skipf(SkipBody, "the %s body is not an object", key)
		}
		b.encoding = encodings(s, media.Encoding, kind)
	}
	if !mergeable(s) {
		schema, err := conv.convert(media.Schema, used, 1)
		if err != nil {
			return nil, skipf(SkipSchema, "the request body: %v", err)
		}
		b.arg = "body"
		schema = annotate(schema, rb.Description, false)
		return []*input{{loc: "body", name: "body", schema: schema, required: rb.Required, set: func(a string) { b.arg = a }}}, nil
	}
	var inputs []*input
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		prop := s.Properties[name]
		if prop != nil && prop.Value != nil && prop.Value.ReadOnly {
			// The server sets it; the API ignores or refuses it in a request.
			continue
		}
		schema, err := conv.convert(prop, used, 1)
		if err != nil {
			return nil, skipf(SkipSchema, "the request body's property %q: %v", name, err)
		}
		i := len(b.fields)
		b.fields = append(b.fields, field{arg: name, name: name})
		inputs = append(inputs, &input{
			loc: "body", name: name, schema: schema,
			required: rb.Required && slices.Contains(s.Required, name),
			set:      func(a string) { b.fields[i].arg = a },
		})
	}
	return inputs, nil
}

// mergeable says whether a body's properties can be arguments of their
// own: an object with properties and nothing that constrains them
// together.
func mergeable(s *openapi3.Schema) bool {
	if s == nil || !isObject(s) || len(s.Properties) == 0 {
		return false
	}
	if len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil || s.Nullable {
		return false
	}
	ap := s.AdditionalProperties
	if ap.Schema != nil || ap.Has != nil && *ap.Has {
		return false
	}
	return len(s.PatternProperties) == 0 && len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 &&
		s.If == nil && s.MinProps == 0 && s.MaxProps == nil && s.PropertyNames == nil
}

// encodings reads how each property of a form or multipart body is sent.
func encodings(s *openapi3.Schema, enc map[string]*openapi3.Encoding, kind int) map[string]*fieldEncoding {
	out := map[string]*fieldEncoding{}
	names := map[string]bool{}
	if s != nil {
		for n := range s.Properties {
			names[n] = true
		}
	}
	for n := range enc {
		names[n] = true
	}
	for n := range names {
		fe := &fieldEncoding{style: "form", explode: true}
		if s != nil {
			if prop := s.Properties[n]; prop != nil && prop.Value != nil {
				fe.binary = isBinary(prop.Value)
			}
		}
		if e := enc[n]; e != nil {
			if e.Style != "" && slices.Contains(styles["query"], e.Style) {
				fe.style = e.Style
			}
			if e.Explode != nil {
				fe.explode = *e.Explode
			} else if fe.style != "form" {
				fe.explode = false
			}
			fe.allowReserved = e.AllowReserved
			if !strings.ContainsAny(e.ContentType, "\r\n") {
				fe.contentType = e.ContentType
			}
			if kind == bodyMultipart && e.ContentType != "" {
				base, _, _ := mime.ParseMediaType(e.ContentType)
				fe.binary = fe.binary || !(strings.HasPrefix(base, "text/") || strings.Contains(base, "json"))
			}
		}
		out[n] = fe
	}
	return out
}

// isBinary says whether a property holds a file: a string whose format
// (3.0) or contentMediaType/contentEncoding (3.1) says so.
func isBinary(s *openapi3.Schema) bool {
	return s.Format == "binary" || s.Format == "byte" || s.ContentEncoding != "" ||
		s.ContentMediaType != "" && s.ContentMediaType != "application/json" && !strings.HasPrefix(s.ContentMediaType, "text/")
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
			return nil, skipf(SkipSchema, "the response: %v", err)
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
		return nil, skipf(SkipSchema, "the response: %v", err)
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

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(lenientRegexp)
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("tool.json")
}
