package mcp

import (
	"encoding"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-json-experiment/json"
	"github.com/mcpgate/mcpgate/internal/jsonscan"
)

// flatArgs decodes a typed tool's arguments into its input struct in one
// pass, when the struct is flat: exported fields of string, boolean and
// number kinds, named plainly. That is the shape of most tool inputs, and
// the reflective decoder's set-up is most of the cost of decoding them.
//
// Like flatSchema it only handles what it is sure of, and decode says
// false for anything else (escaped strings, numbers that need range or
// syntax checks, duplicate names, nested values): the caller then resets
// the value and decodes it with json.Unmarshal, which rules and words the
// error. FuzzFlatArgs holds the two to the same results.
type flatArgs struct {
	fields map[string]flatField
}

type flatField struct {
	offset uintptr
	kind   reflect.Kind
	bits   int  // an integer field's size
	signed bool // an integer field's signedness
}

// newFlatArgs returns the flat decoder of struct type t, or nil.
func newFlatArgs(t reflect.Type) *flatArgs {
	if t.Kind() != reflect.Struct || customDecoding(t) {
		return nil
	}
	fa := &flatArgs{fields: map[string]flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // embedded fields are inlined: the long way
		}
		if !f.IsExported() {
			if tag, ok := f.Tag.Lookup("json"); ok && tag != "-" {
				return nil // json refuses the type: let it say so
			}
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			if tag == "-" {
				continue
			}
			n, opts, _ := strings.Cut(tag, ",")
			if strings.HasPrefix(n, "'") {
				return nil // a quoted name
			}
			for opts != "" {
				var o string
				o, opts, _ = strings.Cut(opts, ",")
				if o != "omitempty" && o != "omitzero" {
					return nil // string, case:…, format:…, inline…
				}
			}
			if n != "" {
				name = n
			}
		}
		if customDecoding(f.Type) {
			return nil
		}
		switch k := f.Type.Kind(); k {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if _, dup := fa.fields[name]; dup {
				return nil
			}
			ff := flatField{offset: f.Offset, kind: k}
			switch k {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				ff.bits, ff.signed = f.Type.Bits(), true
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				ff.bits = f.Type.Bits()
			}
			fa.fields[name] = ff
		default:
			return nil
		}
	}
	return fa
}

// customDecoding reports whether json.Unmarshal decodes t other than by
// its kind: it has a decoding method, or it is a type of package time
// (time.Duration is an int64 with its own formats).
func customDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.PkgPath() == "time" ||
		pt.Implements(reflect.TypeFor[json.Unmarshaler]()) ||
		pt.Implements(reflect.TypeFor[json.UnmarshalerFrom]()) ||
		pt.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// decode fills the zero struct at dst from raw, and reports whether it
// could; on false dst may be partly filled.
func (fa *flatArgs) decode(raw []byte, dst unsafe.Pointer) bool {
	end, ok := jsonscan.Members(raw, 0, func(name, v []byte) bool {
		f, known := fa.fields[string(name)]
		if !known {
			return true // unknown members are ignored, as json.Unmarshal does
		}
		if v[0] == 'n' {
			return true // null leaves the zero value
		}
		return f.set(unsafe.Add(dst, f.offset), v)
	})
	return ok && jsonscan.SkipSpace(raw, end) == len(raw)
}

// set stores the JSON value v (not null) in the field at p.
func (f flatField) set(p unsafe.Pointer, v []byte) bool {
	switch f.kind {
	case reflect.String:
		s, plain := jsonscan.Unquoted(v)
		if !plain {
			return false
		}
		*(*string)(p) = string(s)
	case reflect.Bool:
		switch v[0] {
		case 't':
			*(*bool)(p) = true
		case 'f':
		default:
			return false
		}
	case reflect.Float64, reflect.Float32:
		if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
			return false
		}
		bits := 64
		if f.kind == reflect.Float32 {
			bits = 32
		}
		x, err := strconv.ParseFloat(unsafe.String(&v[0], len(v)), bits)
		if err != nil {
			return false
		}
		if bits == 32 {
			*(*float32)(p) = float32(x)
		} else {
			*(*float64)(p) = x
		}
	default:
		return f.setInt(p, v)
	}
	return true
}

// setInt stores a JSON integer written with plain digits; anything else
// (1.0, 1e2, out of range, a sign on an unsigned field) goes the long way.
func (f flatField) setInt(p unsafe.Pointer, v []byte) bool {
	neg := v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 19 || neg && !f.signed {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	// The largest magnitude the field holds: 2^bits-1 unsigned,
	// 2^(bits-1)-1 signed, one more below zero.
	limit := uint64(math.MaxUint64) >> (64 - f.bits)
	if f.signed {
		limit >>= 1
		if neg {
			limit++
		}
	}
	if n > limit {
		return false
	}
	if neg {
		n = -n // two's complement: its low bits are the field's
	}
	// Signed and unsigned integers of one size share a layout.
	switch f.bits {
	case 8:
		*(*uint8)(p) = uint8(n)
	case 16:
		*(*uint16)(p) = uint16(n)
	case 32:
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
	return true
}
