package profile

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/strictjson"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

//go:embed defaults.yaml
var defaultsYAML []byte

// parsedDefaults parses the embedded defaults once per process; a KRM
// function rendering 1,000 runs loads the profile 1,000 times.
var parsedDefaults = sync.OnceValues(func() (any, error) {
	return tree.Parse("defaults.yaml", defaultsYAML)
})

// DefaultNamespace is used when neither the profile nor the run names one.
// nrl-k8s asks the kubeconfig; a render must not depend on the machine.
const DefaultNamespace = "default"

// Input names the layers of a profile, lowest first (docs/nrl-k8s.md §2.4).
type Input struct {
	Loader *recipe.Loader
	// UserDefaults is an optional user defaults file (layer 2).
	UserDefaults string
	// File is the --infra file (layer 3a); empty when the recipe carries it.
	File string
	// RecipeInfra is the recipe's own `infra:` mapping (layer 3b).
	RecipeInfra *tree.Map
	RecipeFile  string
	// Overrides are `infra.`-side overrides with the prefix removed (layer 4).
	Overrides []string
	User      string
	// Namespace, when set, wins over the profile's.
	Namespace string
	Env       func(string) (string, bool)
}

// Loaded is a resolved, validated profile.
type Loaded struct {
	Infra *Infra
	// Tree is the resolved profile as data, in the order the files give.
	Tree *tree.Map
	// File is the profile's path (for diagnostics).
	File string
	// HostEnv are the launch.env keys whose value reads ${oc.env:...}
	// (the environment of whoever renders), sorted.
	HostEnv []string

	locate func(diag.List) diag.List
}

// Load merges, resolves, decodes and validates a profile.
func Load(in Input) (*Loaded, diag.List) {
	var ds diag.List
	file := in.File
	switch {
	case file == "" && in.RecipeInfra == nil && in.UserDefaults != "":
		file = in.UserDefaults
	case file == "":
		file = in.RecipeFile
	}
	base, err := parsedDefaults()
	if err != nil {
		ds.Errorf("defaults.yaml", "", "%v", err)
		return nil, ds
	}
	// Merge writes into its destination: each load starts from a copy.
	merged := tree.Copy(base)
	if in.UserDefaults != "" {
		m, err := in.Loader.Load(in.UserDefaults)
		if err != nil {
			return nil, diag.FromError(err, in.UserDefaults)
		}
		merged = tree.Merge(merged, unwrap(m.Tree))
	}
	switch {
	case in.File != "" && in.RecipeInfra != nil:
		ds.Errorf(in.RecipeFile, "infra", "infra config supplied via --infra but the recipe also contains an `infra:` key — choose one or the other")
		return nil, ds
	case in.File != "":
		m, err := in.Loader.Load(in.File)
		if err != nil {
			return nil, diag.FromError(err, in.File)
		}
		merged = tree.Merge(merged, stripPrivate(unwrap(m.Tree)))
	case in.RecipeInfra != nil:
		merged = tree.Merge(merged, stripPrivate(tree.Copy(in.RecipeInfra).(*tree.Map)))
	case in.UserDefaults != "":
		// nrl-k8s loads a recipe without `infra:` when the user defaults
		// hold the profile (namespace, image, clusters, entrypoint).
	default:
		ds.Errorf("", "", "no infra profile: pass --infra FILE, put an `infra:` mapping in the recipe, or give a user defaults layer (--defaults, $NRL_K8S_DEFAULTS)")
		return nil, ds
	}
	root := merged.(*tree.Map)
	for _, o := range in.Overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			ds.Errorf(file, o, "infra override %q: expected infra.KEY=VALUE", o)
			continue
		}
		val, err := tree.Parse("override", []byte(v))
		if err != nil {
			val = v
		}
		if m, isMap := val.(*tree.Map); isMap && m.Len() == 0 && strings.TrimSpace(v) != "{}" {
			val = v
		}
		if err := tree.SetPath(root, tree.ParsePath(k), val); err != nil {
			ds.Errorf(file, k, "infra override %q: %v", o, err)
		}
	}
	if ds.HasErrors() {
		return nil, ds
	}
	hostEnv := hostEnvKeys(root)
	resolved, err := interp.Resolve(root, interp.Options{User: in.User, Env: in.Env})
	if err != nil {
		if ie, ok := errors.AsType[*interp.Error](err); ok {
			if hint, ok := shellHint(ie, readFile(in.Loader, file)); ok {
				ds.Errorf(file, ie.Path, "%s", hint)
			} else {
				ds.Errorf(file, ie.Path, "cannot resolve %q: %s", ie.Value, ie.Msg)
			}
		} else {
			ds.Errorf(file, "", "%v", err)
		}
		return nil, ds
	}
	rt := resolved.(*tree.Map)
	if in.Namespace != "" {
		rt.Set("namespace", in.Namespace)
	}
	if ns, _ := rt.Get("namespace"); ns == nil || ns == "" {
		rt.Set("namespace", DefaultNamespace)
	}
	stripSchemaStrings(rt, nil)
	// Parsed once, on the first finding that needs a line: a profile with
	// many unknown keys must not be parsed once per key.
	loaded := &Loaded{Tree: rt, File: file, HostEnv: hostEnv,
		locate: newLocator(file, in.Overrides, func() []byte { return readFile(in.Loader, file) })}
	infra, dds := decode(file, rt)
	ds = append(ds, loaded.Locate(dds)...)
	if ds.HasErrors() {
		return nil, ds
	}
	loaded.Infra = infra
	vds := validate(file, infra)
	if in.Namespace == "" {
		// The profile's own namespace: refused here, at its key, not on
		// every object it would land in.
		for _, e := range validation.IsDNS1123Label(infra.Namespace) {
			vds.Errorf(file, "namespace", "found %q; expected a namespace name (DNS-1123 label): %s", infra.Namespace, e)
		}
	}
	ds = append(ds, loaded.Locate(vds)...)
	return loaded, ds
}

