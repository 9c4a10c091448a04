package pipeline_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/check"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// fittingProfile is a training cluster of exactly the recipe's size, run by
// the driver of the recipe's algorithm.
func fittingProfile(driver string, nodes, gpus int64) string {
	return fmt.Sprintf(`image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: |
    set -o pipefail
    python %s --config examples/configs/grpo_math_1B.yaml 2>&1 | tee /tmp/log
kuberay:
  training:
    name: c
    spec:
      headGroupSpec:
        template:
          spec:
            containers: [{name: ray-head}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: %d
          template:
            spec:
              tolerations: [{operator: Exists}]
              containers:
                - name: ray-worker
                  resources: {limits: {nvidia.com/gpu: "%d"}}
`, driver, nodes, gpus)
}

// driverFor is NeMo-RL's usual driver for an algorithm.
var driverFor = map[string]string{
	"grpo": "examples/run_grpo.py", "sft": "examples/run_sft.py", "dpo": "examples/run_dpo.py",
	"rm": "examples/run_rm.py", "ppo": "examples/run_ppo.py", "distillation": "examples/run_distillation.py",
	"eval": "examples/run_eval.py",
}

// knownViolations are shipped recipes that NeMo-RL itself would stop at
// their own cluster size, with what we report. grpo_ultra_64n4g_pipeclean
// says its cluster is "overridden by launch script": at its own 64 nodes,
// 38 train after the 26 generation nodes, 152 GPUs that TP 8 × CP 8 = 64
// does not divide (lm_policy.py:233); NeMo-RL's GB300 launch script (our
// profiles/gb300/ultra_64n_pipeclean) passes cluster.num_nodes=58, 32 × 4 =
// 128 GPUs. It runs TP 8 on 4-GPU nodes inside one NVL72 NVLink domain; the
// synthetic profile here claims no ComputeDomain, hence the warning.
var knownViolations = map[string][]string{
	"examples/configs/grpo_ultra_64n4g_pipeclean.yaml": {
		"the policy trains on 152 GPUs",
		"tensor parallel groups span nodes",
	},
}

// TestEveryShippedRecipeFitsItsOwnCluster renders every recipe under
// recipes/examples/configs (the shipped recipes/ folder and the bases) with the driver of its algorithm on a
// training cluster of its own cluster.num_nodes × cluster.gpus_per_node:
// the driver, type, parallelism and batch checks (fn/engine/check driver.go,
// values.go, parallel.go) must find nothing, since NeMo-RL runs them.
func TestEveryShippedRecipeFitsItsOwnCluster(t *testing.T) {
	root := testenv.Recipes(t)
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "examples", "configs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	}))
	sort.Strings(files)
	require.Greater(t, len(files), 200, "the vendored recipes are all there")
	judged := map[string]int{}
	for _, file := range files {
		l := recipe.NewLoader(source.Disk{})
		req := pipeline.Request{Recipe: file, RecipeRoot: filepath.ToSlash(root), Run: runparams.Run{Mode: runparams.RayJob, User: "alice"}}
		rec, err := l.Load(file)
		require.NoError(t, err, file)
		algs := check.RecipeAlgorithms(rec.Tree)
		driver := "examples/run_grpo.py"
		if len(algs) > 0 {
			driver = driverFor[algs[0]]
			judged[algs[0]]++
		}
		prof := filepath.Join(t.TempDir(), "p.infra.yaml")
		req.Profile = filepath.ToSlash(prof)
		nodes, okN := intAt(rec.Tree, "cluster.num_nodes")
		gpus, okG := intAt(rec.Tree, "cluster.gpus_per_node")
		if !okN || !okG {
			// An interpolation: resolve it as the pod would.
			require.NoError(t, os.WriteFile(prof, []byte(fittingProfile(driver, 1, 1)), 0o644))
			nodes, gpus = clusterSize(t, l, req)
		}
		require.NoError(t, os.WriteFile(prof, []byte(fittingProfile(driver, nodes, gpus)), 0o644))
		res := pipeline.Render(recipe.NewLoader(source.Disk{}), req)
		rel := strings.TrimPrefix(file, filepath.ToSlash(root)+"/")
		want := knownViolations[rel]
		seen := map[string]bool{}
		for _, d := range res.Diags {
			if d.Severity == diag.Info {
				continue
			}
			if d.Severity != diag.Error && !strings.Contains(d.Message, "tensor parallel groups span nodes") {
				continue
			}
			found := false
			for _, w := range want {
				if strings.Contains(d.Message, w) {
					seen[w], found = true, true
				}
			}
			if !found {
				t.Errorf("%s (%d nodes × %d GPUs): %s", file, nodes, gpus, d)
			}
		}
		for _, w := range want {
			require.True(t, seen[w], "%s: the known violation %q is no longer reported", rel, w)
		}
	}
	t.Logf("recipes per algorithm: %v", judged)
	require.NotZero(t, judged["grpo"])
	require.NotZero(t, judged["sft"])
	require.NotZero(t, judged["dpo"])
}

// clusterSize is the recipe's own cluster.num_nodes and gpus_per_node.
func clusterSize(t *testing.T, l *recipe.Loader, req pipeline.Request) (int64, int64) {
	file := req.Recipe
	res := pipeline.Render(l, req)
	require.NotNil(t, res.Recipe, "%s: %v", file, res.Diags)
	n, _, _ := res.Recipe.Value("cluster.num_nodes")
	g, _, _ := res.Recipe.Value("cluster.gpus_per_node")
	nodes, ok1 := n.(int64)
	gpus, ok2 := g.(int64)
	require.True(t, ok1 && ok2, "%s: cluster.num_nodes=%v gpus_per_node=%v", file, n, g)
	return nodes, gpus
}

func intAt(m *tree.Map, key string) (int64, bool) {
	v, ok := tree.Lookup(m, tree.ParsePath(key))
	n, isInt := v.(int64)
	return n, ok && isInt
}
