package profile

import (
	_ "embed"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
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
	// RunName is the run's name (--name, a NemoRLRun's metadata.name, the
	// chart's release): a profile value may read it as ${run.name}.
	RunName string
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
	sets   func(key string) bool
}

// Sets reports whether a layer above the built-in defaults sets key (a
// dotted path): the user defaults, the profile file and its `defaults:`
// bases, the recipe's `infra:`, an `infra.` override, the run's namespace. A value equal to defaults.yaml's that
// one of them wrote is the profile's choice, not a default applied.
func (l *Loaded) Sets(key string) bool {
	return l != nil && l.sets != nil && l.sets(key)
}

// setter builds Loaded.Sets over the layers Load merged.
func setter(in Input, chain []string) func(string) bool {
	return func(key string) bool {
		if key == "namespace" && in.Namespace != "" || overrideOf(in.Overrides, key) != "" {
			return true
		}
		p := tree.ParsePath(key)
		if in.RecipeInfra != nil {
			if _, ok := tree.Lookup(in.RecipeInfra, p); ok {
				return true
			}
		}
		for _, f := range chain {
			if in.Loader != nil && holds(in.Loader, f, p) {
				return true
			}
		}
		return false
	}
}

// Load merges, resolves, decodes and validates a profile.
func Load(in Input) (*Loaded, diag.List) {
	file := profileFile(in)
	root, chain, ds := layers(in)
	if ds.HasErrors() {
		return nil, ds
	}
	ds = append(ds, applyOverrides(root, in.Overrides, file)...)
	if ds.HasErrors() {
		return nil, ds
	}
	hostEnv := hostEnvKeys(root)
	locChain := chain
	if in.RecipeInfra != nil {
		// The recipe's `infra:` (from its own chain) is one layer, the
		// recipe's: every finding is the recipe's, as before.
		locChain = nil
	}
	locate := newLocator(file, in.Overrides, in.Loader, locChain)
	rt, rds := resolve(in, file, locChain, root)
	ds = append(ds, inLayer(in.Loader, locChain, file, in.Overrides, rds)...)
	if ds.HasErrors() {
		return nil, ds
	}
	if in.Namespace != "" {
		rt.Set("namespace", in.Namespace)
	}
	if ns, _ := rt.Get("namespace"); ns == nil || ns == "" {
		rt.Set("namespace", DefaultNamespace)
	}
	stripSchemaStrings(rt, nil)
	loaded := &Loaded{Tree: rt, File: file, HostEnv: hostEnv, locate: locate, sets: setter(in, chain)}
	infra, dds := decode(file, rt)
	ds = append(ds, loaded.Locate(dds)...)
	if ds.HasErrors() {
		return nil, ds
	}
	loaded.Infra = infra
	applyDefaults(infra)
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

// profileFile is the file findings about the profile name: --infra, else
// the user defaults when they hold the profile, else the recipe.
func profileFile(in Input) string {
	switch {
	case in.File != "":
		return in.File
	case in.RecipeInfra == nil && in.UserDefaults != "":
		return in.UserDefaults
	}
	return in.RecipeFile
}

// layers merges the profile's layers, lowest first: the built-in
// defaults, the user defaults, then the --infra file or the recipe's own
// `infra:` mapping (`_shared:` dropped). chain is the files read, lowest
// first (each file's `defaults:` bases before it), for Locate.
func layers(in Input) (merged *tree.Map, chain []string, ds diag.List) {
	base, err := parsedDefaults()
	if err != nil {
		ds.Errorf("defaults.yaml", "", "%v", err)
		return nil, nil, ds
	}
	// Merge writes into its destination: each load starts from a copy.
	acc := tree.Copy(base)
	if in.UserDefaults != "" {
		m, err := in.Loader.Load(in.UserDefaults)
		if err != nil {
			return nil, nil, diag.FromError(err, in.UserDefaults)
		}
		acc = tree.Merge(acc, unwrap(m.Tree))
		chain = m.Files
	}
	switch {
	case in.File != "" && in.RecipeInfra != nil:
		ds.Errorf(in.RecipeFile, "infra", "infra config supplied via --infra but the recipe also contains an `infra:` key — choose one or the other")
		return nil, nil, ds
	case in.File != "":
		m, err := in.Loader.Load(in.File)
		if err != nil {
			return nil, nil, diag.FromError(err, in.File)
		}
		acc = tree.Merge(acc, stripPrivate(unwrap(m.Tree)))
		chain = append(chain, m.Files...)
	case in.RecipeInfra != nil:
		acc = tree.Merge(acc, stripPrivate(tree.Copy(in.RecipeInfra).(*tree.Map)))
	case in.UserDefaults != "":
		// nrl-k8s loads a recipe without `infra:` when the user defaults
		// hold the profile (namespace, image, clusters, entrypoint).
	default:
		ds.Errorf("", "", "no infra profile: pass --infra FILE, put an `infra:` mapping in the recipe, or give a user defaults layer (--defaults, $NRL_K8S_DEFAULTS)")
		return nil, nil, ds
	}
	return acc.(*tree.Map), chain, ds
}

// applyOverrides sets each `infra.` override (prefix removed) in root; a
// value YAML cannot read is a string, as Hydra reads it.
func applyOverrides(root *tree.Map, overrides []string, file string) diag.List {
	var ds diag.List
	for _, o := range overrides {
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
	return ds
}

// RunKey is the interpolation node holding the run: ${run.name}.
const RunKey = "run"

// resolve interpolates the merged profile (${user:}, ${oc.env:...},
// ${a.b}); a failure says how to fix it where it can (shellHint).
func resolve(in Input, file string, chain []string, root *tree.Map) (*tree.Map, diag.List) {
	var ds diag.List
	// ${run.name}: the run's name, as a node the interpolation can reach
	// and the decoded profile never sees. A profile of its own `run:` key
	// would shadow it: refused, as a key no profile schema has.
	if _, taken := root.Get(RunKey); taken {
		ds.Errorf(file, RunKey, "is reserved: ${run.name} reads the run's name from it; expected no top-level run: key in a profile")
		return nil, ds
	}
	if in.RunName != "" {
		run := tree.NewMap()
		run.Set("name", in.RunName)
		root.Set(RunKey, run)
		defer root.Delete(RunKey)
	}
	resolved, err := interp.Resolve(root, interp.Options{User: in.User, Env: in.Env, External: []string{RunKey}, Splice: shellWord})
	if err == nil {
		out := resolved.(*tree.Map)
		out.Delete(RunKey)
		return out, nil
	}
	if se, ok := errors.AsType[*notOneWord](err); ok {
		ds.Errorf(file, se.field, "%s", se.Error())
		return nil, ds
	}
	if ie, ok := errors.AsType[*interp.Error](err); ok {
		if in.RunName == "" && strings.Contains(ie.Value, "${"+RunKey+".") {
			ds.Errorf(file, ie.Path, "reads ${run.name} but the run has no name; expected a named run: nrl-k8s render --name, a NemoRLRun's metadata.name, or the chart's release name")
			return nil, ds
		}
		// The hint finds its line in the layer holding the value.
		if hint, ok := shellHint(ie, readFile(in.Loader, layerOf(in.Loader, chain, file, ie.Path))); ok {
			ds.Errorf(file, ie.Path, "%s", hint)
		} else {
			ds.Errorf(file, ie.Path, "cannot resolve %q: %s", ie.Value, ie.Msg)
		}
	} else {
		ds.Errorf(file, "", "%v", err)
	}
	return nil, ds
}

// shellWord is the rule for a value of the run (spec.env through
// ${oc.env:...}, ${user:}, ${run.name}) put into a shell command of the
// profile (an entrypoint): it must be one plain word there (shell.IsSafe),
// or it is refused. Quoting it for the entrypoint's shell would not be
// enough: the command may hand its words to another shell (bash -c, eval,
// a heredoc, ssh).
func shellWord(p tree.Path, expr, value string) error {
	if len(p) == 0 || p[len(p)-1] != "entrypoint" || value == "" || shell.IsSafe(value) {
		return nil
	}
	return &notOneWord{field: p.String(), expr: expr}
}

// notOneWord is a value of the run that a shell would read as syntax.
type notOneWord struct{ field, expr string }

func (e *notOneWord) Error() string {
	return fmt.Sprintf("%s puts a value of the run into this shell command that is not one plain word (it holds a blank, quote, $, backtick, ;, &, |, newline or another character the shell reads as syntax; the value is not shown); refused: a run's value must never become shell syntax. Expected only letters, digits and @%%+=:,./-_ in it, or the value put in launch.env and read as \"$NAME\" (double-quoted) in the entrypoint", e.expr)
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

// newLocator builds Loaded.Locate. A finding about a key that a lower
// layer sets (a `defaults:` base, the user defaults) and the profile file
// does not is that layer's: it names that file and the key's line there,
// not the file that only inherits it. Each file is parsed once, on the
// first finding that needs a line in it (a profile with many unknown keys
// must not be parsed once per key), never on a clean load; the lock keeps
// Locate safe to call from several goroutines.
func newLocator(file string, overrides []string, l *recipe.Loader, chain []string) func(diag.List) diag.List {
	finders := map[string]func(string) string{}
	atLine := func(f, field string) string {
		find, ok := finders[f]
		if !ok {
			find = lineFinder(readFile(l, f))
			finders[f] = find
		}
		return find(field)
	}
	var mu sync.Mutex
	return func(ds diag.List) diag.List {
		mu.Lock()
		defer mu.Unlock()
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
			out[i].File = layerOf(l, chain, file, d.Field)
			if !strings.HasPrefix(d.Message, "line ") {
				out[i].Message = atLine(out[i].File, d.Field) + d.Message
			}
		}
		return out
	}
}

// inLayer moves a finding of the profile file about a key a lower layer
// sets (resolution stops at its first) to that layer, at the key's line.
// Findings the profile file's own keys get keep their text (they name the
// expression, which finds it).
func inLayer(l *recipe.Loader, chain []string, file string, overrides []string, ds diag.List) diag.List {
	for i, d := range ds {
		if d.File != file || d.Field == "" || overrideOf(overrides, d.Field) != "" {
			continue
		}
		if f := layerOf(l, chain, file, d.Field); f != file {
			ds[i].File = f
			if !strings.HasPrefix(d.Message, "line ") {
				ds[i].Message = lineFinder(readFile(l, f))(d.Field) + d.Message
			}
		}
	}
	return ds
}

// layerOf is the file of chain (lowest first) that sets field, or the
// deepest key above it, as written (bare or under `infra:`), the highest
// layer winning as the merge does; file when none does (a built-in
// default).
func layerOf(l *recipe.Loader, chain []string, file, field string) string {
	if l == nil || len(chain) < 2 {
		return file
	}
	p := tree.ParsePath(field)
	for n := len(p); n > 0; n-- {
		for i := len(chain) - 1; i >= 0; i-- {
			if holds(l, chain[i], p[:n]) {
				return chain[i]
			}
		}
	}
	return file
}

func holds(l *recipe.Loader, f string, p tree.Path) bool {
	if ok, _ := l.Holds(f, p); ok {
		return true
	}
	ok, _ := l.Holds(f, append(tree.Path{"infra"}, p...))
	return ok
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
