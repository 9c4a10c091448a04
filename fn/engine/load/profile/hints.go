package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/suggest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Errors that say how to fix them: the nearest valid key for a typo, the
// escape for a shell expansion, and the line in the user's file. Only the
// error path reads the file again.

// nearestKey is the valid key at the parent of a strict-decoding field path
// (kuberay.training.spec.workerGroupSpecs[0].templat) closest to its last
// segment, or "" when none is close.
func nearestKey(fieldPath string) string {
	segs := splitField(fieldPath)
	if len(segs) == 0 {
		return ""
	}
	t := reflect.TypeOf(Infra{})
	for _, s := range segs[:len(segs)-1] {
		t = descend(t, s)
		if t == nil {
			return ""
		}
	}
	return suggest.Closest(segs[len(segs)-1], jsonNames(t))
}

// splitField turns a.b[0].c into a, b, [0], c.
func splitField(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part[i:], ']')
			if j < 0 {
				break
			}
			out = append(out, part[i:i+j+1])
			part = part[i+j+1:]
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// descend follows one path segment through structs (by JSON name, embedded
// structs flattened), maps (any key) and lists ([i]).
func descend(t reflect.Type, seg string) reflect.Type {
	t = deref(t)
	switch t.Kind() {
	case reflect.Map:
		return t.Elem()
	case reflect.Slice, reflect.Array:
		if strings.HasPrefix(seg, "[") {
			return t.Elem()
		}
	case reflect.Struct:
		if f, ok := fieldByJSON(t, seg); ok {
			return f
		}
	}
	return nil
}

func fieldByJSON(t reflect.Type, name string) (reflect.Type, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			if ft, ok := fieldByJSON(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if tag == name {
			return f.Type, true
		}
	}
	return nil, false
}

func jsonNames(t reflect.Type) []string {
	t = deref(t)
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && tag == "" {
			out = append(out, jsonNames(f.Type)...)
			continue
		}
		if tag != "" && tag != "-" && f.IsExported() {
			out = append(out, tag)
		}
	}
	return out
}

// keyLine is the line of the key at fieldPath in a profile file (or in the
// infra: mapping of a recipe), following aliases to where the anchor's
// content is written; 0 when the key is not in the file.
func keyLine(doc *yaml.Node, fieldPath string) int {
	if doc == nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	if v := mapValue(n, "infra"); v != nil && v.Kind == yaml.MappingNode {
		n = v
	}
	return nodeLine(n, splitField(fieldPath), 0)
}

