// Package chartgen generates the data the Helm chart charts/nemo-rl-run
// carries: every packaged profile rendered by the Go engine (pipeline.Render)
// with sentinel run parameters, plus the metadata the chart's one template
// needs to put the real parameters in. The chart holds no rendering rule of
// its own: it substitutes strings in engine output and ends with toYaml, the
// same sigs.k8s.io/yaml.Marshal that emit.Marshal calls, so `helm template`
// and `nrl-k8s render` print the same bytes (docs/architecture.md).
package chartgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Sentinels stand for the run parameters in the rendered data. Each is a
// valid value of its parameter (the engine must accept it: user and run id
// end up in DNS names), and user and run id are short, because a profile's
// longest name leaves little room (qwen3's raycluster training job is
// 38 fixed characters of KubeRay's 47). Letters outside hex keep them out of
// digests; and the generator's probe render proves that no sentinel occurs
// by accident (any accidental occurrence would be substituted and differ).
// The chart rejects real values containing a sentinel, so substituting one
// can never hit text another substitution put in.
const (
	SentinelUser      = "u7z7"
	SentinelNamespace = "nrlsentinelns"
	SentinelRunID     = "r7z7"
	// SentinelName is the run name (the release name).
	SentinelName = "n7z7"
	// SentinelImage stands for the image of the run's containers (the
	// `image` value, else the profile's image).
	SentinelImage = "i7z7.invalid/nrl-image"
	// The run's labels and annotations are one sentinel pair each, replaced
	// by the values' pairs as JSON text (see Substitute).
	SentinelLabelKey        = "nrl-sentinel-label"
	SentinelLabelValue      = "l7z7"
	SentinelAnnotationKey   = "nrl-sentinel-annotation"
	SentinelAnnotationValue = "a7z7"
	// SentinelOverride is one Hydra override: `+` adds a key the recipe does
	// not have, so the engine's recipe check accepts it, and shell.Quote
	// leaves it unquoted, so it appears in the entrypoint as written.
	SentinelOverride = "+nrl_sentinel_overrides=1"
	// ChartManagedBy is app.kubernetes.io/managed-by in the chart's data
	// (a run label, so it wins over the engine's default nrl-k8s on every
	// object and pod template): Helm sets it to Helm on every object it
	// installs, so `helm template` prints what the cluster then holds.
	ChartManagedBy = "Helm"
	// SentinelRecipe stands for the text of the recipe the run ships in its
	// ConfigMap (the `recipe` value; launch.recipeSource=configMap): the
	// JSON string of the ConfigMap's data entry is this one string in the
	// rendered data, and the chart puts the value's canonical YAML there.
	SentinelRecipe = "nrl-sentinel-recipe-y7z7"
)

// RecipeVariant is the infra override under which the chart data for a
// `recipe` value is rendered: the merged recipe ships in a ConfigMap and
// every --config points at it (fn/engine/manifest/recipecm.go), as nrl-k8s render
// does with the same profile key. The engine supports it in rayjob mode only.
const RecipeVariant = "infra.launch.recipeSource=configMap"

// ShellSafePattern is the set of strings shell.Quote leaves unquoted;
// the chart wraps any other override in single quotes, as shell.Quote does
// for strings without a quote (the schema allows none).
const ShellSafePattern = shell.SafePattern

// OverridePattern is what the chart's schema accepts as one run override:
// a subset of what hydra.Parse accepts, restricted to characters that need
// no JSON or YAML escaping and no shell quoting other than single quotes.
// `infra.` overrides change the profile, which the chart cannot re-render;
// the schema rejects them separately (InfraOverridePattern).
const OverridePattern = `^(~` + overrideKey + `(=` + overrideValue + `)?|(\+\+|\+)?` + overrideKey + `=` + overrideValue + `)$`

const (
	overrideKey   = `[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+|\[[0-9]+\])*`
	overrideValue = `[A-Za-z0-9_@%+=:,./~\[\]-]*`
	// InfraOverridePattern matches overrides that target the profile.
	InfraOverridePattern = `^[+~]*infra([.=]|$)`
	// NamePattern is a normalised user, namespace or run id: a DNS label, so
	// it is valid wherever the engine puts it and never needs escaping.
	NamePattern = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
)

// Name rules the engine applies to generated object names (check.Output and
// check's KubeRay admission rules); names that contain a sentinel are
// recorded with their rule so the chart can check the real name.
const (
	dns1035    = `^[a-z]([-a-z0-9]*[a-z0-9])?$`
	dns1123Sub = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

func nameRule(kind string) (maxLength int, pattern string) {
	switch kind {
	case "RayCluster":
		return check.MaxRayClusterName, dns1035
	case "RayJob":
		return check.MaxRayJobName, dns1035
	case "Service":
		return 63, dns1035 // a Service name is a DNS-1035 label
	}
	return 253, dns1123Sub
}

// Modes are the chart's modes, in the engine's order.
var Modes = runparams.Modes

// Index is profiles/index.yaml: the profiles the chart packages.
type Index struct {
	Profiles []Entry `json:"profiles"`
	// Dir is the index file's directory, as LoadIndex was given it.
	Dir string `json:"-"`
}

// Entry is one packaged profile and the recipe it is rendered with.
type Entry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Profile     string `json:"profile"`
	Recipe      string `json:"recipe"`
	// InIndex holds profile and recipe as the index writes them (relative
	// to the index file): what a chart-new chart records, so that its
	// bytes do not depend on the directory it was made from.
	InIndex struct{ Profile, Recipe string } `json:"-"`
}

