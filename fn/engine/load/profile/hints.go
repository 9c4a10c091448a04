package profile

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/suggest"
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