// nodeLine walks segs from n. A key may hold dots (`nvidia.com/gpu` under
// limits), so a segment not found as a key is joined with the next ones.
func nodeLine(n *yaml.Node, segs []string, line int) int {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if len(segs) == 0 {
		return line
	}
	if n == nil {
		return 0
	}
	if s := segs[0]; strings.HasPrefix(s, "[") {
		i, err := strconv.Atoi(strings.Trim(s, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
			return 0
		}
		return nodeLine(n.Content[i], segs[1:], n.Content[i].Line)
	}
	if n.Kind != yaml.MappingNode {
		return 0
	}
	key := ""
	for j, s := range segs {
		if strings.HasPrefix(s, "[") {
			break
		}
		if j > 0 {
			key += "."
		}
		key += s
		if k, v := mapEntry(n, key); k != nil {
			if l := nodeLine(v, segs[j+1:], k.Line); l > 0 {
				return l
			}
		}
	}
	return 0
}

// parseNode is the file as a YAML node tree, aliases unexpanded (so an
// alias bomb costs nothing here); nil when it does not parse.
func parseNode(data []byte) *yaml.Node {
	if len(data) == 0 {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil
	}
	return &doc
}

func mapEntry(n *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(n, key)
	return v
}

// shellExpansionRE finds a shell parameter expansion that OmegaConf reads
// as an interpolation: ${NAME:-x}, ${NAME-x}, ${NAME:=x}, ${NAME:?x},
// ${NAME:+x}, ${#NAME}, ${NAME%x}, ${NAME#x}, ${NAME/x/y}, and the plain
// ${NAME} of an upper-case name (no profile key is upper case).
var shellExpansionRE = lazyre.New(`(^|[^\\])(\$\{(?:#[A-Za-z_][A-Za-z0-9_]*|[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+]|%|#|/)[^}]*|[A-Z_][A-Z0-9_]*)\})`)

// shellHint explains an interpolation error caused by shell syntax: what to
// write instead and where. ok is false when the error has another cause.
func shellHint(ie *interp.Error, data []byte) (msg string, ok bool) {
	m := shellExpansionRE().FindStringSubmatch(ie.Value)
	if m == nil {
		return "", false
	}
	expr := m[2]
	where := ""
	if line := textLine(data, expr); line > 0 {
		where = fmt.Sprintf("line %d: ", line)
	}
	return fmt.Sprintf("%s%s is shell syntax that OmegaConf (which resolves every profile string) cannot resolve; write \\%s so the shell receives it", where, expr, expr), true
}

// textLine is the first line of data holding s not escaped with a
// backslash; 0 when there is none.
func textLine(data []byte, s string) int {
	for i, l := range strings.Split(string(data), "\n") {
		for off := 0; ; {
			j := strings.Index(l[off:], s)
			if j < 0 {
				break
			}
			if off+j == 0 || l[off+j-1] != '\\' {
				return i + 1
			}
			off += j + 1
		}
	}
	return 0
}

// typeError explains a decode failure. sigs.k8s.io/json's type errors are
// of an internal type, so the same JSON is decoded again with
// encoding/json, whose *json.UnmarshalTypeError carries the field, the JSON
// value kind and the Go type as values (only on this error path).
func typeError(rt *tree.Map, data []byte, err error) (field, msg string) {
	var again Infra
	te, ok := errors.AsType[*json.UnmarshalTypeError](json.Unmarshal(data, &again))
	if !ok || te.Type == nil {
		if f, v, ok := badQuantity(rt, ""); ok {
			return f, fmt.Sprintf("found %q; expected a Kubernetes quantity (e.g. 4, 500m, 16Gi)", v)
		}
		return "", strings.TrimPrefix(err.Error(), "json: ")
	}
	field = jsonFieldPath(te.Field)
	goType := te.Type.String()
	kind, value, _ := strings.Cut(te.Value, " ")
	msg = fmt.Sprintf("found %s; expected %s", jsonKind(kind), friendlyType(goType))
	bad := func(v any) bool { return kindMatches(v, kind) }
	if kind == "number" && value != "" && strings.Contains(goType, "int") {
		// A number the Go type cannot hold: say its range.
		msg = fmt.Sprintf("found %s; expected %s", value, intRange(goType))
		bad = func(v any) bool { return fmt.Sprint(v) == value }
	}
	return withIndices(rt, field, bad), msg
}

// quantityKeys hold a resource.Quantity, or a map of them, in the
// Kubernetes types a profile embeds (container and claim resources,
// emptyDir.sizeLimit, PVC capacity).
var quantityKeys = map[string]bool{"limits": true, "requests": true, "capacity": true, "sizeLimit": true, "overhead": true}

// badQuantity finds the first value, in file order, at a quantity key that
// resource.ParseQuantity refuses: the quantity decoder's error names
// neither the field nor the value.
func badQuantity(v any, path string) (field, value string, ok bool) {
	switch t := v.(type) {
	case *tree.Map:
		for _, k := range t.Keys() {
			child, _ := t.Get(k)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if quantityKeys[k] {
				if f, val, ok := firstBadQuantity(child, p); ok {
					return f, val, true
				}
			}
			if f, val, ok := badQuantity(child, p); ok {
				return f, val, true
			}
		}
	case []any:
		for i, e := range t {
			if f, val, ok := badQuantity(e, fmt.Sprintf("%s[%d]", path, i)); ok {
				return f, val, true
			}
		}
	}
	return "", "", false
}

// firstBadQuantity checks a quantity value or a map of them.
func firstBadQuantity(v any, path string) (field, value string, ok bool) {
	if m, isMap := v.(*tree.Map); isMap {
		for _, k := range m.Keys() {
			child, _ := m.Get(k)
			if _, nested := child.(*tree.Map); nested {
				continue
			}
			if f, val, ok := firstBadQuantity(child, path+"."+k); ok {
				return f, val, true
			}
		}
		return "", "", false
	}
	switch t := v.(type) {
	case string:
		if _, err := resource.ParseQuantity(t); err != nil {
			return path, t, true
		}
	case bool:
		return path, fmt.Sprint(t), true
	}
	return "", "", false
}

// withIndices puts back the list indices encoding/json leaves out of a field
// path (`workerGroupSpecs.replicas` -> `workerGroupSpecs[1].replicas`): the
// first element whose value at the rest of the path has the kind json
// complained about.
func withIndices(root any, field string, bad func(any) bool) string {
	var walk func(v any, segs []string, out string) (string, bool)
	walk = func(v any, segs []string, out string) (string, bool) {
		if list, ok := v.([]any); ok {
			for i, e := range list {
				if p, ok := walk(e, segs, fmt.Sprintf("%s[%d]", out, i)); ok {
					return p, true
				}
			}
			return "", false
		}
		if len(segs) == 0 {
			return out, bad(v)
		}
		m, ok := v.(*tree.Map)
		if !ok {
			return "", false
		}
		child, ok := m.Get(segs[0])
		if !ok {
			return "", false
		}
		next := segs[0]
		if out != "" {
			next = out + "." + segs[0]
		}
		return walk(child, segs[1:], next)
	}
	if p, ok := walk(root, strings.Split(field, "."), ""); ok {
		return p
	}
	return field
}

func kindMatches(v any, jsonKind string) bool {
	switch jsonKind {
	case "string":
		_, ok := v.(string)
		return ok
	case "number":
		switch v.(type) {
		case int64, float64:
			return true
		}
	case "bool":
		_, ok := v.(bool)
		return ok
	case "object":
		_, ok := v.(*tree.Map)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return false
}

// intRange names a Go integer type's range.
func intRange(t string) string {
	switch t {
	case "int32":
		return "an integer from -2147483648 to 2147483647"
	case "uint32":
		return "an integer from 0 to 4294967295"
	case "int16":
		return "an integer from -32768 to 32767"
	case "uint8", "byte":
		return "an integer from 0 to 255"
	case "int8":
		return "an integer from -128 to 127"
	}
	return "an integer that fits " + t
}

// jsonFieldPath drops the Go names of embedded structs (ProbeHandler,
// VolumeSource, ...) that encoding/json puts into a field path.
func jsonFieldPath(p string) string {
	var out []string
	for _, seg := range strings.Split(p, ".") {
		if seg != "" && seg[0] >= 'A' && seg[0] <= 'Z' {
			continue
		}
		out = append(out, seg)
	}
	return strings.Join(out, ".")
}

// jsonKind names an encoding/json value kind in the profile's terms.
func jsonKind(k string) string {
	switch k {
	case "object":
		return "a mapping"
	case "array":
		return "a list"
	case "bool":
		return "a boolean"
	}
	return tree.Article(k)
}

func friendlyType(t string) string {
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.Contains(t, "int"), strings.HasSuffix(t, ".Int"):
		return "an integer"
	case t == "bool":
		return "a boolean"
	}
	return t
}
