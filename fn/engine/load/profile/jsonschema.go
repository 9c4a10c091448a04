package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// SchemaID is where the committed schema lives in the repository; the
// shipped profiles point editors at it with a yaml-language-server comment.
const SchemaID = "https://github.com/nemo-rl-krm/nemo-rl-krm/profiles/profile.schema.json"

// Key is one documented key of the profile, in schema order.
type Key struct {
	Path        string // dotted, <role> and <name> for the variable parts
	Type        string // as a reader says it: string, integer, mapping ...
	Default     any    // from defaults.yaml; nil when unset or null
	HasDefault  bool
	Enum        []string
	Description string
	Example     string
}

// Keys walks the Go schema (Infra) and returns every key with its type,
// default (from defaults.yaml), enumeration (from validate.go) and the
// documentation in keydocs.go. The JSON Schema and docs/profiles.md are
// both made from it.
func Keys() ([]Key, error) {
	defs, err := parsedDefaults()
	if err != nil {
		return nil, err
	}
	var out []Key
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		for _, f := range docFields(t) {
			p := joinPath(path, f.name)
			k := Key{Path: p, Type: typeName(f.typ), Enum: enumOf(p)}
			d := docOf(p)
			k.Description, k.Example = d.desc, d.example
			if v, ok := tree.Lookup(defs, defaultsPath(p)); ok && v != nil {
				k.Default, k.HasDefault = plain(v), true
			}
			out = append(out, k)
			if st, ok := structOf(f.typ); ok && !isEmbeddedSpec(f.typ) {
				walk(st, p)
			}
			if f.typ.Kind() == reflect.Map {
				if st, ok := structOf(f.typ.Elem()); ok {
					d := docOf(p + ".<name>")
					out = append(out, Key{Path: p + ".<name>", Type: typeName(f.typ.Elem()), Description: d.desc, Example: d.example})
					walk(st, p+".<name>")
				}
			}
			if f.typ.Kind() == reflect.Slice {
				if st, ok := structOf(f.typ.Elem()); ok {
					walk(st, p+"[]")
				}
			}
		}
	}
	walk(reflect.TypeOf(Infra{}), "")
	return out, nil
}

// SchemaJSON is the JSON Schema (draft 2020-12) of a profile file,
// indented, with a final newline: the bytes of profiles/profile.schema.json.
func SchemaJSON() ([]byte, error) {
	keys, err := Keys()
	if err != nil {
		return nil, err
	}
	byPath := map[string]Key{}
	for _, k := range keys {
		byPath[k.Path] = k
	}
	root := objectSchema(reflect.TypeOf(Infra{}), "", byPath)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "nemo-rl-krm infra profile"
	root["description"] = "An infra profile (<recipe>.<profile>.infra.yaml) for nrl-k8s render/check, " +
		"the KRM function and the Helm chart. Generated from fn/engine/load/profile (nrl-k8s schema profile); " +
		"documented in docs/profiles.md. Every string may use OmegaConf interpolation (${user:}, ${oc.env:VAR})."
	props := root["properties"].(map[string]any)
	props["infra"] = map[string]any{
		"$ref":        "#",
		"description": "A profile may also be written as {infra: {...}}; sibling keys of infra are ignored.",
	}
	// The loader reads defaults: before the profile is decoded (the same
	// chain rule as recipes), so it is no key of Infra.
	path := map[string]any{"type": "string", "minLength": 1}
	props["defaults"] = map[string]any{
		"description": "Base profiles this one layers on: a path or a list of paths, each relative to this file. " +
			"Bases load depth-first and merge left to right, this file last; mappings deep-merge, lists and scalars replace " +
			"(docs/profiles.md, Layered profiles). The usual use: one cluster profile shared by an SFT and a DPO profile.",
		"oneOf":    []any{path, map[string]any{"type": "array", "items": path, "minItems": 1}},
		"examples": []any{"../cluster.infra.yaml", []any{"../cluster.infra.yaml", "sft.overrides.yaml"}},
	}
	root["patternProperties"] = map[string]any{
		"^_": map[string]any{"description": "Private keys (e.g. _shared:) hold YAML anchors only; they are dropped before validation."},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func objectSchema(t reflect.Type, path string, keys map[string]Key) map[string]any {
	props := map[string]any{}
	for _, f := range fields(t) {
		p := joinPath(path, f.name)
		props[f.name] = valueSchema(f.typ, docPath(p), keys)
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

func valueSchema(t reflect.Type, path string, keys map[string]Key) map[string]any {
	nullable := false
	if t.Kind() == reflect.Pointer {
		nullable = true
		t = t.Elem()
	}
	var s map[string]any
	switch {
	case t == reflect.TypeOf(Int(0)):
		s = map[string]any{"type": []any{"integer", "string"}}
	case isEmbeddedSpec(t):
		s = map[string]any{"type": "object"}
	case t.Kind() == reflect.Struct:
		s = objectSchema(t, path, keys)
	case t.Kind() == reflect.String:
		s = map[string]any{"type": "string"}
	case t.Kind() == reflect.Bool:
		s = map[string]any{"type": "boolean"}
	case t.Kind() == reflect.Slice:
		s = map[string]any{"type": "array", "items": valueSchema(t.Elem(), path+"[]", keys)}
	case t.Kind() == reflect.Map:
		s = map[string]any{"type": "object"}
		if t.Elem().Kind() != reflect.Interface {
			s["additionalProperties"] = valueSchema(t.Elem(), path+".<name>", keys)
		}
	default:
		s = map[string]any{}
	}
	if nullable || t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
		// null is what defaults.yaml and YAML's empty value write.
		switch ty := s["type"].(type) {
		case string:
			s["type"] = []any{ty, "null"}
		case []any:
			s["type"] = append(ty, "null")
		}
	}
	if k, ok := keys[path]; ok {
		if k.Description != "" {
			s["description"] = k.Description
		}
		if len(k.Enum) > 0 {
			enum := make([]any, len(k.Enum))
			for i, e := range k.Enum {
				enum[i] = e
			}
			if nullable {
				enum = append(enum, nil)
			}
			s["enum"] = enum
		}
		if k.HasDefault {
			s["default"] = k.Default
		}
		if k.Example != "" {
			s["examples"] = []any{exampleValue(k.Example)}
		}
	}
	return s
}

// exampleValue turns a documented YAML example into its JSON value.
func exampleValue(y string) any {
	v, err := tree.Parse("example", []byte(y))
	if err != nil {
		return y
	}
	return plain(v)
}

type field struct {
	name string
	typ  reflect.Type
}

func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: name, typ: f.Type})
	}
	return out
}

