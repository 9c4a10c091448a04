package pipeline_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/fixtures"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// Shipped is one of NeMo-RL's three GB300 examples and its recipe: the
// repository's copies (profiles/gb300 are NeMo-RL's files unchanged).
type shipped struct{ name, recipe, profile string }

func shippedCases(t *testing.T) []shipped {
	root := testenv.RepoRoot(t)
	j := func(p string) string { return filepath.ToSlash(filepath.Join(root, p)) }
	return []shipped{
		{"qwen3_30b_math_4n_4gpu", j("recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"), j("profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml")},
		{"ultra_48n_pipeclean", j("recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml"), j("profiles/gb300/ultra_48n_pipeclean.gb300.infra.yaml")},
		{"ultra_64n_pipeclean", j("recipes/examples/configs/grpo_ultra_64n4g_pipeclean.yaml"), j("profiles/gb300/ultra_64n_pipeclean.gb300.infra.yaml")},
	}
}

func referenceEntrypoint(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(testenv.Reference(t), name+".rayjob-dryrun.yaml"))
	require.NoError(t, err)
	var ref struct {
		Spec struct {
			Entrypoint string `json:"entrypoint"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(b, &ref))
	require.NotEmpty(t, ref.Spec.Entrypoint)
	return ref.Spec.Entrypoint
}

// The acid test of interpolation and escaping: after resolution, each
// shipped entrypoint equals what nrl-k8s produced, byte for byte.
func TestShippedEntrypointsMatchReference(t *testing.T) {
	for _, c := range shippedCases(t) {
		t.Run(c.name, func(t *testing.T) {
			res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
				Recipe:  c.recipe,
				Profile: c.profile,
				Run:     fixtures.As(runparams.RayJob),
			})
			require.False(t, res.Diags.HasErrors(), "%v", res.Diags)
			want := referenceEntrypoint(t, c.name)
			require.Equal(t, want, *res.Profile.Infra.Launch.Entrypoint)
			var job map[string]any
			for _, d := range res.Docs {
				if d.Kind == "RayJob" {
					job = d.Data
				}
			}
			require.NotNil(t, job)
			require.Equal(t, want, job["spec"].(map[string]any)["entrypoint"])
		})
	}
}

// Only the expected findings: the ultra profiles have more workers than
// the recipe uses (48/64 vs 42/58), which is a warning, not an error; all
// three pipe the driver into tee under `set -eu` without pipefail; qwen says
// codeSource image and mounts its code from Lustre over codePath. All three
// tolerate every taint with a key-less Exists, and their ComputeDomain spans
// segments no constraint keeps in one clique; the ultra profiles' sandbox
// Deployment goes to the default scheduler beside the KAI gang. (Their
// Pod Security findings are TestShippedProfilesPodSecurity's; the KAI gang
// info is asserted apart.)
func TestShippedProfilesCheckClean(t *testing.T) {
	pipefail := func(line int, script string) string {
		return fmt.Sprintf("warning: launch.entrypoint: line %d: the driver call %s is piped without `set -o pipefail`: a crashed driver exits with the pipe's last command (tee's 0) and the job reports success; expected `set -o pipefail` before it (bash; dash 0.5.12+), or the output redirected instead of piped", line, script)
	}
	want := map[string][]string{
		"qwen3_30b_math_4n_4gpu": {pipefail(14, "examples/run_grpo.py")},
		"ultra_48n_pipeclean":    {"warning: kuberay.training.spec.workerGroupSpecs[*].replicas: the training cluster provides 48 GPU nodes but the recipe's cluster.num_nodes is 42 (set by entrypoint override \"cluster.num_nodes=42\"): 6 nodes will sit idle", pipefail(45, "./examples/nemo_gym/run_grpo_nemo_gym.py")},
		"ultra_64n_pipeclean":    {"warning: kuberay.training.spec.workerGroupSpecs[*].replicas: the training cluster provides 64 GPU nodes but the recipe's cluster.num_nodes is 58 (set by entrypoint override \"cluster.num_nodes=58\"): 6 nodes will sit idle", pipefail(45, "./examples/nemo_gym/run_grpo_nemo_gym.py")},
	}
	for _, c := range shippedCases(t) {
		for _, mode := range []runparams.Mode{runparams.RayJob, runparams.RayCluster} {
			t.Run(c.name+"/"+string(mode), func(t *testing.T) {
				res := pipeline.Render(recipe.NewLoader(source.Disk{}), pipeline.Request{
					Recipe:  c.recipe,
					Profile: c.profile,
					Run:     fixtures.As(mode),
				})
				var got []string
				gang := 0
				for _, d := range res.Diags {
					if d.Field == "podSecurity" || strings.HasPrefix(d.Message, "Pod Security ") {
						continue
					}
					if strings.HasPrefix(d.Message, "KAI schedules ") {
						gang++
						continue
					}
					got = append(got, string(d.Severity)+": "+d.Field+": "+d.Message)
					require.Equal(t, c.profile, d.File)
				}
				w := append([]string{}, want[c.name]...)
				ref, obj := shippedRayObject(c.name, mode)
				segments := map[string]int{"qwen3_30b_math_4n_4gpu": 4, "ultra_48n_pipeclean": 3, "ultra_64n_pipeclean": 4}[c.name]
				pods := map[string]int{"qwen3_30b_math_4n_4gpu": 4, "ultra_48n_pipeclean": 48, "ultra_64n_pipeclean": 64}[c.name]
				w = append(w, "warning: output "+obj+".workerGroupSpecs[0].template.spec.tolerations: "+ref+" worker group gpu-workers tolerates every taint ({operator: Exists} without a key), node.kubernetes.io/unschedulable and not-ready included: its pods are placed on cordoned and failing nodes; expected keyed tolerations, e.g. {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}")
				var groups []string
				for i := range segments {
					groups = append(groups, fmt.Sprintf("gpu-workers-segment-%d", i))
				}
				w = append(w, fmt.Sprintf("warning: output %s: the ComputeDomain of %s spans %d pods in worker groups %s, and no required topology constraint keeps them in one domain: KAI applies a pod template's placement to that worker group alone (its pod-grouper makes one subgroup per group), so the groups may land in different NVLink domains; expected one worker group (segmentSize at least its replicas) with the level required on it, if they must share one domain (scheduler.topology.requiredPlacement for the whole run binds the CPU head too: only when the head's nodes are in the domain)", obj, ref, pods, strings.Join(groups, ", ")))
				if c.name == "qwen3_30b_math_4n_4gpu" {
					w = append(w, "warning: output "+obj+".headGroupSpec.template.spec.containers[0].volumeMounts: launch.codeSource is image but container \"ray-head\" mounts volume \"rl-workspace\" at /opt/nemo-rl, over launch.codePath /opt/nemo-rl: the pod runs the volume's code, not the image's; expected codeSource lustre, or no mount at or above codePath")
				} else {
					w = append(w, "warning: : the run's pods go to 2 schedulers: default-scheduler (Deployment/alice-ultra-pipeclean-ns-tools); kai-scheduler ("+ref+"); a pod outside the gang scheduler escapes its queue's accounting and is placed on its own; expected one schedulerName for every pod of the run (scheduler.kind: kai sets it on every Ray and Deployment pod that names none)")
				}
				sort.Strings(w)
				sort.Strings(got)
				require.Equal(t, w, got)
				require.Equal(t, 1, gang, "one KAI gang info")
				require.NotEmpty(t, res.Docs)
			})
		}
	}
}

// Same inputs, same bytes, across renders and loaders.
func TestRenderIsDeterministic(t *testing.T) {
	for _, c := range shippedCases(t) {
		var first []byte
		for i := 0; i < 20; i++ {
			b := fixtures.Stream(t, pipeline.Request{Recipe: c.recipe, Profile: c.profile, Run: fixtures.As(runparams.RayCluster)})
			if first == nil {
				first = b
				continue
			}
			require.Equal(t, string(first), string(b), c.name)
		}
	}
}

// shippedRayObject is the RayJob (rayjob mode) or RayCluster (raycluster
// mode) a shipped profile renders without a run name: its reference and
// the field path of its RayCluster spec in findings.
func shippedRayObject(name string, mode runparams.Mode) (ref, field string) {
	cluster := map[string]string{
		"qwen3_30b_math_4n_4gpu": "alice-raycluster-qwen3-30b-math-gb300",
		"ultra_48n_pipeclean":    "alice-ultra-pipeclean-training",
		"ultra_64n_pipeclean":    "alice-ultra-pipeclean-training",
	}[name]
	if mode == runparams.RayCluster {
		return "RayCluster/" + cluster, "RayCluster/" + cluster + " spec"
	}
	return "RayJob/" + cluster, "RayJob/" + cluster + " spec.rayClusterSpec"
}
