package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// check exits 1 on an error finding and 2 on usage; `validate` is check.
func TestCheckExitCodes(t *testing.T) {
	r, p := qwen(t)
	runCases(t, []cliCase{
		{name: "error finding", args: []string{"check", r, "cluster.gpus_per_node=8", "--infra", p, "--user", "alice"}, code: cli.ExitError,
			out: `expected 8, the recipe's cluster.gpus_per_node (set by run override "cluster.gpus_per_node=8")`},
		{name: "bad mode", args: []string{"check", r, "--infra", p, "--mode", "nope"}, code: cli.ExitUsage, err: `--mode "nope"`},
		{name: "bad format", args: []string{"check", r, "--infra", p, "-o", "yaml"}, code: cli.ExitUsage, err: "-o yaml: expected text (the summary) or json"},
		{name: "no recipe", args: []string{"check"}, code: cli.ExitUsage, err: "requires at least 1 arg(s), only received 0"},
		{name: "validate", args: []string{"validate"}, code: cli.ExitUsage, err: "requires at least 1 arg(s), only received 0"},
		{name: "unknown flag", args: []string{"check", r, "--no-such-flag"}, code: cli.ExitUsage, err: "unknown flag: --no-such-flag"},
	})
}

// strictProfile is valid Go but its upscalingMode is not in the RayCluster
// CRD's enum.
const strictProfile = `image: img:1
launch:
  codeSource: image
  codePath: /opt/nemo-rl
  entrypoint: python examples/run_grpo.py --config r.yaml
kuberay:
  training:
    name: c
    spec:
      enableInTreeAutoscaling: true
      autoscalerOptions: {upscalingMode: Fast}
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

// A value the Go types accept but the CRD's schema does not (an enum)
// passes a plain check and fails check --strict, naming the field.
func TestCheckStrict(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.infra.yaml"), []byte(strictProfile), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.yaml"), []byte("cluster: {gpus_per_node: 4, num_nodes: 2}\n"), 0o644))
	t.Chdir(dir)
	args := []string{"check", "r.yaml", "--infra", "p.infra.yaml", "--user", "alice"}
	runCases(t, []cliCase{
		{name: "plain", args: args, out: " 0 error(s)"},
		{name: "strict", args: append(args, "--strict"), code: cli.ExitError,
			out: `error: p.infra.yaml: output RayJob/c.spec.rayClusterSpec.autoscalerOptions.upscalingMode: Unsupported value: "Fast": supported values: "Default", "Aggressive", "Conservative"`},
	})
}

// check's text: the summary, the findings, the Pod Security level the
// pods need and what must exist before apply.
func TestCheckSummary(t *testing.T) {
	r, p := qwen(t)
	code, out, _ := clirun.Run("check", r, "--infra", p, "--user", "alice")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "training: alice-raycluster-qwen3-30b-math-gb300")
	require.Contains(t, out, "workers 4x (4 segments x 1) cpu=132 mem=900Gi gpu=16")
	require.Contains(t, out, "ComputeDomain: compute-domain-alice-raycluster-qwen3-30b-math-gb300-training")
	// The warnings: the shipped entrypoint pipes the driver into tee
	// without pipefail, codeSource image runs the code mounted over
	// codePath, Pod Security baseline refuses each of the four worker
	// groups' IPC_LOCK, the workers tolerate every taint, and the
	// ComputeDomain spans four segments nothing keeps in one clique.
	require.Contains(t, out, "0 error(s), 8 warning(s)")
	require.Contains(t, out, "KAI schedules RayJob/alice-raycluster-qwen3-30b-math-gb300 as one gang: a PodGroup of 5 pods")
	require.Contains(t, out, "piped without `set -o pipefail`")
	require.Contains(t, out, "launch.codeSource is image but container \"ray-head\" mounts volume \"rl-workspace\" at /opt/nemo-rl")
	// The summary reads the objects: the scheduler the pods name and the
	// --config the pod reads.
	require.Contains(t, out, "scheduler:   kai-scheduler (queue=rl)")
	require.Contains(t, out, "pod reads:   --config examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml (line 14)")
	require.Contains(t, out, "needs: privileged")
	require.Contains(t, out, `must not include "IPC_LOCK"`)
	require.Contains(t, out, "ServiceAccount v1 default/nemo-rl-endpoint-registry")
	require.Contains(t, out, "DeviceClass resource.k8s.io/v1 roce.networking.k8s.aws")
}

// check -o json: one object with the findings, the Pod Security level the
// pods need with the fields that push it there, and the prerequisites.
func TestCheckJSON(t *testing.T) {
	r, p := qwen(t)
	code, out, _ := clirun.Run("check", r, "--infra", p, "--user", "alice", "-o", "json")
	require.Equal(t, cli.ExitOK, code)
	var got struct {
		Valid       bool `json:"valid"`
		PodSecurity struct {
			Level      string `json:"level"`
			Violations []struct {
				Object, Path, Level, Check, Detail, Why string
			} `json:"violations"`
		} `json:"podSecurity"`
		Prerequisites []struct {
			Kind, APIVersion, Namespace, Name, Why string
		} `json:"prerequisites"`
		Findings []struct{ Severity, Message string } `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.True(t, got.Valid)
	require.Equal(t, "privileged", got.PodSecurity.Level)
	first := got.PodSecurity.Violations[0]
	require.Equal(t, "baseline", first.Level)
	require.Equal(t, "capabilities_baseline", first.Check)
	require.Contains(t, first.Detail, "IPC_LOCK")
	require.Contains(t, first.Why, "RLIMIT_MEMLOCK")
	require.Equal(t, "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].securityContext.capabilities.add", first.Path)
	var sa bool
	for _, p := range got.Prerequisites {
		if p.Kind == "ServiceAccount" {
			require.Equal(t, "default", p.Namespace)
			require.Equal(t, "nemo-rl-endpoint-registry", p.Name)
			require.Equal(t, "v1", p.APIVersion)
			sa = true
		}
	}
	require.True(t, sa, "the GB300 profile's ServiceAccount is a prerequisite")
	require.NotEmpty(t, got.Findings)

	// Errors: still one JSON object, no podSecurity (nothing rendered), exit 1.
	code, out, _ = clirun.Run("check", r, "cluster.gpus_per_node=8", "--infra", p, "--user", "alice", "-o", "json")
	require.Equal(t, cli.ExitError, code)
	var bad map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &bad), out)
	require.Equal(t, false, bad["valid"])
	require.Nil(t, bad["podSecurity"])
}