var entryNameRE = lazyre.New(NamePattern)

// LoadIndex reads the index; profile and recipe paths come back relative
// to the working directory (the repository root for `make chart`).
func LoadIndex(file string) (*Index, error) {
	data, err := source.Disk{}.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := yaml.UnmarshalStrict(data, &idx); err != nil {
		return nil, fmt.Errorf("%s: %w; expected profiles: [{name, description, profile, recipe}]", file, err)
	}
	idx.Dir = path.Dir(filepath.ToSlash(file))
	seen := map[string]bool{}
	for i, e := range idx.Profiles {
		field := fmt.Sprintf("%s: profiles[%d]", file, i)
		switch {
		case !entryNameRE().MatchString(e.Name):
			return nil, fmt.Errorf("%s.name: found %q; expected a DNS label (it is a chart value and a file name)", field, e.Name)
		case seen[e.Name]:
			return nil, fmt.Errorf("%s.name: %q is listed twice", field, e.Name)
		case e.Profile == "" || e.Recipe == "":
			return nil, fmt.Errorf("%s: profile and recipe are required", field)
		}
		seen[e.Name] = true
		idx.Profiles[i].InIndex.Profile = path.Clean(filepath.ToSlash(e.Profile))
		idx.Profiles[i].InIndex.Recipe = path.Clean(filepath.ToSlash(e.Recipe))
		idx.Profiles[i].Profile = source.Join(file, e.Profile)
		idx.Profiles[i].Recipe = source.Join(file, e.Recipe)
	}
	if len(idx.Profiles) == 0 {
		return nil, fmt.Errorf("%s: lists no profile", file)
	}
	return &idx, nil
}

// Meta is files/profiles.json.
type Meta struct {
	Sentinels Sentinels               `json:"sentinels"`
	Profiles  map[string]*ProfileMeta `json:"profiles"`
	// Secrets are fn/analyse/secrets' rules, for the chart's check of env values
	// (the engine refuses a literal credential in a manifest).
	Secrets secrets.Rules `json:"secrets"`
}

// Sentinels tells the chart what to replace (and how to quote overrides).
type Sentinels struct {
	User      string `json:"user"`
	Namespace string `json:"namespace"`
	RunID     string `json:"runId"`
	Name      string `json:"name"`
	Image     string `json:"image"`
	// Label and Annotation are the sentinel pairs as JSON text.
	Label      string `json:"label"`
	Annotation string `json:"annotation"`
	Override   string `json:"override"`
	ShellSafe  string `json:"shellSafe"`
	Recipe     string `json:"recipe"`
	// Knobs are the per-run values' sentinels (knobs.go).
	Knobs KnobSentinels `json:"knobs"`
	// Reserved are the sentinel texts: a value containing one is refused,
	// so no substitution can hit text another one put in.
	Reserved []string `json:"reserved"`
}

// pairText is a map entry as encoding/json writes it.
func pairText(k, v string) string {
	kb, _ := json.Marshal(k)
	vb, _ := json.Marshal(v)
	return string(kb) + ":" + string(vb)
}

var (
	sentinelLabel      = pairText(SentinelLabelKey, SentinelLabelValue)
	sentinelAnnotation = pairText(SentinelAnnotationKey, SentinelAnnotationValue)
)

// ProfileMeta is what the chart knows about one packaged profile.
type ProfileMeta struct {
	Description string `json:"description"`
	Profile     string `json:"profile"`
	Recipe      string `json:"recipe"`
	// Namespace is the profile's own; the chart uses the release namespace
	// unless `namespace` is set, so it is informational.
	Namespace string   `json:"namespace"`
	Modes     []string `json:"modes"`
	// MaxUserLength per mode, without a run id: the longest user for which
	// every generated name keeps within its limit.
	MaxUserLength map[string]int `json:"maxUserLength"`
	Capacity      Capacity       `json:"capacity"`
	// EntrypointCluster holds the cluster.gpus_per_node / cluster.num_nodes
	// overrides the entrypoint passes to the driver (they win over the
	// recipe); RecipeCluster the packaged recipe's own values.
	EntrypointCluster map[string]int64 `json:"entrypointCluster"`
	RecipeCluster     map[string]int64 `json:"recipeCluster"`
	// Renders is keyed <mode> and <mode>.runid, and rayjob.recipe and
	// rayjob.recipe.runid for a run with a `recipe` value; run renders
	// leave the profile's deployments out. `services` is the profile's
	// deployments and their Services alone (mode=services), when it has any.
	Renders map[string]*RenderMeta `json:"renders"`
	// Services are the objects of the services render (kind and name, with
	// sentinels): what a run of the profile reaches by name, for NOTES.
	Services []ObjectRef `json:"services,omitempty"`
	// NoRecipeValue says why the profile cannot ship a `recipe` value (the
	// engine refused launch.recipeSource=configMap for it); "" when it can.
	NoRecipeValue string `json:"noRecipeValue,omitempty"`
	// Defaults are the profile's own values of the scalar knobs.
	Defaults KnobDefaults `json:"defaults"`
}

// ObjectRef names one rendered object.
type ObjectRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// ServicesMode is the chart's mode for a release of a profile's shared
// services: the render with runparams.Params.OnlyDeployments.
const ServicesMode = "services"

