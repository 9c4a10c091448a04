// Package tree is the untyped, order-preserving form of a YAML document that
// the loader and the resolver work on before anything is decoded into types.
//
// A value is one of: *Map, []any, string, int64, float64, bool or nil.
// Maps keep the key order of the source so that `values` output and error
// messages follow the file a user wrote.
package tree

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Map is an ordered string-keyed mapping.
type Map struct {
	keys []string
	vals map[string]any
}

// NewMap returns an empty map.
func NewMap() *Map { return &Map{vals: map[string]any{}} }

// newMapCap returns an empty map sized for n keys: copies and parses know
// the size up front, and growing a Go map step by step dominated the
// memory of big recipes.
func newMapCap(n int) *Map { return &Map{keys: make([]string, 0, n), vals: make(map[string]any, n)} }

// Len is the number of keys.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// Keys returns the keys in insertion order (a copy).
func (m *Map) Keys() []string {
	if m == nil {
		return nil
	}
	return append([]string(nil), m.keys...)
}

// Get returns the value stored under k.
func (m *Map) Get(k string) (any, bool) {
	if m == nil {
		return nil, false
	}
	v, ok := m.vals[k]
	return v, ok
}

// Set stores v under k, keeping the position of an existing key.
func (m *Map) Set(k string, v any) {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// Delete removes k.
func (m *Map) Delete(k string) {
	if _, ok := m.vals[k]; !ok {
		return
	}
	delete(m.vals, k)
	for i, key := range m.keys {
		if key == k {
			m.keys = append(m.keys[:i:i], m.keys[i+1:]...)
			break
		}
	}
}

// MarshalJSON writes the map with its keys in order, so a tree can be handed
// to encoding/json decoders (typed, strict) without losing information.
func (m *Map) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range m.Keys() {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := json.Marshal(m.vals[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Copy returns a deep copy of v.
func Copy(v any) any {
	switch t := v.(type) {
	case *Map:
		out := newMapCap(len(t.keys))
		for _, k := range t.keys {
			out.keys = append(out.keys, k)
			out.vals[k] = Copy(t.vals[k])
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Copy(e)
		}
		return out
	default:
		return v
	}
}

// Merge deep-merges src over dst the way OmegaConf does: mappings merge key by
// key, anything else (lists, scalars) replaces. A source mapping carrying
// `_override_: true` replaces the destination mapping instead (NeMo-RL's
// loader rule); the marker itself is dropped. dst is modified and returned.
func Merge(dst, src any) any {
	sm, ok := src.(*Map)
	if !ok {
		return Copy(src)
	}
	if ov, _ := sm.Get("_override_"); ov == true {
		out := Copy(sm).(*Map)
		out.Delete("_override_")
		return stripOverride(out)
	}
	dm, ok := dst.(*Map)
	if !ok {
		return stripOverride(Copy(sm))
	}
	for _, k := range sm.keys {
		sv := sm.vals[k]
		if dv, exists := dm.vals[k]; exists {
			dm.Set(k, Merge(dv, sv))
		} else {
			dm.Set(k, stripOverride(Copy(sv)))
		}
	}
	return dm
}

// stripOverride removes `_override_` markers from a subtree that is taken
// whole (nothing below it to replace).
func stripOverride(v any) any {
	switch t := v.(type) {
	case *Map:
		t.Delete("_override_")
		for _, k := range t.keys {
			t.vals[k] = stripOverride(t.vals[k])
		}
	case []any:
		for i := range t {
			t[i] = stripOverride(t[i])
		}
	}
	return v
}

// Path is a parsed dotted key path such as `policy.generation.colocated`.
type Path []string

// ParsePath splits a dotted path. List indices are written as plain numbers
// (`a.0.b`) or in brackets (`a[0].b`).
func ParsePath(s string) Path {
	s = strings.ReplaceAll(s, "[", ".")
	s = strings.ReplaceAll(s, "]", "")
	var p Path
	for _, part := range strings.Split(s, ".") {
		if part != "" {
			p = append(p, part)
		}
	}
	return p
}

func (p Path) String() string { return strings.Join(p, ".") }

// Lookup follows p from root.
func Lookup(root any, p Path) (any, bool) {
	cur := root
	for _, seg := range p {
		switch t := cur.(type) {
		case *Map:
			v, ok := t.Get(seg)
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			cur = t[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// SetPath stores v at p, creating intermediate maps. It fails when a segment
// crosses a scalar or an out-of-range list index.
func SetPath(root *Map, p Path, v any) error {
	if len(p) == 0 {
		return fmt.Errorf("empty key")
	}
	var cur any = root
	for i, seg := range p {
		last := i == len(p)-1
		switch t := cur.(type) {
		case *Map:
			if last {
				t.Set(seg, v)
				return nil
			}
			next, ok := t.Get(seg)
			if !ok || next == nil {
				next = NewMap()
				t.Set(seg, next)
			}
			cur = next
		case []any:
			idx, err := strconv.Atoi(seg)
			if err != nil || idx < 0 || idx >= len(t) {
				return fmt.Errorf("%s: index %q out of range", p[:i].String(), seg)
			}
			if last {
				t[idx] = v
				return nil
			}
			cur = t[idx]
		default:
			return fmt.Errorf("%s is %s, not a mapping", p[:i].String(), AKind(cur))
		}
	}
	return nil
}

// DeletePath removes the key at p; it reports whether something was removed.
func DeletePath(root *Map, p Path) bool {
	if len(p) == 0 {
		return false
	}
	parent, ok := Lookup(root, p[:len(p)-1])
	if !ok {
		return false
	}
	m, ok := parent.(*Map)
	if !ok {
		return false
	}
	if _, ok := m.Get(p[len(p)-1]); !ok {
		return false
	}
	m.Delete(p[len(p)-1])
	return true
}

// KindOf names the kind of a value for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case *Map:
		return "mapping"
	case []any:
		return "list"
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case nil:
		return "null"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// AKind is KindOf with its article ("a mapping", "an integer"), for
// messages that say what was found.
func AKind(v any) string { return Article(KindOf(v)) }

// Article puts "a" or "an" before a noun.
func Article(noun string) string {
	if noun != "" && strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// Walk calls fn for every scalar leaf with its path, in document order.
func Walk(v any, p Path, fn func(Path, any)) {
	switch t := v.(type) {
	case *Map:
		for _, k := range t.keys {
			Walk(t.vals[k], append(append(Path(nil), p...), k), fn)
		}
	case []any:
		for i, e := range t {
			Walk(e, append(append(Path(nil), p...), strconv.Itoa(i)), fn)
		}
	default:
		fn(p, v)
	}
}

// SortedKeys returns the keys of a Go map in order, for deterministic loops.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
