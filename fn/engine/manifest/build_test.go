package manifest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

// What each mode renders, and the findings that stop it or only warn.
func TestBuild(t *testing.T) {
	const (
		training = "kuberay:\n  training: {name: t, spec: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}}\n"
		gen      = "  generation: {name: g, spec: {headGroupSpec: {template: {spec: {containers: [{name: h}]}}}}}\n"
		ep       = "launch: {entrypoint: 'python examples/run_grpo.py'}\n"
		deps     = "deployments:\n  a: {name: a, spec: {template: {spec: {containers: [{name: c, image: one}]}}}}\n  b: {name: b, spec: {template: {spec: {containers: [{name: c}]}}}}\n"
	)
	for _, tc := range []struct {
		name, profile string
		p             runparams.Run
		recipe        string
		kinds         []string
		want          []string // "severity field"
	}{
		{"rayjob", training + ep, runparams.Run{Mode: runparams.RayJob}, "", []string{"RayJob"}, nil},
		{"rayjob with a recipe ConfigMap", training + ep, runparams.Run{Mode: runparams.RayJob}, "a: 1\n", []string{"ConfigMap", "RayJob"}, nil},
		{"rayjob, other clusters", training + gen + ep, runparams.Run{Mode: runparams.RayJob}, "", []string{"RayJob"}, []string{"warning kuberay.generation"}},
		{"rayjob without training", deps, runparams.Run{Mode: runparams.RayJob}, "", []string{"Deployment", "Deployment"}, []string{"warning kuberay.training"}},
		{"rayjob without deployments", deps + training + ep, runparams.Run{Mode: runparams.RayJob, NoDeployments: true}, "", []string{"RayJob"}, nil},
		{"raycluster", training + ep, runparams.Run{Mode: runparams.RayCluster}, "", []string{"RayCluster", "RayJob"}, nil},
		{"raycluster, no entrypoint", training, runparams.Run{Mode: runparams.RayCluster}, "", []string{"RayCluster"}, []string{"warning launch.entrypoint"}},
		{"raycluster, no training", "kuberay:\n" + gen + ep, runparams.Run{Mode: runparams.RayCluster}, "", []string{"RayCluster"}, []string{"warning kuberay.training"}},
		{"raycluster, no cluster", ep, runparams.Run{Mode: runparams.RayCluster}, "", nil, []string{"warning kuberay"}},
		{"raycluster with a recipe ConfigMap", training + ep, runparams.Run{Mode: runparams.RayCluster}, "a: 1\n", nil, []string{"error launch.recipeSource"}},
		{"dev", "dev: {pvcName: ws}", runparams.Run{Mode: runparams.Dev, User: "alice"}, "", []string{"Pod"}, nil},
		{"unknown mode", training, runparams.Run{Mode: "batch"}, "", nil, []string{"error mode"}},
		{"bad run label", training, runparams.Run{Mode: runparams.RayJob, Labels: map[string]string{"a b": "c"}}, "", nil, []string{"error labels.a b"}},
		{"only deployments", deps + training, runparams.Run{Mode: runparams.RayJob, OnlyDeployments: true}, "", []string{"Deployment", "Deployment"}, nil},
		{"only deployments, none", training, runparams.Run{Mode: runparams.RayJob, OnlyDeployments: true}, "", nil, []string{"error deployments"}},
		{"only deployments, one image for two", deps, runparams.Run{Mode: runparams.RayJob, OnlyDeployments: true, Image: "x"}, "", nil, []string{"error deployments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := infraOf(t, tc.profile)
			bi := Input{Infra: in, File: "p.yaml", Params: runparams.Params{Run: tc.p, RecipeYAML: tc.recipe}}
			if in.Launch.Entrypoint != nil {
				s := entrypoint.Parse(*in.Launch.Entrypoint)
				bi.Entrypoint = &s
			}
			objs, ds := Build(bi)
			var kinds, got []string
			for _, o := range objs {
				kinds = append(kinds, o.(object).GetObjectKind().GroupVersionKind().Kind)
			}
			for _, d := range ds {
				got = append(got, fmt.Sprintf("%s %s", d.Severity, d.Field))
			}
			require.Equal(t, tc.kinds, kinds)
			require.Equal(t, tc.want, got, "%v", ds)
		})
	}
	require.Equal(t, []string{"base", "one"}, DeploymentImages(infraOf(t, "image: base\n"+deps)))
}
