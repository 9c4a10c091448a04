package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

var shipped = []struct{ name, recipe, profile string }{
	{"qwen", "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml", "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml"},
	{"ultra48", "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_48n_pipeclean.gb300.infra.yaml"},
	{"ultra64", "recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml", "profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml"},
}

func renderIn(t *testing.T, src source.Source, req pipeline.Request) []byte {
	t.Helper()
	res := pipeline.Render(recipe.NewLoader(src), req)
	require.False(t, res.Diags.HasErrors(), "%v", res.Diags.Err())
	b, err := emit.Stream(res.Docs)
	require.NoError(t, err)
	return b
}

// Rendering a case 100 times in one process, and in several processes,
// gives one hash, and the binary writes what the pipeline renders.
func TestRenderIsDeterministic(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, s := range shipped {
		for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
			t.Run(s.name+"/"+string(mode), func(t *testing.T) {
				req := pipeline.Request{
					Recipe:    s.recipe,
					Profile:   s.profile,
					Namespace: "default",
					Env:       func(string) (string, bool) { return "", false },
					Run:       fixtures.As(mode),
				}
				n := 100
				if testing.Short() {
					n = 10
				}
				hashes := map[string]int{}
				for i := 0; i < n; i++ {
					hashes[hash(renderIn(t, source.Disk{}, withRoot(root, req)))]++
				}
				require.Len(t, hashes, 1, "100 in-process renders differ")
				for i := 0; i < 5; i++ {
					code, out, stderr := nrl(t, root, "render", s.recipe, "--infra", s.profile, "--mode", string(mode), "--user", "alice", "-n", "default")
					require.Zero(t, code, "%s", stderr)
					hashes[hash(out)]++
				}
				require.Len(t, hashes, 1, "the binary's output differs from run to run or from the pipeline's")
			})
		}
	}
}

func withRoot(root string, r pipeline.Request) pipeline.Request {
	r.Recipe = root + "/" + r.Recipe
	r.Profile = root + "/" + r.Profile
	return r
}

// A profile made to expose map iteration: many labels, annotations,
// deployments and env entries. Every render is byte-identical and every
// mapping is written with sorted keys.
func TestMapOrderNeverReachesOutput(t *testing.T) {
	var p strings.Builder
	p.WriteString("image: img:1\nlabels:\n")
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&p, "  team-%03d: v%d\n", (i*37)%200, i)
	}
	p.WriteString(`launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: python examples/run_grpo.py --config r.yaml
  env:
`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&p, "    VAR_%03d: \"%d\"\n", (i*53)%100, i)
	}
	p.WriteString(`kuberay:
  training:
    name: c
    spec:
      headGroupSpec:
        template:
          metadata:
            annotations:
`)
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&p, "              note/%03d: a%d\n", (i*71)%100, i)
	}
	p.WriteString(`          spec:
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 1
          template:
            spec:
              tolerations: [{operator: Exists}]
              containers: [{name: ray-worker, resources: {limits: {nvidia.com/gpu: "4"}}}]
deployments:
`)
	for i := 0; i < 50; i++ {
		n := (i * 17) % 50
		fmt.Fprintf(&p, `  svc-%02d:
    name: svc-%02d
    spec:
      selector: {matchLabels: {app: svc-%02d}}
      template:
        metadata: {labels: {app: svc-%02d}}
        spec: {containers: [{name: c, ports: [{containerPort: 80}]}]}
`, n, n, n, n)
	}
	src := source.Memory{"p.infra.yaml": []byte(p.String()), "r.yaml": []byte("cluster: {gpus_per_node: 4, num_nodes: 1}\n")}
	for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
		req := pipeline.Request{Recipe: "r.yaml", Profile: "p.infra.yaml", Run: runparams.Run{Mode: mode, User: "alice"}}
		first := renderIn(t, src, req)
		for i := 0; i < 50; i++ {
			require.Equal(t, string(first), string(renderIn(t, src, req)), "render %d differs", i)
		}
		require.Equal(t, 50, strings.Count(string(first), "\nkind: Deployment\n"), "one Deployment per entry")
		requireSortedKeys(t, first)
	}
}

// requireSortedKeys checks that every block mapping of a YAML stream lists
// its keys in order (emit sorts them; a map range would not).
func requireSortedKeys(t *testing.T, stream []byte) {
	t.Helper()
	last := map[int]string{} // indent -> previous key at that indent
	for _, line := range strings.Split(string(stream), "\n") {
		if line == "---" {
			last = map[int]string{}
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if strings.HasPrefix(trimmed, "- ") {
			// A list item opens a new mapping one level deeper.
			for k := range last {
				if k > indent {
					delete(last, k)
				}
			}
			trimmed = trimmed[2:]
			indent += 2
			delete(last, indent)
		}
		key, _, ok := strings.Cut(trimmed, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \"'") || trimmed == "" {
			continue
		}
		for k := range last {
			if k > indent {
				delete(last, k)
			}
		}
		if prev, ok := last[indent]; ok {
			require.Less(t, prev, key, "keys out of order at indent %d", indent)
		}
		last[indent] = key
	}
}