// Capacity is the training cluster's GPU capacity, as the engine's recipe
// check counts it.
type Capacity struct {
	GPUNodes      int64   `json:"gpuNodes"`
	GPUsPerWorker []int64 `json:"gpusPerWorker"`
}

// RenderMeta describes one rendered file.
type RenderMeta struct {
	File string `json:"file"`
	// OverridesToken is the exact text the sentinel override added to the
	// entrypoint (with its separating space): removing it restores the
	// entrypoint without overrides; "" when the render has no entrypoint.
	OverridesToken string     `json:"overridesToken"`
	Names          []NameRule `json:"names"`
	// Warnings the engine reported for the packaged recipe.
	Warnings []string `json:"warnings"`
	// Image replaces the image sentinel when the `image` value is empty.
	Image string `json:"image"`
	// KubeVersion is the semver constraint the render's API versions need
	// of the cluster ("" for none beyond Chart.yaml's kubeVersion), e.g.
	// resource.k8s.io/v1 (DRA), served from Kubernetes 1.34 on.
	KubeVersion string `json:"kubeVersion"`
	// Unavailable names the knobs this render has no sentinel for, and
	// why: the chart refuses such a value rather than ignore it.
	Unavailable map[string]string `json:"unavailable"`
	// Taken is what the pods a knob goes to already have (knobs.go).
	Taken Taken `json:"taken"`
}

// apiMinKube maps an API version the engine emits to the first Kubernetes
// release that serves it: the chart refuses to render it for an older
// cluster (helm --kube-version, or the cluster helm install talks to).
var apiMinKube = map[string]string{
	"resource.k8s.io/v1": "1.34.0",
}

// kubeVersion is the constraint a render's documents need.
func kubeVersion(docs []emit.Doc) string {
	best := ""
	for _, d := range docs {
		av, _ := d.Data["apiVersion"].(string)
		if v, ok := apiMinKube[av]; ok && v > best {
			best = v
		}
	}
	if best == "" {
		return ""
	}
	return ">= " + best + "-0"
}

// NameRule is a generated name that contains a sentinel, and its rule.
type NameRule struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	MaxLength int    `json:"maxLength"`
	Pattern   string `json:"pattern"`
}

// Values are the run parameters the chart substitutes. Image "" means the
// profile's (RenderMeta.Image).
type Values struct {
	User, Namespace, RunID, Name, Image string
	Labels, Annotations                 map[string]string
	Overrides                           []string
	// Recipe is the text of the shipped recipe (the ConfigMap's data), ""
	// for renders without a `recipe` value.
	Recipe string
	// Knobs are the per-run profile values.
	Knobs Knobs
	// infra are profile overrides of the chart variant (RecipeVariant).
	infra []string
	// services renders the profile's shared services alone
	// (OnlyDeployments, the chart's mode=services); every other render
	// leaves them out (NoDeployments): a run release never owns them.
	services bool
}

var shellSafeRE = lazyre.New(ShellSafePattern)

// Substitute is the chart's algorithm (templates/_helpers.tpl
// "nemo-rl-run.docs") in Go: the generator uses it to prove, on probe
// values, that the engine's output is the sentinel output with strings
// replaced; the parity tests prove the template does the same.
func Substitute(data string, rm *RenderMeta, d KnobDefaults, v Values) string {
	if token := rm.OverridesToken; token != "" {
		if len(v.Overrides) == 0 {
			data = strings.Replace(data, token, "", 1)
		} else {
			q := make([]string, len(v.Overrides))
			for i, o := range v.Overrides {
				q[i] = o
				if !shellSafeRE().MatchString(o) {
					q[i] = "'" + o + "'"
				}
			}
			data = strings.Replace(data, SentinelOverride, strings.Join(q, " "), 1)
		}
	}
	data = substitutePairs(data, sentinelLabel, "labels", v.Labels)
	data = substitutePairs(data, sentinelAnnotation, "annotations", v.Annotations)
	data = substituteKnobs(data, rm, d, v.Knobs)
	image := v.Image
	if image == "" {
		image = rm.Image
	}
	data = strings.ReplaceAll(data, SentinelImage, image)
	data = strings.ReplaceAll(data, SentinelName, v.Name)
	data = strings.ReplaceAll(data, SentinelNamespace, v.Namespace)
	data = strings.ReplaceAll(data, SentinelRunID, v.RunID)
	data = strings.ReplaceAll(data, SentinelUser, v.User)
	if v.Recipe != "" {
		// Last, so that no other substitution reaches into the recipe text.
		data = strings.Replace(data, jsonString(SentinelRecipe), jsonString(v.Recipe), 1)
	}
	return data
}

// jsonString is s as encoding/json (and Helm's toJson) writes it.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// substitutePairs puts the run's labels or annotations where the sentinel
// pair is: their pairs as JSON text (fromJson and toYaml sort them as the
// engine's maps are sorted), or, without any, nothing, removing a map the
// sentinel was alone in as the engine's pruning does. The chart refuses
// keys the rendered data already has (a duplicate key's winner would depend
// on its place in the text).
func substitutePairs(data, sentinel, field string, pairs map[string]string) string {
	if len(pairs) == 0 {
		data = strings.ReplaceAll(data, `"`+field+`":{`+sentinel+`},`, "")
		data = strings.ReplaceAll(data, `,"`+field+`":{`+sentinel+`}`, "")
		data = strings.ReplaceAll(data, ","+sentinel, "")
		return strings.ReplaceAll(data, sentinel+",", "")
	}
	text := make([]string, 0, len(pairs))
	for _, k := range tree.SortedKeys(pairs) {
		text = append(text, pairText(k, pairs[k]))
	}
	return strings.ReplaceAll(data, sentinel, strings.Join(text, ","))
}

