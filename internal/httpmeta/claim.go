package httpmeta

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// MetaProtocolVersion is the _meta key naming a 2026-07-28 request's
// revision; package mcp exports the same text as mcp.MetaProtocolVersion.
const MetaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// PerRequestClaim reports whether params claim a protocol revision in
// _meta, which makes the message a 2026-07-28 one whatever its method. It
// looks for the key before decoding anything, so session-era traffic pays
// one byte search.
func PerRequestClaim(params []byte) bool {
	if len(params) == 0 || !bytes.Contains(params, []byte(MetaProtocolVersion)) {
		return false
	}
	meta := member(params, "_meta")
	return len(meta) > 0 && meta[0] == '{' && member(meta, MetaProtocolVersion) != nil
}

// member returns the raw value of the top-level member name of a JSON
// object, or nil. It reads as the engine's own lookups do: the first of
// repeated names counts, invalid UTF-8 is tolerated, and text after the
// member is not checked.
func member(obj []byte, name string) []byte {
	sd := decoders.Get().(*decoder)
	defer sd.release()
	// A bytes.Buffer lets the decoder read in place: the value returned
	// is a slice of obj.
	sd.buf = *bytes.NewBuffer(obj)
	sd.dec.Reset(&sd.buf, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	d := &sd.dec
	if tok, err := d.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	for d.PeekKind() == '"' {
		k, err := d.ReadValue()
		if err != nil {
			return nil
		}
		if nameIs(k, name) {
			v, err := d.ReadValue()
			if err != nil {
				return nil
			}
			end := int(d.InputOffset())
			return obj[end-len(v) : end : end]
		}
		if d.SkipValue() != nil {
			return nil
		}
	}
	return nil
}

// nameIs reports whether raw, a member name as read (quoted), is name.
func nameIs(raw []byte, name string) bool {
	if len(raw) < 2 {
		return false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1:len(raw)-1]) == name
	}
	u, err := jsontext.AppendUnquote(nil, raw)
	return err == nil && string(u) == name
}

// A decoder is kept for reuse: a new one costs several allocations.
type decoder struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var decoders = sync.Pool{New: func() any { return new(decoder) }}

// release returns the decoder to the pool, keeping nothing of its input.
func (sd *decoder) release() {
	sd.buf = bytes.Buffer{}
	sd.dec.Reset(&sd.buf)
	decoders.Put(sd)
}
