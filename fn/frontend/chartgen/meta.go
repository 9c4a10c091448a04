package chartgen

import (
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/secrets"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Meta is files/profiles.json.
type Meta struct {
	Sentinels Sentinels               `json:"sentinels"`
	Profiles  map[string]*ProfileMeta `json:"profiles"`
	// Secrets are fn/analyse/secrets' rules, for the chart's check of env values
	// (the engine refuses a literal credential in a manifest).
	Secrets secrets.Rules `json:"secrets"`
	// Namespaces bind the chart (the index's namespaces): a release in,
	// or a namespace value naming, any other is refused; none: any.
	Namespaces []string `json:"namespaces,omitempty"`
	// State is what the chart's state value means to a live object.
	State StateMeta `json:"state"`
}

// ProfileMeta is what the chart knows about one packaged profile.
type ProfileMeta struct {
	Description string `json:"description"`
	Profile     string `json:"profile"`
	Recipe      string `json:"recipe"`
	// Namespace is the profile's own; the chart uses the release namespace
	// unless `namespace` is set, so it is informational.
	Namespace string   `json:"namespace"`
	Modes     []string `json:"modes"`
	// ModesRefused are the modes the profile cannot render, with the
	// engine's reason (the chart refuses them with it).
	ModesRefused map[string]string `json:"modesRefused,omitempty"`
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
	// Queues are the queues the rayjob render is labelled with (queues.go).
	Queues []QueueRef `json:"queues,omitempty"`
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
	// Stopped is how the render's stopped form (state: stopped) differs
	// from it (stop.go).
	Stopped *StopPlan `json:"stopped"`
}

// apiMinKube maps an API version the engine emits to the first Kubernetes
// release that serves it: the chart refuses to render it for an older
// cluster (helm --kube-version, or the cluster helm install talks to).
var apiMinKube = map[string]string{
	vocab.DRAAPIVersion: "1.34.0",
}

// kubeVersion is the constraint a render's documents need.
func kubeVersion(docs []rendered.Doc) string {
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
	// stopped renders the run's stopped form (runparams.Stopped).
	stopped bool
}

func (v Values) state() runparams.State {
	if v.stopped {
		return runparams.Stopped
	}
	return runparams.Running
}