// probe values: different lengths from the sentinels, and one override that
// needs quoting, so a rule that depends on more than the text fails here.
var probe = Values{
	User: "pu5", Namespace: "probe-ns", RunID: "p9", Name: "probe-run", Image: "probe.invalid/img:p1",
	Labels:      map[string]string{"a.probe/l": "v1", "zz-probe": "v2"},
	Annotations: map[string]string{"probe/a": `x "y" <&>`},
	Overrides:   []string{"++nrl_probe.a=1", "++nrl_probe.b=[1,2]"},
}

// sentinelValues is what every render of the chart data is made with.
func sentinelValues(runID string) Values {
	return Values{
		User: SentinelUser, Namespace: SentinelNamespace, RunID: runID, Name: SentinelName, Image: SentinelImage,
		Labels:      map[string]string{SentinelLabelKey: SentinelLabelValue},
		Annotations: map[string]string{SentinelAnnotationKey: SentinelAnnotationValue},
	}
}

// RenderedDir is where the rendered data lives inside the chart.
const RenderedDir = "files/rendered"

// MetaFile is the metadata file inside the chart.
const MetaFile = "files/profiles.json"

// Generate renders every packaged profile and returns the chart files it
// owns, keyed by path relative to the chart (files/..., values.schema.json,
// README.md with its generated section refreshed from readme, the chart's
// current README).
func Generate(idx *Index, readme []byte) (map[string][]byte, error) {
	return generate(idx, readme, nil, false)
}

func generate(idx *Index, readme []byte, env func(string) (string, bool), indexRelative bool) (map[string][]byte, error) {
	g := &gen{env: env, loader: recipe.NewLoader(source.Disk{}), out: map[string][]byte{}}
	if indexRelative {
		g.indexDir = idx.Dir
	}
	meta := &Meta{
		Sentinels: Sentinels{User: SentinelUser, Namespace: SentinelNamespace, RunID: SentinelRunID, Name: SentinelName,
			Image: SentinelImage, Label: sentinelLabel, Annotation: sentinelAnnotation,
			Override: SentinelOverride, ShellSafe: ShellSafePattern, Recipe: SentinelRecipe, Knobs: knobSentinels,
			Reserved: []string{SentinelUser, SentinelRunID, SentinelNamespace, SentinelName, SentinelImage, SentinelLabelKey, SentinelLabelValue,
				SentinelAnnotationKey, SentinelAnnotationValue, SentinelOverride, SentinelRecipe, SentinelQueue, SentinelPriorityClass,
				SentinelNodeKey, SentinelNodeValue, SentinelTolerationKey, SentinelEnvName, SentinelEnvValue}},
		Profiles: map[string]*ProfileMeta{},
		Secrets:  secrets.NameRules(),
	}
	for _, e := range idx.Profiles {
		pm, err := g.profile(e)
		if err != nil {
			return nil, fmt.Errorf("profile %s (%s with %s): %w", e.Name, e.Profile, e.Recipe, err)
		}
		meta.Profiles[e.Name] = pm
	}
	for i := 0; i < g.maxDocs; i++ {
		g.out[slotFile(i)] = []byte(fmt.Sprintf(slotTemplate, i))
	}
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, err
	}
	g.out[MetaFile] = append(b, '\n')
	schema, err := Schema(idx)
	if err != nil {
		return nil, err
	}
	g.out["values.schema.json"] = schema
	rd, err := Readme(readme, idx, meta)
	if err != nil {
		return nil, err
	}
	g.out["README.md"] = rd
	return g.out, nil
}

type gen struct {
	// env is the environment ${oc.env:...} reads: nil for chart-data (the
	// committed chart), the packager's for chart-new, as nrl-k8s render
	// reads the caller's.
	env     func(string) (string, bool)
	loader  *recipe.Loader
	out     map[string][]byte
	maxDocs int
	// indexDir, when set (chart-new), is the index's directory: the chart
	// records profile, recipe and finding paths relative to it. chart-data
	// records them relative to the working directory, the repository root,
	// where NOTES' commands run.
	indexDir string
}

// shown is a file as the chart records it: relative to the index for
// chart-new, as loaded (relative to the working directory) for chart-data.
func (g *gen) shown(file string) string {
	if g.indexDir == "" || file == "" {
		return file
	}
	from, err1 := filepath.Abs(filepath.FromSlash(g.indexDir))
	to, err2 := filepath.Abs(filepath.FromSlash(file))
	if err1 != nil || err2 != nil {
		return file
	}
	rel, err := filepath.Rel(from, to)
	if err != nil {
		return file
	}
	return filepath.ToSlash(rel)
}

// One template file per document slot. Helm 3 trims each document of a
// multi-document template, Helm 4 keeps the newline before a `---` in the
// document before it (so it prints a blank line there); a template that
// yields one document, with no trailing newline, prints the same under
// both. Slot files render nothing when the run has fewer documents; Helm
// orders files by name, and then (stably) by kind, which keeps the engine's
// order because the engine sorts by the same install order.
const slotTemplate = `{{- /* Generated by nrl-k8s chart-data: document %[1]d of the run (see _helpers.tpl). */ -}}
{{- include "nemo-rl-run.doc" (list . %[1]d) -}}
`

