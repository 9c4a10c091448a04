package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

func qwen(t *testing.T) (string, string) {
	root := testenv.RepoRoot(t)
	return filepath.Join(root, "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml"),
		filepath.Join(root, "profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml")
}

func TestCheckExitCodes(t *testing.T) {
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

	code, out, _ = clirun.Run("check", r, "cluster.gpus_per_node=8", "--infra", p, "--user", "alice")
	require.Equal(t, cli.ExitError, code)
	require.Contains(t, out, `expected 8, the recipe's cluster.gpus_per_node (set by run override "cluster.gpus_per_node=8")`)

	code, _, errOut := clirun.Run("check", r, "--infra", p, "--mode", "nope")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, errOut, `--mode "nope"`)

	code, _, _ = clirun.Run("check")
	require.Equal(t, cli.ExitUsage, code)
	code, _, _ = clirun.Run("check", r, "--no-such-flag")
	require.Equal(t, cli.ExitUsage, code)
}

func TestRenderWritesFileAndNamespaceOverride(t *testing.T) {
	r, p := qwen(t)
	out := filepath.Join(t.TempDir(), "sub", "run.yaml")
	code, stdout, stderr := clirun.Run("render", r, "--infra", p, "--user", "alice", "-n", "team-a", "--output-file", out)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Empty(t, stdout)
	data := testenv.ReadFile(t, out)
	require.Equal(t, 3, strings.Count(data, "\nkind: "))
	require.Equal(t, 3, strings.Count(data, "namespace: team-a"))
	require.NotContains(t, data, "&id")
}

func TestValuesPrintsResolvedProfileAndRecipeKeys(t *testing.T) {
	r, p := qwen(t)
	code, out, stderr := clirun.Run("values", r, "--infra", p, "--user", "Alice_X")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, out, "name: alice-x-raycluster-qwen3-30b-math-gb300")
	require.Contains(t, out, "cluster.gpus_per_node: 4")
	require.Contains(t, out, "cluster.num_nodes: 4")
	require.NotContains(t, out, "_shared")
	require.Contains(t, out, "LOG=${LOG_DIR}/alice-x-raycluster")
}

// --root confines what render reads (the rule render-all applies); without
// it the CLI reads the user's files anywhere, but only regular files.
func TestRenderRoot(t *testing.T) {
	top := t.TempDir()
	repo := filepath.Join(top, "repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(top, "outside.yaml"), []byte("a: 1\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "r.yaml"), []byte("defaults: ../outside.yaml\n"), 0o644))
	r := filepath.Join(repo, "r.yaml")

	code, _, stderr := clirun.Run("render", r, "--user", "alice", "--root", repo)
	require.Equal(t, cli.ExitError, code)
	require.Contains(t, stderr, "r.yaml: defaults: base file ")
	require.Contains(t, stderr, "outside.yaml: not a file inside the root; refused")

	code, _, stderr = clirun.Run("render", r, "--user", "alice")
	require.Equal(t, cli.ExitError, code)
	require.NotContains(t, stderr, "inside the root", "unconfined without --root")
	require.Contains(t, stderr, "no infra profile")

	code, _, stderr = clirun.Run("render", r, "--user", "alice", "--root", filepath.Join(top, "nope"))
	require.Equal(t, cli.ExitUsage, code, stderr)

	if _, err := os.Stat("/dev/zero"); err == nil {
		code, _, stderr = clirun.Run("render", "/dev/zero", "--user", "alice")
		require.Equal(t, cli.ExitError, code)
		require.Contains(t, stderr, "/dev/zero: is a device, not a regular file")
	}
}

// --recipe-root names the local recipe root; a recipe outside it cannot be
// mapped into the pod, and the error names both paths.
func TestRecipeRootFlag(t *testing.T) {
	r, p := qwen(t)
	root := testenv.RepoRoot(t)
	code, _, errOut := clirun.Run("render", r, "--infra", p, "--user", "alice", "--recipe-root", filepath.Join(root, "profiles"))
	require.Equal(t, cli.ExitError, code)
	require.Contains(t, errOut, "is not under the recipe root "+filepath.ToSlash(filepath.Join(root, "profiles")))

	code, out, errOut := clirun.Run("render", r, "--infra", p, "--user", "alice", "--recipe-root", filepath.Join(root, "recipes"))
	require.Equal(t, cli.ExitOK, code, errOut)
	require.Contains(t, out, "--config examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml")
	require.NotContains(t, errOut, "rewritten")
}

// Usage mistakes exit 2, whichever part of cobra finds them; --help and a
// bare nrl-k8s exit 0.
func TestUsageErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"no-such-command"}, cli.ExitUsage},
		{[]string{"render", "--no-such-flag", "r.yaml"}, cli.ExitUsage},
		{[]string{"render", "-o"}, cli.ExitUsage},
		{[]string{"render"}, cli.ExitUsage},
		{[]string{"diff", "only-one"}, cli.ExitUsage},
		{[]string{"version", "extra"}, cli.ExitUsage},
		{[]string{"--help"}, cli.ExitOK},
		{nil, cli.ExitOK},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := clirun.Run(tc.args...)
			require.Equal(t, tc.want, code, stderr)
		})
	}
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
