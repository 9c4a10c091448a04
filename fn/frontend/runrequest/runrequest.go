// Package runrequest turns a NemoRLRun into the pipeline's request: the
// run's own metadata as its identity (name, namespace, labels, annotations),
// its paths relative to the run file. The KRM function and render-all both
// render a run through it.
package runrequest

import (
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
)

// Of turns the run into a pipeline request; paths are resolved relative to
// base, the run file's path (they are relative to its directory).
func Of(r *runspec.NemoRLRun, base string) pipeline.Request {
	rel := func(p string) string {
		if p == "" {
			return ""
		}
		return source.Join(base, p)
	}
	env := r.Spec.Env
	name, ns := r.Spec.Name, r.Spec.Namespace
	params := pipeline.RunSpecParams
	if name == "" {
		name, params.Name = r.Metadata.Name, "metadata.name"
	}
	// The run is a Kubernetes object: its own metadata.namespace is its
	// namespace, which kustomize's namespace transformer (its own
	// kustomization's or an overlay's, which kustomize v5 passes down to a
	// base's items) and kpt's set; spec.namespace is the older spelling,
	// read only where metadata.namespace is empty.
	if r.Metadata.Namespace != "" {
		ns, params.Namespace = r.Metadata.Namespace, "metadata.namespace"
	}
	return pipeline.Request{
		Recipe:       rel(r.Spec.Recipe),
		Profile:      rel(r.Spec.Profile),
		UserDefaults: rel(r.Spec.Defaults),
		RecipeRoot:   rel(r.Spec.RecipeRoot),
		// The run's own metadata is its identity: its name names the run's
		// objects, its namespace wins over the profile's, its labels and
		// annotations (not the tools' bookkeeping) go onto every object.
		Namespace:  ns,
		ParamNames: params,
		Overrides:  r.Spec.Overrides,
		Env: func(k string) (string, bool) {
			v, ok := env[k]
			return v, ok
		},
		Run: runparams.Run{
			Mode:        runparams.Mode(r.Mode()),
			RunID:       r.Spec.RunID,
			User:        runparams.NormalizeUser(r.Spec.User),
			Name:        name,
			Labels:      r.Metadata.Labels,
			Annotations: userAnnotations(r.Metadata.Annotations),
			// The shared services: one run of a repository owns them.
			NoDeployments:   r.Spec.NoDeployments,
			OnlyDeployments: r.Spec.OnlyDeployments,
			State:           runparams.State(r.Spec.State),
		},
	}
}

// toolPrefixes are the annotations kustomize, kpt and kubectl keep on items
// for themselves (file paths, origins, local-config): not the run's.
var toolPrefixes = []string{
	"config.kubernetes.io/", "internal.config.kubernetes.io/", "alpha.config.kubernetes.io/",
	"config.k8s.io/", "kustomize.config.k8s.io/", "kpt.dev/", "kubectl.kubernetes.io/",
}

func userAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		tool := false
		for _, p := range toolPrefixes {
			tool = tool || strings.HasPrefix(k, p)
		}
		if !tool {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}