// docFields is fields, with the three roles of kuberay / resources
// documented once as <role>.
func docFields(t reflect.Type) []field {
	if t == reflect.TypeOf(Clusters{}) || t == reflect.TypeOf(Resources{}) {
		return []field{{name: "<role>", typ: fields(t)[0].typ}}
	}
	return fields(t)
}

// docPath names a role's keys by <role>.
func docPath(p string) string {
	for _, prefix := range []string{"kuberay.", "resources."} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			for _, r := range Roles {
				if rest == r || strings.HasPrefix(rest, r+".") {
					return prefix + "<role>" + rest[len(r):]
				}
			}
		}
	}
	return p
}

func structOf(t reflect.Type) (reflect.Type, bool) {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t, t.Kind() == reflect.Struct && t != reflect.TypeOf(Int(0))
}

// isEmbeddedSpec: the KubeRay / Kubernetes specs are left open in the
// schema (their own CRD schemas are in fn/analyse/schema/crds); the loader decodes
// them strictly into the real types.
func isEmbeddedSpec(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.PkgPath() != reflect.TypeOf(Infra{}).PkgPath() && t.Kind() == reflect.Struct
}

func typeName(t reflect.Type) string {
	opt := ""
	if t.Kind() == reflect.Pointer {
		opt = " or null"
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeOf(Int(0)):
		return "integer" + opt
	case isEmbeddedSpec(t):
		return t.Name() + opt
	case t.Kind() == reflect.Struct:
		return "mapping" + opt
	case t.Kind() == reflect.String:
		return "string" + opt
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() == reflect.Slice:
		if _, ok := structOf(t.Elem()); ok {
			return "list of mappings"
		}
		return "list of " + typeName(t.Elem()) + "s"
	case t.Kind() == reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "mapping"
		}
		if _, ok := structOf(t.Elem()); ok {
			return "mapping of name to mapping"
		}
		return "mapping of string to " + typeName(t.Elem())
	}
	return t.String()
}

func joinPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// defaultsPath maps a documented path onto defaults.yaml (roles are
// written out there; <name> and [] have no defaults).
func defaultsPath(p string) tree.Path {
	return tree.ParsePath(strings.ReplaceAll(p, "<role>", "training"))
}

// plain turns tree values into encoding/json values.
func plain(v any) any {
	switch t := v.(type) {
	case *tree.Map:
		m := map[string]any{}
		for _, k := range t.Keys() {
			c, _ := t.Get(k)
			m[k] = plain(c)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = plain(e)
		}
		return out
	}
	return v
}

// enums maps a documented path to the values validate.go accepts.
var enums = map[string][]string{
	"podSecurity":                      PodSecurityLevels,
	"scheduler.kind":                   SchedulerKinds,
	"scheduler.dispatch":               DispatchModes,
	"scheduler.kueue.dispatch":         DispatchModes,
	"placement.tolerations[].operator": Operators,
	"placement.tolerations[].effect":   Effects,
	"networking.nccl_net":              NCCLNets,
	"workspace.kind":                   WorkspaceKinds,
	"hf_cache.kind":                    HFCacheKinds,
	"checkpoints.kind":                 CheckpointKinds,
	"submit.kind":                      SubmitKinds,
	"submit.portForward":               PortForwards,
	"submit.devPod":                    DevPodModes,
	"submit.submitter":                 Submitters,
	"launch.mode":                      LaunchModes,
	"launch.runMode":                   RunModes,
	"launch.codeSource":                CodeSources,
	"launch.rayjob.submissionMode":     SubmissionModes,
}

func enumOf(p string) []string { return enums[p] }

func docOf(p string) keyDoc {
	if d, ok := keyDocs()[p]; ok {
		return d
	}
	// A cluster's own dra block documents like the profile's.
	if rest, ok := strings.CutPrefix(p, "kuberay.<role>.dra"); ok {
		if d, ok := keyDocs()["dra"+rest]; ok {
			d.desc = "For this cluster only, over the profile's `dra" + rest + "`. " + d.desc
			return d
		}
	}
	return keyDoc{}
}

// MissingDocs lists schema keys without a description (a test keeps it
// empty, so a new key cannot ship undocumented).
func MissingDocs() []string {
	keys, err := Keys()
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, k := range keys {
		if k.Description == "" {
			out = append(out, k.Path)
		}
	}
	seen := map[string]bool{}
	for _, k := range keys {
		seen[k.Path] = true
	}
	for p := range keyDocs() {
		if !seen[p] {
			out = append(out, fmt.Sprintf("%s (documented but not in the schema)", p))
		}
	}
	return out
}