func slotFile(i int) string { return fmt.Sprintf("templates/doc-%02d.yaml", i) }

// slotRE matches the slot files Generate owns.
var slotRE = lazyre.New(`^doc-[0-9]+\.yaml$`)

func (g *gen) run(e Entry, mode runparams.Mode, v Values, env func(string) (string, bool)) (*pipeline.Result, string, error) {
	labels := map[string]string{manifest.ManagedByKey: ChartManagedBy}
	for k, val := range v.Labels {
		labels[k] = val
	}
	infra := append([]string(nil), v.infra...)
	if !v.Knobs.empty() {
		in, err := g.baseInfra(e, v, env)
		if err != nil {
			return nil, "", err
		}
		infra = append(infra, KnobOverrides(in, v.Knobs)...)
	}
	res := pipeline.Render(g.loader, pipeline.Request{
		Recipe: e.Recipe, Profile: e.Profile, Mode: mode,
		User: v.User, Namespace: v.Namespace, RunID: v.RunID, Overrides: append(infra, v.Overrides...),
		Name: v.Name, Image: v.Image, Labels: labels, Annotations: v.Annotations,
		NoDeployments: !v.services, OnlyDeployments: v.services,
		// The chart has no environment to read: render with none, and
		// refuse profiles whose output depends on one (checked below).
		Env: env,
	})
	if res.Diags.HasErrors() {
		var msgs []string
		for _, d := range res.Diags.Sorted() {
			msgs = append(msgs, d.String())
		}
		return nil, "", fmt.Errorf("%s render failed: %s", mode, strings.Join(msgs, "; "))
	}
	data, err := EncodeDocs(res.Docs)
	return res, data, err
}

// shippedRecipe is the recipe text a render ships in its ConfigMap
// (launch.recipeSource=configMap), "" when it ships none.
func shippedRecipe(docs []emit.Doc) string {
	for _, d := range docs {
		if d.Kind != "ConfigMap" {
			continue
		}
		if data, ok := d.Data["data"].(map[string]any); ok {
			if text, ok := data[path.Base(profile.RecipeMountPath)].(string); ok {
				return text
			}
		}
	}
	return ""
}

// recipeSentinel replaces the shipped recipe's text with SentinelRecipe in
// the rendered data of a recipe variant.
func recipeSentinel(res *pipeline.Result, data string) (string, error) {
	text := shippedRecipe(res.Docs)
	if text == "" {
		return "", fmt.Errorf("%s renders no recipe ConfigMap", RecipeVariant)
	}
	if n := strings.Count(data, jsonString(text)); n != 1 {
		return "", fmt.Errorf("the shipped recipe's text occurs %d times in the render; expected once, in its ConfigMap", n)
	}
	return strings.Replace(data, jsonString(text), jsonString(SentinelRecipe), 1), nil
}

