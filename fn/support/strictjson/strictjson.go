// Package strictjson decodes JSON into Go types as the Kubernetes API
// server does: field names match case-sensitively, and unknown and
// duplicate fields are errors (sigs.k8s.io/json's UnmarshalStrict, whose
// results Unmarshal returns, always).
//
// Why not call UnmarshalStrict alone: sigs.k8s.io/json is a fork of
// encoding/json with a reflection cache of its own, and the first decode
// into a RayClusterSpec builds that cache for every type the spec reaches
// (every volume source, probe and affinity type). emit encodes the same
// types with encoding/json, which builds its own cache of the same graph:
// two builds, about 7 % of a render (docs/performance.md). Unmarshal
// decodes with encoding/json, whose cache the rest of the process shares,
// and checks the generic value the JSON was encoded from against the type
// for what encoding/json would let through but UnmarshalStrict refuses or
// reads differently: a key matching a field only case-insensitively, or a
// number decoded into an interface value. (A map has no repeated key.)
// Input with neither decodes to the same value either way
// (FuzzSameAsUnmarshalStrict); any other input, and any error, is decoded
// again by UnmarshalStrict, whose errors carry field paths.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"

	kjson "sigs.k8s.io/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Unmarshal decodes data into v (a non-nil pointer) with
// sigs.k8s.io/json.UnmarshalStrict's results: strict are the unknown and
// duplicate fields (v is decoded nonetheless), err a malformed document or
// a value of the wrong type. data must be the JSON encoding of from, the
// generic value the caller holds (map[string]any, *tree.Map, []any and
// scalars, as json.Marshal or tree.Map.MarshalJSON encode them): its keys
// are checked, not data's, so a repeated key cannot occur.
func Unmarshal(data []byte, from any, v any) (strict []error, err error) {
	if plain(data, from, v) {
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		// The first decode may have filled part of v: start again from zero.
		rv.Elem().Set(reflect.Zero(rv.Elem().Type()))
	}
	return kjson.UnmarshalStrict(data, v)
}

// plain decodes data into v with encoding/json and reports whether that is
// UnmarshalStrict's result: no decode error, and nothing in from's keys
// and values to doubt.
func plain(data []byte, from any, v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(v) != nil {
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		return false // trailing data: let UnmarshalStrict say what it is
	}
	return agrees(from, rv.Type().Elem())
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// agrees reports whether both decoders read the generic value x into type
// t alike: every key below a struct names one of its fields exactly, and
// no number sits below an interface value (UnmarshalStrict keeps integers
// as int64, encoding/json gives float64).
func agrees(x any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if x == nil || selfDecoding(t) {
		return true // null leaves the value as it is; the type reads itself
	}
	switch t.Kind() {
	case reflect.Interface:
		return !hasNumber(x)
	case reflect.Struct:
		fields := fieldsOf(t).exact
		return eachMember(x, func(key string, val any) bool {
			ft, ok := fields[key]
			return ok && agrees(val, ft) // else only case-insensitive, ambiguous or unknown
		})
	case reflect.Map:
		return eachMember(x, func(_ string, val any) bool { return agrees(val, t.Elem()) })
	case reflect.Slice, reflect.Array:
		list, ok := x.([]any)
		if !ok {
			// []byte as a base64 string; anything else failed to decode.
			_, isString := x.(string)
			return isString && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
		}
		for _, e := range list {
			if !agrees(e, t.Elem()) {
				return false
			}
		}
	}
	return true // a scalar encoding/json accepted as it is
}

// eachMember calls f for each member of an object; a value that is not an
// object is a doubt.
func eachMember(x any, f func(key string, val any) bool) bool {
	switch o := x.(type) {
	case map[string]any:
		for k, v := range o {
			if !f(k, v) {
				return false
			}
		}
		return true
	case *tree.Map:
		for _, k := range o.Keys() {
			v, _ := o.Get(k)
			if !f(k, v) {
				return false
			}
		}
		return true
	}
	return false
}

// hasNumber reports whether a number is anywhere in x.
func hasNumber(x any) bool {
	switch v := x.(type) {
	case nil, string, bool:
		return false
	case []any:
		for _, e := range v {
			if hasNumber(e) {
				return true
			}
		}
		return false
	case map[string]any, *tree.Map:
		found := false
		eachMember(v, func(_ string, e any) bool {
			found = hasNumber(e)
			return !found
		})
		return found
	}
	return true
}

// selfDecoding reports whether t decodes itself (json.Unmarshaler or
// encoding.TextUnmarshaler): both decoders call the same method.
func selfDecoding(t reflect.Type) bool {
	if s, ok := selfCache.Load(t); ok {
		return s.(bool)
	}
	p := reflect.PointerTo(t)
	s := p.Implements(jsonUnmarshaler) || p.Implements(textUnmarshaler)
	selfCache.Store(t, s)
	return s
}

var selfCache sync.Map // reflect.Type -> bool

// structFields are the JSON keys a struct type decodes, exactly as
// written (encoding/json's rules: tag name or field name, "-" skipped,
// embedded structs without a name promoted). Names two fields could claim
// at the same depth are left out: they are a doubt.
type structFields struct {
	exact map[string]reflect.Type
}

var fieldCache sync.Map // reflect.Type -> structFields

func fieldsOf(t reflect.Type) structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(structFields)
	}
	type found struct {
		typ   reflect.Type
		depth int
		clash bool
	}
	byName := map[string]*found{}
	var walk func(t reflect.Type, depth int, visiting map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, visiting map[reflect.Type]bool) {
		if visiting[t] {
			return
		}
		visiting[t] = true
		defer delete(visiting, t)
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if ft.Name() == "" && ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if sf.Anonymous {
				if !sf.IsExported() && ft.Kind() != reflect.Struct {
					continue
				}
				if name == "" && ft.Kind() == reflect.Struct {
					walk(ft, depth+1, visiting)
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			switch f := byName[name]; {
			case f == nil || depth < f.depth:
				byName[name] = &found{typ: sf.Type, depth: depth}
			case depth == f.depth:
				f.clash = true
			}
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	out := structFields{exact: map[string]reflect.Type{}}
	for name, f := range byName {
		if !f.clash {
			out.exact[name] = f.typ
		}
	}
	fieldCache.Store(t, out)
	return out
}
