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
			fa.fields[name] = flatField{offset: f.Offset, kind: k}
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
// (1.0, 1e2, out of range) goes the long way.
func (f flatField) setInt(p unsafe.Pointer, v []byte) bool {
	neg := v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return false
	}
	var n uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + uint64(c-'0')
	}
	if neg {
		if n > 1<<63 {
			return false
		}
		x := -int64(n)
		var lo int64
		switch f.kind {
		case reflect.Int:
			lo = math.MinInt
		case reflect.Int8:
			lo = math.MinInt8
		case reflect.Int16:
			lo = math.MinInt16
		case reflect.Int32:
			lo = math.MinInt32
		case reflect.Int64:
			lo = math.MinInt64
		default:
			return false // a sign in an unsigned field
		}
		if x < lo {
			return false
		}
		return storeInt(p, f.kind, x)
	}
	var hi uint64
	switch f.kind {
	case reflect.Int:
		hi = math.MaxInt
	case reflect.Int8:
		hi = math.MaxInt8
	case reflect.Int16:
		hi = math.MaxInt16
	case reflect.Int32:
		hi = math.MaxInt32
	case reflect.Int64:
		hi = math.MaxInt64
	case reflect.Uint:
		hi = math.MaxUint
	case reflect.Uint8:
		hi = math.MaxUint8
	case reflect.Uint16:
		hi = math.MaxUint16
	case reflect.Uint32:
		hi = math.MaxUint32
	default:
		hi = math.MaxUint64
	}
	if n > hi {
		return false
	}
	switch f.kind {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return storeInt(p, f.kind, int64(n))
	}
	return storeUint(p, f.kind, n)
}

func storeInt(p unsafe.Pointer, k reflect.Kind, x int64) bool {
	switch k {
	case reflect.Int:
		*(*int)(p) = int(x)
	case reflect.Int8:
		*(*int8)(p) = int8(x)
	case reflect.Int16:
		*(*int16)(p) = int16(x)
	case reflect.Int32:
		*(*int32)(p) = int32(x)
	default:
		*(*int64)(p) = x
	}
	return true
}

func storeUint(p unsafe.Pointer, k reflect.Kind, x uint64) bool {
	switch k {
	case reflect.Uint:
		*(*uint)(p) = uint(x)
	case reflect.Uint8:
		*(*uint8)(p) = uint8(x)
	case reflect.Uint16:
		*(*uint16)(p) = uint16(x)
	case reflect.Uint32:
		*(*uint32)(p) = uint32(x)
	default:
		*(*uint64)(p) = x
	}
	return true
}