// Locate says where each finding about a profile field comes from: the
// `infra.` override that set the field (or a mapping above it), else the
// line of its key in the profile file. Findings of other files, without a
// field, or already located are returned as they are.
func (l *Loaded) Locate(ds diag.List) diag.List {
	if l == nil || l.locate == nil {
		return ds
	}
	return l.locate(ds)
}

// newLocator builds Loaded.Locate; the file is parsed on the first finding
// that needs a line, not on a clean load.
func newLocator(file string, overrides []string, src func() []byte) func(diag.List) diag.List {
	atLine := sync.OnceValue(func() func(string) string { return lineFinder(src()) })
	return func(ds diag.List) diag.List {
		out := make(diag.List, len(ds))
		for i, d := range ds {
			out[i] = d
			if d.File != file || d.Field == "" || strings.HasPrefix(d.Message, "infra override ") || strings.HasPrefix(d.Message, "set by override ") {
				continue
			}
			// An override's value is not in the file: a line a finding
			// names (of the entrypoint, say) is a line of the override.
			if o := overrideOf(overrides, d.Field); o != "" {
				out[i].Message = fmt.Sprintf("set by override %q: %s", "infra."+o, d.Message)
				continue
			}
			if !strings.HasPrefix(d.Message, "line ") {
				out[i].Message = atLine()(d.Field) + d.Message
			}
		}
		return out
	}
}

// overrideOf is the last override (KEY=VALUE, prefix removed) setting field
// or a mapping above it; "" when none does.
func overrideOf(overrides []string, field string) string {
	for i := len(overrides) - 1; i >= 0; i-- {
		k, _, _ := strings.Cut(overrides[i], "=")
		k = strings.TrimLeft(k, "+~")
		if k == field || strings.HasPrefix(field, k+".") || strings.HasPrefix(field, k+"[") {
			return overrides[i]
		}
	}
	return ""
}