// canonical is a JSON document re-encoded with sorted keys, as the chart's
// fromJsonArray and toYaml see it; "" when it is not JSON (never equal).
func canonical(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// EncodeDocs is the rendered-file format: a JSON array of the documents'
// data, keys sorted by encoding/json, one document per line so that a
// profile change shows as a readable diff.
func EncodeDocs(docs []emit.Doc) (string, error) {
	var b strings.Builder
	b.WriteString("[\n")
	for i, d := range docs {
		j, err := json.Marshal(d.Data)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", d.Kind, d.Name, err)
		}
		b.Write(j)
		if i < len(docs)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	return b.String(), nil
}

func (g *gen) profile(e Entry) (*ProfileMeta, error) {
	pm := &ProfileMeta{
		Description: e.Description, Profile: e.Profile, Recipe: e.Recipe,
		MaxUserLength: map[string]int{}, Renders: map[string]*RenderMeta{},
		EntrypointCluster: map[string]int64{}, RecipeCluster: map[string]int64{},
	}
	var rayjobKnobs *knobInfo
	if g.indexDir != "" {
		pm.Profile, pm.Recipe = e.InIndex.Profile, e.InIndex.Recipe
	}
	hasServices := false
	for _, mode := range Modes {
		pm.Modes = append(pm.Modes, string(mode))
		ki, err := g.knobs(e, mode)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		if mode == runparams.RayJob {
			rayjobKnobs = ki
			pm.Defaults = ki.defaults
		}
		var plainFile, plainData string
		for _, withRunID := range []bool{false, true} {
			key := string(mode)
			sent := sentinelValues("")
			sent.Knobs = sentinelKnobs().only(ki.avail)
			if withRunID {
				key += ".runid"
				sent.RunID = SentinelRunID
			}
			rm, data, res, err := g.variant(e, mode, sent, ki)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			rm.File = path.Join(RenderedDir, e.Name+"."+key+".json")
			if withRunID && data == plainData {
				// The run id changes nothing in this mode (the dev pod): share
				// the file rather than ship a copy.
				rm.File = plainFile
			} else {
				g.out[rm.File] = []byte(data)
			}
			if !withRunID {
				plainFile, plainData = rm.File, data
				pm.MaxUserLength[string(mode)] = maxUser(rm.Names)
				if mode == runparams.RayJob {
					if err := g.clusterFacts(e, res, pm); err != nil {
						return nil, err
					}
					hasServices = len(res.Profile.Infra.Deployments) > 0
				}
			}
			pm.Renders[key] = rm
		}
	}
	if err := g.recipeVariants(e, pm, rayjobKnobs); err != nil {
		return nil, err
	}
	if hasServices {
		if err := g.servicesVariant(e, pm); err != nil {
			return nil, err
		}
	}
	return pm, nil
}

// servicesVariant renders the profile's shared services alone, for the
// chart's mode=services. Their image is the `image` value's when the
// engine accepts one for them (their containers run one image); otherwise
// the data keeps the profile's images and the chart refuses an image value.
func (g *gen) servicesVariant(e Entry, pm *ProfileMeta) error {
	sent := sentinelValues("")
	sent.services = true
	if _, _, err := g.run(e, runparams.RayJob, sent, g.env); err != nil {
		sent.Image = ""
	}
	// The per-run values are a run's: a services release refuses them.
	ki := &knobInfo{avail: map[string]bool{}, unavail: map[string]string{}}
	for _, n := range KnobNames {
		ki.unavail[n] = "mode services installs the profile's shared services, not a run; set it on the run releases"
	}
	rm, data, res, err := g.variant(e, runparams.RayJob, sent, ki)
	if err != nil {
		return fmt.Errorf("%s: %w", ServicesMode, err)
	}
	rm.File = path.Join(RenderedDir, e.Name+"."+ServicesMode+".json")
	g.out[rm.File] = []byte(data)
	pm.Renders[ServicesMode] = rm
	pm.MaxUserLength[ServicesMode] = maxUser(rm.Names)
	pm.Modes = append(pm.Modes, ServicesMode)
	for _, d := range res.Docs {
		pm.Services = append(pm.Services, ObjectRef{Kind: d.Kind, Name: d.Name})
	}
	return nil
}

// recipeVariants renders the data for a run with a `recipe` value: rayjob
// mode under RecipeVariant, with and without a run id. A profile the engine
// refuses that for (a head volume named like the recipe's, no entrypoint)
// is recorded as unable to ship one, and the chart says so.
func (g *gen) recipeVariants(e Entry, pm *ProfileMeta, ki *knobInfo) error {
	try := sentinelValues("")
	try.infra = []string{RecipeVariant}
	if _, _, err := g.run(e, runparams.RayJob, try, g.env); err != nil {
		pm.NoRecipeValue = err.Error()
		return nil
	}
	for _, runID := range []string{"", SentinelRunID} {
		key := string(runparams.RayJob) + ".recipe"
		if runID != "" {
			key += ".runid"
		}
		sent := sentinelValues(runID)
		sent.infra = []string{RecipeVariant}
		sent.Knobs = sentinelKnobs().only(ki.avail)
		rm, data, _, err := g.variant(e, runparams.RayJob, sent, ki)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		rm.File = path.Join(RenderedDir, e.Name+"."+key+".json")
		g.out[rm.File] = []byte(data)
		pm.Renders[key] = rm
	}
	return nil
}

// probeRecipe writes a recipe whose `defaults:` chain is e's recipe and
// which adds a key JSON must escape: the probe render of a recipe variant
// ships it, so its output must be the sentinel output with only the
// recipe text replaced.
func probeRecipe(e Entry) (file string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "nrl-chartgen-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	abs, err := filepath.Abs(filepath.FromSlash(e.Recipe))
	if err != nil {
		cleanup()
		return "", nil, err
	}
	rel, err := filepath.Rel(dir, abs)
	if err != nil {
		cleanup()
		return "", nil, err
	}
	file = filepath.ToSlash(filepath.Join(dir, "probe.yaml"))
	text := fmt.Sprintf("defaults: %s\nnrl_probe_recipe:\n  text: 'x \"y\" <&>'\n", jsonString(filepath.ToSlash(rel)))
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		cleanup()
		return "", nil, err
	}
	return file, cleanup, nil
}

