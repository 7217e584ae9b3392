package openapi

// The request body: which media type is sent, how the body becomes
// arguments (a plain object's properties, or the whole under "body"), and
// how the arguments become the body again.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

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
		return nil, skipf(SkipBody, "the request body's media types (%s) are none of JSON, form, multipart or text", listed(slices.Sorted(maps.Keys(rb.Content))))
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
		if s != nil && s.Type != nil && !s.Type.Includes("object") {
			return nil, skipf(SkipBody, "the %s body is of type %s, not an object", key, strings.Join(*s.Type, ", "))
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

// listed lists names for a message, the first few of many.
func listed(names []string) string {
	const few = 5
	if len(names) > few {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:few], ", "), len(names)-few)
	}
	return strings.Join(names, ", ")
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

// encodeBody returns the request body and its Content-Type; nil when
// there is none to send.
func (op *operation) encodeBody(args map[string]any) ([]byte, string, error) {
	b := op.body
	if b == nil {
		return nil, "", nil
	}
	var value any
	if b.arg != "" {
		v, ok := args[b.arg]
		if !ok {
			return nil, "", nil
		}
		value = v
	} else {
		m := map[string]any{}
		for _, f := range b.fields {
			if v, ok := args[f.arg]; ok {
				m[f.name] = v
			}
		}
		if len(m) == 0 && !b.required {
			return nil, "", nil
		}
		value = m
	}
	switch b.kind {
	case bodyText:
		s, ok := value.(string)
		if !ok {
			return nil, "", argErrorf("%s: the body is sent as text and must be a string", b.arg)
		}
		return []byte(s), b.mediaType, nil
	case bodyForm:
		m, ok := value.(map[string]any)
		if !ok {
			return nil, "", argErrorf("%s: a form body must be an object", b.arg)
		}
		return []byte(b.form(m)), b.mediaType, nil
	case bodyMultipart:
		m, ok := value.(map[string]any)
		if !ok {
			return nil, "", argErrorf("%s: a multipart body must be an object", b.arg)
		}
		return b.multipart(m)
	}
	out, err := json.Marshal(value)
	if err != nil {
		return nil, "", argErrorf("the body cannot be encoded as JSON: %v", err)
	}
	return out, b.mediaType, nil
}

func (b *reqBody) encodingOf(name string) *fieldEncoding {
	if fe := b.encoding[name]; fe != nil {
		return fe
	}
	return &fieldEncoding{style: "form", explode: true}
}

// form encodes an application/x-www-form-urlencoded body: each property
// as a query parameter, by its Encoding Object.
func (b *reqBody) form(m map[string]any) string {
	var pairs []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == nil {
			continue
		}
		fe := b.encodingOf(k)
		pairs = append(pairs, queryPairs(k, fe.style, fe.explode, fe.allowReserved, false, m[k])...)
	}
	return strings.Join(pairs, "&")
}

// multipart encodes a multipart/form-data body: a file part for a binary
// property, one part per item of an array, JSON for an object, text for
// the rest.
func (b *reqBody) multipart(m map[string]any) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fe := b.encodingOf(k)
		values := []any{m[k]}
		if items, ok := m[k].([]any); ok && !fe.binary {
			values = items
		}
		for _, v := range values {
			if v == nil {
				continue
			}
			if err := writePart(w, k, fe, v); err != nil {
				return nil, "", err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

func writePart(w *multipart.Writer, name string, fe *fieldEncoding, v any) error {
	h := textproto.MIMEHeader{}
	disposition := fmt.Sprintf(`form-data; name="%s"`, quoteEscaper.Replace(name))
	var content []byte
	s, isScalar := scalar(v)
	switch {
	case fe.binary && isScalar:
		disposition += fmt.Sprintf(`; filename="%s"`, quoteEscaper.Replace(name))
		h.Set("Content-Type", cmp.Or(fe.contentType, "application/octet-stream"))
		content = []byte(s)
	case isScalar:
		if fe.contentType != "" {
			h.Set("Content-Type", fe.contentType)
		}
		content = []byte(s)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			return argErrorf("%s: cannot be encoded as JSON: %v", name, err)
		}
		h.Set("Content-Type", cmp.Or(fe.contentType, "application/json"))
		content = j
	}
	h.Set("Content-Disposition", disposition)
	part, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = part.Write(content)
	return err
}

// quoteEscaper escapes a name in a Content-Disposition parameter, as
// mime/multipart does, and drops line breaks.
var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")
