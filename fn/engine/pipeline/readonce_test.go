package pipeline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

// A render reads its entrypoint once (docs/architecture.md): the effective
// recipe, the pod's --config, the checks and the build all take the resolve
// stage's reading, the build edits it for the run's --config and overrides.
// Not parallel: the count is the process's.
func TestEntrypointReadOncePerRender(t *testing.T) {
	const root = "../../../"
	for _, tc := range []struct {
		name, recipe, profile string
		mode                  runparams.Mode
	}{
		{"memory profile, rayjob", "r.yaml", "p.infra.yaml", runparams.RayJob},
		{"memory profile, raycluster training job", "r.yaml", "p.infra.yaml", runparams.RayCluster},
		{"shipped profile, --config rewritten", root + "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
			root + "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml", runparams.RayJob},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var src source.Source = source.Disk{}
			if tc.recipe == "r.yaml" {
				src = source.Memory{"p.infra.yaml": []byte(goodProfile), "r.yaml": []byte(goodRecipe)}
			}
			before := entrypoint.Parses()
			res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{
				Recipe: tc.recipe, Profile: tc.profile,
				Overrides: []string{"++nrl_read_once=1"},
				Run:       runparams.Run{Mode: tc.mode, User: "alice"},
			})
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags.Err())
			require.EqualValues(t, 1, entrypoint.Parses()-before, "entrypoint reads in one render")
			found := false
			for _, d := range res.Docs {
				spec, _ := d.Data["spec"].(map[string]any)
				ep, _ := spec["entrypoint"].(string)
				found = found || (d.Kind == "RayJob" && strings.Contains(ep, "++nrl_read_once=1"))
			}
			require.True(t, found, "the run's override reached the training job's entrypoint")
		})
	}
}