// variant renders one mode / run-id variant and proves it substitutable.
func (g *gen) variant(e Entry, mode runparams.Mode, sent Values, ki *knobInfo) (*RenderMeta, string, *pipeline.Result, error) {
	withOv := sent
	withOv.Overrides = []string{SentinelOverride}
	res, data, err := g.run(e, mode, withOv, g.env)
	if err != nil {
		return nil, "", nil, err
	}
	if len(res.Docs) > g.maxDocs {
		g.maxDocs = len(res.Docs)
	}
	plainRes, plain, err := g.run(e, mode, sent, g.env)
	if err != nil {
		return nil, "", nil, err
	}
	shipsRecipe := len(sent.infra) > 0
	if shipsRecipe {
		if data, err = recipeSentinel(res, data); err != nil {
			return nil, "", nil, err
		}
		if plain, err = recipeSentinel(plainRes, plain); err != nil {
			return nil, "", nil, err
		}
	}
	rm := &RenderMeta{Names: []NameRule{}, Warnings: []string{}, Unavailable: ki.unavail}
	switch strings.Count(data, SentinelOverride) {
	case 0:
		if data != plain {
			return nil, "", nil, fmt.Errorf("run overrides change the output although the entrypoint does not show them")
		}
	case 1:
		for _, cand := range []string{" " + SentinelOverride, SentinelOverride + " "} {
			if strings.Contains(data, cand) && strings.Replace(data, cand, "", 1) == plain {
				rm.OverridesToken = cand
			}
		}
		if rm.OverridesToken == "" {
			return nil, "", nil, fmt.Errorf("removing the inserted override %q does not give the render without overrides: entrypoint.AppendOverrides no longer inserts plain text", SentinelOverride)
		}
	default:
		return nil, "", nil, fmt.Errorf("the sentinel override appears %d times; expected once, in the entrypoint", strings.Count(data, SentinelOverride))
	}
	rm.Image = res.Profile.Infra.Image
	rm.KubeVersion = kubeVersion(res.Docs)
	switch {
	case sent.services && sent.Image == "":
		rm.Image = "" // the profile's images stay; the chart takes no image value
	case sent.services:
		rm.Image = manifest.DeploymentImages(res.Profile.Infra)[0]
	case mode == runparams.Dev:
		rm.Image = manifest.DevImage(res.Profile.Infra)
	}
	// The chart's whole premise, checked on every generation: the engine's
	// output for other values is this output with the strings replaced, with
	// and without the optional values. A recipe variant's probe ships
	// another recipe (with a defaults: chain): the objects depend on the
	// recipe only through the shipped text (manifest.Build sees the recipe
	// as runparams.Params.RecipeYAML and Config, the fixed mount path).
	probeEntry := e
	if shipsRecipe {
		file, cleanup, err := probeRecipe(e)
		if err != nil {
			return nil, "", nil, err
		}
		defer cleanup()
		probeEntry.Recipe = file
	}
	full := probe
	full.infra, full.services = sent.infra, sent.services
	if sent.Image == "" {
		full.Image = ""
	}
	full.Knobs = probeKnobs().only(ki.avail)
	if sent.RunID == "" {
		full.RunID = ""
	}
	bare := full
	bare.Image, bare.Labels, bare.Annotations, bare.Knobs = "", nil, nil, Knobs{}
	other := bare
	other.Knobs = knobProbe2().only(ki.avail)
	for _, pv := range []Values{full, bare, other} {
		pres, got, err := g.run(probeEntry, mode, pv, g.env)
		if err != nil {
			return nil, "", nil, fmt.Errorf("probe render: %w", err)
		}
		if shipsRecipe {
			pv.Recipe = shippedRecipe(pres.Docs)
			if pv.Recipe == shippedRecipe(res.Docs) {
				return nil, "", nil, fmt.Errorf("the probe recipe ships the same text as %s", e.Recipe)
			}
		}
		// Compared as the chart reads them (fromJsonArray): inserted label
		// and annotation pairs are not in sorted place in the text.
		if want := Substitute(data, rm, ki.defaults, pv); canonical(got) != canonical(want) {
			return nil, "", nil, fmt.Errorf("the engine's output for %+v is not the sentinel output with those values substituted: a rule depends on more than their text, so the chart cannot carry it", pv)
		}
	}
	if g.env == nil {
		// chart-data: the committed chart must not depend on where `make
		// chart` ran, so its profiles may not read the environment.
		envRes, withEnv, err := g.run(e, mode, withOv, func(string) (string, bool) { return "nrlsentinelenv", true })
		if err != nil {
			return nil, "", nil, fmt.Errorf("render with an environment: %w", err)
		}
		if shipsRecipe {
			if withEnv, err = recipeSentinel(envRes, withEnv); err != nil {
				return nil, "", nil, err
			}
		}
		if withEnv != data {
			return nil, "", nil, fmt.Errorf("the output depends on the environment (${oc.env:...}); the chart renders without one, so it cannot package this profile")
		}
	}
	for _, d := range res.Docs {
		if strings.Contains(d.Name, SentinelUser) || strings.Contains(d.Name, SentinelRunID) || strings.Contains(d.Name, SentinelNamespace) || strings.Contains(d.Name, SentinelName) {
			maxLength, pat := nameRule(d.Kind)
			rm.Names = append(rm.Names, NameRule{Kind: d.Kind, Name: d.Name, MaxLength: maxLength, Pattern: pat})
		}
	}
	for _, d := range res.Diags.Sorted() {
		d.File = g.shown(d.File)
		if g.indexDir != "" {
			// Findings name the profile and recipe as loaded, relative to
			// the working directory; the chart says them as the index does.
			for _, f := range []string{e.Profile, e.Recipe} {
				d.Message = pathInText(f).ReplaceAllString(d.Message, "${1}"+strings.ReplaceAll(g.shown(f), "$", "$$")+"${2}")
			}
		}
		rm.Warnings = append(rm.Warnings, d.String())
	}
	rm.Taken = taken(res.Docs)
	return rm, data, res, nil
}

// knobInfo is which knobs a profile's mode can take, why not the others,
// and the profile's own values of them.
type knobInfo struct {
	avail    map[string]bool
	unavail  map[string]string
	defaults KnobDefaults
}

// knobs tries each knob's sentinel alone: a knob the engine refuses for
// the profile, or that changes nothing in the mode, is unavailable, and
// the chart refuses a value for it with the reason recorded here.
func (g *gen) knobs(e Entry, mode runparams.Mode) (*knobInfo, error) {
	base := sentinelValues("")
	res, data, err := g.run(e, mode, base, g.env)
	if err != nil {
		return nil, err
	}
	in := res.Profile.Infra
	ki := &knobInfo{avail: map[string]bool{}, unavail: map[string]string{}, defaults: knobDefaults(in)}
	all := sentinelKnobs()
	for _, n := range KnobNames {
		try := base
		try.Knobs = all.only(map[string]bool{n: true})
		_, got, err := g.run(e, mode, try, g.env)
		switch {
		case n == KnobEnv && len(in.Env) > 0:
			// The engine writes the profile's and the run's variables in one
			// name order; a substitution could not interleave them.
			ki.unavail[n] = "the profile sets env itself; add the variables there (or nrl-k8s render with infra.env)"
		case err != nil:
			ki.unavail[n] = err.Error()
		case got == data:
			ki.unavail[n] = unavailableWhy(n, mode, in)
		default:
			ki.avail[n] = true
		}
	}
	return ki, nil
}

