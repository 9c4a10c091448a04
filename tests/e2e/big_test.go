package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
)

// BigRecipe is a valid recipe of about size bytes: the keys a render reads,
// then a large `data:` section of nested mappings and interpolations.
func BigRecipe(size int) []byte {
	var b strings.Builder
	b.WriteString("cluster: {gpus_per_node: 4, num_nodes: 2}\npolicy:\n  megatron_cfg: {enabled: false}\n  dtensor_cfg: {enabled: true}\n  model_name: m\ndata:\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "  section_%06d:\n    name: ${policy.model_name}-%d\n    values: [1, 2.5, true, null, \"text %d\"]\n    nested: {a: {b: {c: %d}}}\n", i, i, i, i)
	}
	return []byte(b.String())
}

// ManyGroupsProfile is a profile whose training cluster has n worker
// groups of 2 replicas, split into segments of 2.
func ManyGroupsProfile(n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: python examples/run_grpo.py --config r.yaml cluster.num_nodes=%d
kuberay:
  training:
    name: big
    segmentSize: 2
    spec:
      headGroupSpec:
        template:
          spec:
            nodeSelector: {nodeGroup: cpu}
            containers: [{name: ray-head}]
      workerGroupSpecs:
`, 2*n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `        - groupName: gpu-%d
          replicas: 2
          template:
            metadata: {annotations: {kai.scheduler/topology: t}}
            spec:
              tolerations: [{operator: Exists}]
              resourceClaims: [{name: compute-domain-channel}]
              containers: [{name: ray-worker, resources: {limits: {nvidia.com/gpu: "4"}}}]
`, i)
	}
	return []byte(b.String())
}

const smallProfile = `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: python examples/run_grpo.py --config r.yaml
kuberay:
  training:
    name: c
    spec:
      headGroupSpec:
        template:
          spec:
            nodeSelector: {nodeGroup: cpu}
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 2
          template:
            spec:
              tolerations: [{operator: Exists}]
              containers: [{name: ray-worker, resources: {limits: {nvidia.com/gpu: "4"}}}]
`

// A recipe just under the input limit (source.MaxFileSize) renders; the
// benchmark below measures its memory. One over the limit is refused
// (docs/reliability.md: a hostile file must not exhaust the runner).
func TestBigRecipeRenders(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a 1 MB recipe")
	}
	rec := BigRecipe(source.MaxFileSize - 200)
	require.LessOrEqual(t, len(rec), source.MaxFileSize)
	src := source.Memory{"r.yaml": rec, "p.infra.yaml": []byte(smallProfile)}
	out := renderIn(t, src, pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: runparams.Run{Mode: runparams.RayJob, User: "alice"}})
	require.Contains(t, string(out), "kind: RayJob")
}

// A training cluster of 1,000 worker groups renders, every group kept.
func TestThousandWorkerGroupsRender(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 1,000 worker groups")
	}
	src := source.Memory{"r.yaml": []byte("cluster: {gpus_per_node: 4, num_nodes: 2000}\n"), "p.infra.yaml": ManyGroupsProfile(1000)}
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		out := string(renderIn(t, src, pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: runparams.Run{Mode: mode, User: "alice"}}))
		require.Equal(t, 1000, strings.Count(out, "groupName: gpu-"), mode)
		require.Contains(t, out, "groupName: gpu-999\n", mode)
	}
}

// BenchmarkBigInputs measures time and memory of the two big inputs; the
// tests above only say they render.
func BenchmarkBigInputs(b *testing.B) {
	for name, src := range map[string]source.Memory{
		"recipe=1MB":        {"r.yaml": BigRecipe(source.MaxFileSize - 200), "p.infra.yaml": []byte(smallProfile)},
		"workerGroups=1000": {"r.yaml": []byte("cluster: {gpus_per_node: 4, num_nodes: 2000}\n"), "p.infra.yaml": ManyGroupsProfile(1000)},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res := pipeline.Render(recipe.NewLoader(src), pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: runparams.Run{Mode: runparams.RayJob, User: "alice"}})
				if res.Diags.HasErrors() || len(res.Docs) == 0 {
					b.Fatal(res.Diags.Err())
				}
			}
		})
	}
}
