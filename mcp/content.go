package mcp

import (
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Content is one block of a tool result, a prompt message or a sampling
// message: *TextContent, *ImageContent, *AudioContent, *ResourceLink or
// *EmbeddedResource.
type Content interface {
	// wire returns the block's wire form; nil for a nil block.
	wire() *contentWire
}

// TextContent is a block of text.
type TextContent struct {
	Text        string
	Annotations *Annotations
	Meta        Meta
}

// ImageContent is an image, base64-encoded on the wire.
type ImageContent struct {
	Data        []byte // raw bytes; encoded as base64
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// AudioContent is audio, base64-encoded on the wire (2025-03-26 and later;
// replaced by a text note for older clients).
type AudioContent struct {
	Data        []byte
	MIMEType    string
	Annotations *Annotations
	Meta        Meta
}

// ResourceLink points to a resource the client may read (2025-06-18 and
// later; replaced by a text note for older clients).
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Size        *int64
	Icons       []Icon
	Annotations *Annotations
	Meta        Meta
}

// EmbeddedResource carries the contents of a resource inline.
type EmbeddedResource struct {
	Resource    *ResourceContents
	Annotations *Annotations
	Meta        Meta
}

// The wire form of every block: one struct, so encoding and decoding are a
// single pass with no intermediate maps.
type contentWire struct {
	Type        string            `json:"type"`
	Text        *string           `json:"text,omitzero"`
	Data        []byte            `json:"data,omitzero"`
	MIMEType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitzero"`
	Icons       []Icon            `json:"icons,omitempty"`
	Resource    *ResourceContents `json:"resource,omitzero"`
	Annotations *Annotations      `json:"annotations,omitzero"`
	Meta        Meta              `json:"_meta,omitempty"`
}

func (c *TextContent) wire() *contentWire {
	if c == nil {
		return nil
	}
	return &contentWire{Type: "text", Text: &c.Text, Annotations: c.Annotations, Meta: c.Meta}
}

func (c *ImageContent) wire() *contentWire {
	if c == nil {
		return nil
	}
	return &contentWire{Type: "image", Data: nonNil(c.Data), MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta}
}

func (c *AudioContent) wire() *contentWire {
	if c == nil {
		return nil
	}
	return &contentWire{Type: "audio", Data: nonNil(c.Data), MIMEType: c.MIMEType, Annotations: c.Annotations, Meta: c.Meta}
}

func (c *ResourceLink) wire() *contentWire {
	if c == nil {
		return nil
	}
	return &contentWire{Type: "resource_link", URI: c.URI, Name: c.Name, Title: c.Title,
		Description: c.Description, MIMEType: c.MIMEType, Size: c.Size, Icons: c.Icons, Annotations: c.Annotations, Meta: c.Meta}
}

func (c *EmbeddedResource) wire() *contentWire {
	if c == nil {
		return nil
	}
	return &contentWire{Type: "resource", Resource: c.Resource, Annotations: c.Annotations, Meta: c.Meta}
}

// MarshalJSON encodes the block in its wire form, with its "type"
// member. It is the encoding/json interface, so that encoding/json and
// go-json-experiment write the same JSON for a block.
func (c *TextContent) MarshalJSON() ([]byte, error) { return marshal(c.wire()) }

// MarshalJSON encodes the block in its wire form, with its "type" member.
func (c *ImageContent) MarshalJSON() ([]byte, error) { return marshal(c.wire()) }

// MarshalJSON encodes the block in its wire form, with its "type" member.
func (c *AudioContent) MarshalJSON() ([]byte, error) { return marshal(c.wire()) }

// MarshalJSON encodes the block in its wire form, with its "type" member.
func (c *ResourceLink) MarshalJSON() ([]byte, error) { return marshal(c.wire()) }

// MarshalJSON encodes the block in its wire form, with its "type" member.
func (c *EmbeddedResource) MarshalJSON() ([]byte, error) { return marshal(c.wire()) }

// block is a content block as the engine encodes it: in the same pass as
// the result around it. Through MarshalJSON a block is encoded into a
// buffer of its own, which the encoder then checks and copies: twice the
// time and memory for a result of one 100 KB image (99 -> 205 us).
type block struct{ c Content }

func (b block) MarshalJSONTo(enc *jsontext.Encoder) error {
	var w *contentWire
	if b.c != nil {
		w = b.c.wire()
	}
	return jsonv2.MarshalEncode(enc, w)
}

// nonNil keeps an empty data member present: "data" is required.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// decodeContent decodes one content block.
func decodeContent(raw []byte) (Content, error) {
	var w contentWire
	if err := unmarshalValue(raw, &w); err != nil {
		return nil, err
	}
	switch w.Type {
	case "text":
		c := &TextContent{Annotations: w.Annotations, Meta: w.Meta}
		if w.Text != nil {
			c.Text = *w.Text
		}
		return c, nil
	case "image":
		return &ImageContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "audio":
		return &AudioContent{Data: w.Data, MIMEType: w.MIMEType, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource_link":
		return &ResourceLink{URI: w.URI, Name: w.Name, Title: w.Title, Description: w.Description,
			MIMEType: w.MIMEType, Size: w.Size, Icons: w.Icons, Annotations: w.Annotations, Meta: w.Meta}, nil
	case "resource":
		if w.Resource == nil {
			return nil, fmt.Errorf("resource content block without a resource")
		}
		return &EmbeddedResource{Resource: w.Resource, Annotations: w.Annotations, Meta: w.Meta}, nil
	}
	return nil, fmt.Errorf("unknown content type %q", w.Type)
}

func decodeContents(raws []jsontext.Value) ([]Content, error) {
	out := make([]Content, 0, len(raws))
	for i, r := range raws {
		c, err := decodeContent(r)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// contentForRevision replaces blocks that a client of revision r cannot
// read with a text note, so old clients see that something was omitted
// rather than failing on an unknown type.
func contentForRevision(r revision, blocks []Content) ([]Content, bool) {
	ok := true
	for _, b := range blocks {
		if !contentSupported(r, b) {
			ok = false
			break
		}
	}
	if ok {
		return blocks, false
	}
	out := make([]Content, len(blocks))
	for i, b := range blocks {
		if contentSupported(r, b) {
			out[i] = b
			continue
		}
		switch b := b.(type) {
		case *AudioContent:
			out[i] = &TextContent{Text: fmt.Sprintf("[audio content (%s, %d bytes) omitted: this client's protocol revision does not support audio]", b.MIMEType, len(b.Data))}
		case *ResourceLink:
			out[i] = &TextContent{Text: fmt.Sprintf("Resource: %s (%s)", b.Name, b.URI)}
		}
	}
	return out, true
}

func contentSupported(r revision, b Content) bool {
	switch b.(type) {
	case *AudioContent:
		return r.audio()
	case *ResourceLink:
		return r.resourceLinks()
	}
	return true
}
