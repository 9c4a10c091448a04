// Package bench holds the benchmarks `make bench` prints: one render per
// shipped example and mode, recipe resolution, the KRM function on one run,
// and kustomize builds of 1 to 1,000 runs. Nothing here runs outside
// -bench except the cheap checks that the benchmarked inputs are valid.
package bench

import (
	"testing"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// example is a shipped recipe with its GB300 profile.
type example struct{ name, recipe, profile string }

var examples = []example{
	{"qwen", "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
	{"ultra64", "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"},
}

func request(tb testing.TB, e example, mode runparams.Mode) pipeline.Request {
	root := testenv.RepoRoot(tb)
	return pipeline.Request{
		Recipe:    root + "/" + e.recipe,
		Profile:   root + "/" + e.profile,
		Namespace: "default",
		Run:       fixtures.As(mode),
	}
}

func renderOnce(tb testing.TB, req pipeline.Request) []byte {
	res := pipeline.Render(recipe.NewLoader(source.Disk{}), req)
	if res.Diags.HasErrors() {
		tb.Fatalf("render: %v", res.Diags.Err())
	}
	b, err := emit.Stream(res.Docs)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkRender is one whole render (files read, nothing cached) per
// shipped example and cluster mode: what one `nrl-k8s render` does after
// start-up.
func BenchmarkRender(b *testing.B) {
	for _, e := range examples {
		for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
			req := request(b, e, mode)
			b.Run(e.name+"/"+string(mode), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					renderOnce(b, req)
				}
			})
		}
	}
}

// BenchmarkResolveRecipe is the recipe's `defaults:` chain loaded and merged.
func BenchmarkResolveRecipe(b *testing.B) {
	for _, e := range examples {
		file := testenv.RepoRoot(b) + "/" + e.recipe
		b.Run(e.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := recipe.NewLoader(source.Disk{}).Load(file); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
