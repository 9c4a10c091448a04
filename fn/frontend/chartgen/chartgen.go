// Package chartgen generates the data the Helm chart charts/nemo-rl-run
// carries: every packaged profile rendered by the Go engine (pipeline.Render)
// with sentinel run parameters, plus the metadata the chart's one template
// needs to put the real parameters in. The chart holds no rendering rule of
// its own: it substitutes strings in engine output and ends with toYaml, the
// same sigs.k8s.io/yaml.Marshal that emit.Marshal calls, so `helm template`
// and `nrl-k8s render` print the same bytes (docs/architecture.md).
package chartgen

import (
	"encoding/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
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
	// SentinelRecipeHash stands for manifest.RecipeHash of that text in the
	// ConfigMap's name and the head's volume: ten characters, as the hash
	// is, so the chart's name checks see the final length.
	SentinelRecipeHash = "h9x9h9x9h9"
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
	RecipeHash string `json:"recipeHash"`
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