// check's summary counts workers as KubeRay starts them (fn/analyse/capacity), on
// the golden cases.
func TestCheckSummaryCountsAsKubeRay(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, tc := range []struct {
		dir   string
		lines []string
	}{
		{"min-replicas-over-replicas", []string{
			"    workers 16x (2 segments x 8) cpu=96 mem=1Ti gpu=128\n",
			"    group gpu: 16 pods: replicas=4 clamped to [minReplicas=16, maxReplicas=16] as KubeRay does\n",
		}},
		{"replicas-over-max-replicas", []string{
			"    workers 4x (4 segments x 1) cpu=96 mem=1Ti gpu=32\n",
			"    group gpu: 4 pods: replicas=2147483647 clamped to [minReplicas=0, maxReplicas=4] as KubeRay does\n",
		}},
		{"autoscaling-ceiling", []string{
			"    workers 2x cpu=96 mem=1Ti gpu=16\n",
			"    autoscaling up to: 4 workers, 32 GPUs (maxReplicas × numOfHosts)\n",
		}},
		{"second-gpu-container", []string{"    workers 2x cpu=48 mem=512Gi gpu=16\n"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join(root, "tests", "golden", tc.dir)
			code, out, errb := clirun.Run("check", filepath.Join(dir, "recipes/examples/configs/r.yaml"), "--infra", filepath.Join(dir, "p.infra.yaml"),
				"--user", "alice", "--recipe-root", filepath.Join(dir, "recipes"))
			require.Equal(t, cli.ExitOK, code, out+errb)
			for _, l := range tc.lines {
				require.Contains(t, out, l)
			}
			require.NotContains(t, out, "more than 100000")
		})
	}
}

// check's summary lists every default the render used (docs/architecture.md, "The defaults a render used"), and
// none where the profile names the setting.
func TestCheckSummaryListsDefaults(t *testing.T) {
	r, p := qwen(t)
	code, out, _ := clirun.Run("check", r, "--infra", p, "--user", "alice")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "DEFAULTS APPLIED")
	require.Contains(t, out, "  dra.roce.deviceClassName = roce.networking.k8s.aws (")
	require.Contains(t, out, "  dra.roce.count = 8 (")
	code, out, _ = clirun.Run("check", r, "--infra", p, "--user", "alice", "--mode", "dev")
	require.Equal(t, cli.ExitOK, code)
	require.Contains(t, out, "  dev.pvcName = rl-workspace (from the one PersistentVolumeClaim the profile's Ray pods mount)\n")
	root := testenv.RepoRoot(t)
	code, out, _ = clirun.Run("check", filepath.Join(root, "recipes/examples/configs/recipes/llm/grpo-nemotron3-super-120BA12B-16n8g-megatron.yaml"),
		"--infra", filepath.Join(root, "profiles/h200/grpo-nemotron3-super-120BA12B-16n8g.h200-research.infra.yaml"), "--user", "alice")
	require.Equal(t, cli.ExitOK, code, out)
	require.NotContains(t, out, "dra.", "the H200 profile names its InfiniBand class and count")
	require.Contains(t, out, "ResourceClaimTemplate: infiniband-alice-h200-research-training")
	require.Contains(t, out, "  0 error(s), 0 warning(s)")
}

// A profile whose raycluster mode renders only deployments still gets its
// summary (as nrl-k8s does: docs/nrl-k8s.md).
func TestCheckSummaryOfDeploymentsOnly(t *testing.T) {
	dir := filepath.Join(testenv.RepoRoot(t), "tests", "golden", "deployments-only")
	code, out, errb := clirun.Run("check", filepath.Join(dir, "recipes/examples/configs/small.yaml"), "--infra", filepath.Join(dir, "p.infra.yaml"),
		"--user", "carol", "--mode", "raycluster", "--recipe-root", filepath.Join(dir, "recipes"))
	require.Equal(t, cli.ExitOK, code, out+errb)
	require.Contains(t, out, "namespace:   default\n")
	require.Contains(t, out, "DEPLOYMENTS\n-----------\n  carol-sandbox\n")
}
