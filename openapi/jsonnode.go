package openapi

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-json-experiment/json/jsontext"
	yaml "go.yaml.in/yaml/v4"
)

// loadJSON loads an OpenAPI 3 description written in JSON by decoding
// it into the YAML node tree that kin-openapi decodes its types from,
// then resolving its $refs as kin's loader does.
//
// kin-openapi reads JSON with its YAML parser, which for a large
// description spends most of the load growing and shifting its token
// queue: BenchmarkGitHubLoad (GitHub's 13 MB description, 1,223
// operations) took 1.4 s a load that way, and about 0.5 s this way, with
// the same document (compared in TestJSONLoadsAsKinLoadsIt). JSON is read
// by jsontext's decoder, not by hand.
//
// ok is false when the fast path declines the input (duplicate names,
// invalid UTF-8, a number no float holds, a type that does not fit): the
// caller then loads it the slow way, whose errors name the field.
func loadJSON(loader *openapi3.Loader, data []byte, location *url.URL) (doc *openapi3.T, ok bool, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	root, err := jsonNode(dec, numberTags{})
	if err != nil {
		return nil, false, nil
	}
	if _, err := dec.ReadToken(); err == nil {
		return nil, false, nil // more than one value
	}
	doc = &openapi3.T{}
	if root.Decode(doc) != nil {
		return nil, false, nil
	}
	if err := loader.ResolveRefsIn(doc, location); err != nil {
		return nil, true, err
	}
	return doc, true, nil
}

// numberTags caches the tag YAML's parser gives a number's text; a
// description repeats a few numbers many times.
type numberTags map[string]string

// resolved is the scalar of a JSON number, true, false or null, tagged as
// YAML's parser tags the same text (!!int, !!float, !!bool, !!null), so
// that decoding treats it alike: a number where a string belongs is
// refused as when kin reads the text, and -0 or 1e30 are floats. The
// parser itself says which tag, not a copy of its rules.
func (c numberTags) resolved(text string) (*yaml.Node, error) {
	tag, ok := c[text]
	if !ok {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(text), &doc); err != nil || len(doc.Content) != 1 {
			return nil, fmt.Errorf("the scalar %s does not read as YAML", text)
		}
		tag = doc.Content[0].Tag
		c[text] = tag
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text}, nil
}

var errNotFinite = errors.New("a number out of range")

// jsonNode reads one JSON value as a YAML node. Strings are tagged !!str
// so that "true" or "1" stay strings; other scalars are tagged as YAML
// resolves the same text in a document it parses. Nesting is bounded by
// jsontext's own depth limit.
func jsonNode(dec *jsontext.Decoder, tags numberTags) (*yaml.Node, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			// The token is only valid until the decoder's next call.
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name.String()}
			v, err := jsonNode(dec, tags)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, key, v)
		}
		_, err := dec.ReadToken()
		return n, err
	case '[':
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for dec.PeekKind() != ']' {
			v, err := jsonNode(dec, tags)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
		}
		_, err := dec.ReadToken()
		return n, err
	case '"':
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: tok.String()}, nil
	case '0':
		// kin refuses a number no float holds (1e400); so does the
		// fast path, leaving the slow one to say so.
		if _, err := strconv.ParseFloat(tok.String(), 64); err != nil {
			return nil, errNotFinite
		}
		return tags.resolved(tok.String())
	default: // true, false, null
		return tags.resolved(tok.String())
	}
}