// hostEnvKeys lists the launch.env keys whose raw value reads ${oc.env:...},
// before resolution replaces it with the value.
func hostEnvKeys(root *tree.Map) []string {
	launch, _ := root.Get("launch")
	lm, ok := launch.(*tree.Map)
	if !ok {
		return nil
	}
	env, _ := lm.Get("env")
	em, ok := env.(*tree.Map)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range em.Keys() {
		if v, _ := em.Get(k); isEnvRead(v) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func isEnvRead(v any) bool {
	s, ok := v.(string)
	return ok && strings.Contains(strings.ReplaceAll(s, " ", ""), "${oc.env:")
}

// unwrap takes the body of `{infra: {...}}`; sibling keys are dropped.
func unwrap(m *tree.Map) *tree.Map {
	if v, ok := m.Get("infra"); ok {
		if im, ok := v.(*tree.Map); ok {
			return im
		}
	}
	return m
}

// stripPrivate drops top-level `_`-prefixed keys (`_shared:`): they hold
// YAML anchors only, which the parser has already expanded.
func stripPrivate(m *tree.Map) *tree.Map {
	for _, k := range m.Keys() {
		if strings.HasPrefix(k, "_") {
			m.Delete(k)
		}
	}
	return m
}

// stripSchemaStrings trims every string of the schema (pydantic's
// str_strip_whitespace), but not inside the embedded Kubernetes specs.
func stripSchemaStrings(v any, p tree.Path) {
	switch t := v.(type) {
	case *tree.Map:
		for _, k := range t.Keys() {
			child, _ := t.Get(k)
			cp := append(append(tree.Path(nil), p...), k)
			if isSpecBody(cp) {
				continue
			}
			if s, ok := child.(string); ok {
				t.Set(k, strings.TrimSpace(s))
				continue
			}
			stripSchemaStrings(child, cp)
		}
	case []any:
		for i, e := range t {
			if s, ok := e.(string); ok {
				t[i] = strings.TrimSpace(s)
				continue
			}
			stripSchemaStrings(e, p)
		}
	}
}

func isSpecBody(p tree.Path) bool {
	return len(p) == 3 && (p[0] == "kuberay" || p[0] == "deployments") && p[2] == "spec"
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

// decode turns the resolved tree into the typed profile. Unknown keys at any
// depth, inside the KubeRay and Deployment specs too, are errors.
// Where each finding comes from (a line, an override) is said by Locate.
func decode(file string, rt *tree.Map) (*Infra, diag.List) {
	var ds diag.List
	data, err := rt.MarshalJSON()
	if err != nil {
		ds.Errorf(file, "", "cannot encode profile: %v", err)
		return nil, ds
	}
	var infra Infra
	strict, err := strictjson.Unmarshal(data, rt, &infra)
	if err != nil {
		field, msg := typeError(rt, data, err)
		ds.Errorf(file, field, "%s", msg)
		return nil, ds
	}
	for _, se := range strict {
		// sigs.k8s.io/json's strict errors carry their field path; only the
		// kind (unknown or duplicate) is in the text alone.
		field := ""
		if fe, ok := errors.AsType[kjson.FieldError](se); ok {
			field = fe.FieldPath()
		}
		msg := se.Error()
		switch {
		case strings.Contains(msg, "unknown field"):
			msg = "unknown key; not part of the infra schema (or of the KubeRay/Kubernetes type at this path)"
			if near := nearestKey(field); near != "" {
				msg = fmt.Sprintf("unknown key; did you mean %q?", near)
			}
		case strings.Contains(msg, "duplicate field"):
			msg = "duplicate key"
		}
		ds.Errorf(file, field, "%s", msg)
	}
	if ds.HasErrors() {
		return nil, ds
	}
	return &infra, ds
}

// lineFinder parses the profile file once and returns a function giving
// "line N: " for the key at a field path, or "" when the key is not in it.
func lineFinder(data []byte) func(field string) string {
	doc := parseNode(data)
	return func(field string) string {
		if field == "" || doc == nil {
			return ""
		}
		if n := keyLine(doc, field); n > 0 {
			return fmt.Sprintf("line %d: ", n)
		}
		return ""
	}
}

// readFile is the profile's bytes, or nil (the hints then name no line).
func readFile(l *recipe.Loader, file string) []byte {
	if l == nil || l.Src == nil || file == "" {
		return nil
	}
	b, err := l.Src.ReadFile(file)
	if err != nil {
		return nil
	}
	return b
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

// DefaultValue is defaults.yaml's value at a dotted path; ok is false when
// the path is absent or null there.
func DefaultValue(path string) (v any, ok bool) {
	root, err := parsedDefaults()
	if err != nil {
		return nil, false
	}
	v, ok = tree.Lookup(root, tree.ParsePath(path))
	return v, ok && v != nil
}
