package wire

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Member returns the raw value of the top-level member name of a JSON
// object, or nil. It reads with the real decoder (jsontext), as the engine's
// lookups of _meta, progressToken and a schema's type need: the first of
// repeated names counts, invalid UTF-8 is tolerated, and text after the
// member is not checked.
func Member(obj []byte, name string) []byte {
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
		if NameIs(k, name) {
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

// NameIs reports whether raw, a member name as read (quoted), is name.
func NameIs(raw []byte, name string) bool {
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