// baseInfra is the profile a run's knobs are added to: loaded as the
// pipeline loads it for v, without the knobs.
func (g *gen) baseInfra(e Entry, v Values, env func(string) (string, bool)) (*profile.Infra, error) {
	infra, _ := pipeline.SplitOverrides(v.infra)
	prof, ds := profile.Load(profile.Input{Loader: g.loader, File: e.Profile, Overrides: infra, User: v.User, Namespace: v.Namespace, Env: env})
	if prof == nil || ds.HasErrors() {
		return nil, fmt.Errorf("profile %s does not load: %v", e.Profile, ds)
	}
	return prof.Infra, nil
}

// pathInText matches file as a whole word of a message: not part of a
// longer path (a container path that ends the same way).
func pathInText(file string) *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s"'(=])` + regexp.QuoteMeta(file) + `($|[\s"'),:;])`)
}

// maxUser is the longest user that keeps every name within its limit,
// capped at 63 (a user is a DNS label). Names here hold no run id.
func maxUser(names []NameRule) int {
	best := 63
	for _, n := range names {
		k := strings.Count(n.Name, SentinelUser)
		if k == 0 {
			continue
		}
		fixed := len(n.Name) - k*len(SentinelUser)
		if m := (n.MaxLength - fixed) / k; m < best {
			best = m
		}
	}
	return best
}

// clusterFacts records the training capacity and the cluster.* values the
// chart's recipe check starts from. Capacity is counted as check's
// recipeVsCluster counts it (GPU groups only, fn/analyse/capacity: what KubeRay starts);
// TestCapacityMatchesEngine holds the two together.
func (g *gen) clusterFacts(e Entry, res *pipeline.Result, pm *ProfileMeta) error {
	ns, err := g.profileNamespace(e)
	if err != nil {
		return err
	}
	pm.Namespace = ns
	pm.Capacity.GPUsPerWorker = []int64{}
	seen := map[int64]bool{}
	for _, wg := range check.ClusterCount(res.Profile.Infra.Kuberay.Training).GPUGroups() {
		pm.Capacity.GPUNodes += wg.Pods
		if !seen[wg.GPUsPerPod] {
			seen[wg.GPUsPerPod] = true
			pm.Capacity.GPUsPerWorker = append(pm.Capacity.GPUsPerWorker, wg.GPUsPerPod)
		}
	}
	sort.Slice(pm.Capacity.GPUsPerWorker, func(i, j int) bool { return pm.Capacity.GPUsPerWorker[i] < pm.Capacity.GPUsPerWorker[j] })
	if res.Recipe != nil && res.Recipe.Invocation != nil {
		for _, raw := range res.Recipe.Invocation.Overrides {
			o, err := hydra.Parse(raw)
			if err != nil || o.Dynamic || o.Op == hydra.Delete {
				continue
			}
			if k := strings.TrimPrefix(o.Key.String(), "cluster."); k == "gpus_per_node" || k == "num_nodes" {
				if n, ok := check.AsInt(o.Value); ok {
					pm.EntrypointCluster[k] = n
				}
			}
		}
	}
	rec, err := g.loader.Load(e.Recipe)
	if err != nil {
		return err
	}
	for _, k := range []string{"gpus_per_node", "num_nodes"} {
		if v, ok := tree.Lookup(rec.Tree, tree.ParsePath("cluster."+k)); ok {
			if n, ok := check.AsInt(v); ok {
				pm.RecipeCluster[k] = n
			}
		}
	}
	return nil
}

// profileNamespace renders without a namespace override to read the
// profile's own.
func (g *gen) profileNamespace(e Entry) (string, error) {
	res := pipeline.Render(g.loader, pipeline.Request{Recipe: e.Recipe, Profile: e.Profile, Mode: runparams.RayJob, User: SentinelUser, Env: g.env})
	if res.Profile == nil {
		return "", fmt.Errorf("profile does not load")
	}
	return res.Profile.Infra.Namespace, nil
}

// Write puts the generated files into the chart, removing rendered files
// that no profile produces any more.
func Write(chartDir string, files map[string][]byte) error {
	if err := os.MkdirAll(path.Join(chartDir, RenderedDir), 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(path.Join(chartDir, RenderedDir))
	if err != nil {
		return err
	}
	for _, en := range entries {
		rel := path.Join(RenderedDir, en.Name())
		if _, keep := files[rel]; !keep {
			if err := os.Remove(path.Join(chartDir, rel)); err != nil {
				return err
			}
		}
	}
	slots, err := os.ReadDir(path.Join(chartDir, "templates"))
	if err != nil {
		return err
	}
	for _, en := range slots {
		rel := path.Join("templates", en.Name())
		if _, keep := files[rel]; slotRE().MatchString(en.Name()) && !keep {
			if err := os.Remove(path.Join(chartDir, rel)); err != nil {
				return err
			}
		}
	}
	for _, rel := range tree.SortedKeys(files) {
		p := path.Join(chartDir, rel)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[rel]) {
			continue
		}
		if err := os.WriteFile(p, files[rel], 0o644); err != nil {
			return err
		}
	}
	return nil
}
