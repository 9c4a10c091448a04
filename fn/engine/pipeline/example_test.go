package pipeline_test

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
)

// The README's render: NeMo-RL's GB300 qwen3-30B recipe with its profile,
// as a one-shot RayJob. Every entry point calls Render; this prints what it
// made (emit.Stream would write it).
func ExampleRender() {
	const root = "../../../" // the repository, from this package's folder
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
		Recipe:  root + "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml",
		Profile: root + "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml",
		Run: runparams.Run{
			Mode: runparams.RayJob,
			User: "alice",
		},
	})
	if res.Diags.HasErrors() {
		fmt.Println(res.Diags.Err())
		return
	}
	for _, d := range res.Docs {
		fmt.Println(d.Kind, d.Name)
	}
	// Output:
	// ComputeDomain compute-domain-alice-raycluster-qwen3-30b-math-gb300-training
	// RayJob alice-raycluster-qwen3-30b-math-gb300
	// ResourceClaimTemplate roce-alice-raycluster-qwen3-30b-math-gb300-training
}
