package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// diff takes OLD and NEW, at most one of them stdin, and --output text or
// markdown; a render compared with itself is unchanged.
func TestDiffRefusals(t *testing.T) {
	m := filepath.Join(t.TempDir(), "m.yaml")
	require.NoError(t, os.WriteFile(m, renderQwen(t), 0o644))
	runCases(t, []cliCase{
		{name: "unchanged", args: []string{"diff", m, m}, out: "1 run unchanged\ntotal: GPU nodes 4, GPUs 16\n", exact: true},
		{name: "one input", args: []string{"diff", "only-one"}, code: cli.ExitUsage, err: "accepts 2 arg(s), received 1"},
		{name: "both stdin", args: []string{"diff", "-", "-"}, code: cli.ExitUsage, err: "OLD and NEW are both -: at most one of them can be stdin"},
		{name: "bad output", args: []string{"diff", m, m, "--output", "html"}, code: cli.ExitUsage, err: `--output "html": expected text or markdown`},
	})
}

// renderQwen renders the README example, with extra overrides.
func renderQwen(t *testing.T, overrides ...string) []byte {
	t.Helper()
	recipe, profile := qwen(t)
	args := append([]string{"render", recipe}, overrides...)
	code, out, errs := clirun.Run(append(args, "--infra", profile, "--user", "alice")...)
	require.Equal(t, 0, code, errs)
	return []byte(out)
}

// TestDiffStreams: `nrl-k8s diff <(git show HEAD:m.yaml) m.yaml` passes a
// /dev/fd path (a link to a pipe), and `-` is stdin; both are read, while
// a symlink inside a tree is still refused.
func TestDiffStreams(t *testing.T) {
	dir := t.TempDir()
	oldRender, newRender := renderQwen(t), renderQwen(t, "grpo.max_num_steps=3")
	m := filepath.Join(dir, "m.yaml")
	require.NoError(t, os.WriteFile(m, newRender, 0o644))

	r, w, err := os.Pipe()
	require.NoError(t, err)
	go func() {
		_, _ = w.Write(oldRender)
		_ = w.Close()
	}()
	defer func() { _ = r.Close() }()
	code, out, errs := clirun.Run("diff", fmt.Sprintf("/dev/fd/%d", r.Fd()), m)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "m: changed")
	require.Contains(t, out, "grpo.max_num_steps=3")

	code, out, errs = clirun.RunStdin(bytes.NewReader(oldRender), "diff", "-", m)
	require.Equal(t, 0, code, errs)
	require.Contains(t, out, "grpo.max_num_steps=3")

	tree := filepath.Join(dir, "tree")
	require.NoError(t, os.Mkdir(tree, 0o755))
	require.NoError(t, os.Symlink(m, filepath.Join(tree, "m.yaml")))
	code, _, errs = clirun.Run("diff", tree, m)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "is a symlink; refused")
}

// TestDiffSummarisesDespiteAFailedRun: a run of the PR that does not render
// is reported (exit 1), and the summary of the others is still printed;
// the failed run is in neither side, not shown as removed.
func TestDiffSummarisesDespiteAFailedRun(t *testing.T) {
	base := repoCopy(t, t.TempDir())
	pr := repoCopy(t, t.TempDir())
	qwen := filepath.Join(pr, "runs/qwen3-math-4n/run.yaml")
	require.NoError(t, os.WriteFile(qwen, []byte(strings.Replace(testenv.ReadFile(t, qwen), "user: alice", "user: bob", 1)), 0o644))
	run := filepath.Join(pr, "runs/ultra-48n/run.yaml")
	require.NoError(t, os.WriteFile(run, []byte(testenv.ReadFile(t, run)+"  overrides: [policy.no_such_key_zz=1]\n"), 0o644))

	code, out, errs := clirun.Run("diff", base, pr)
	require.Equal(t, cli.ExitError, code, errs)
	require.Contains(t, out, "qwen3-math-4n: changed\n")
	require.Contains(t, out, "2 runs unchanged\n") // ultra-64n, ultra-tools
	require.NotContains(t, out, "ultra-48n")
	require.Contains(t, errs, "1 run(s) failed to render and are not in the summary")
	require.Contains(t, errs, "run ultra-48n: error: ")
	require.Contains(t, errs, "policy.no_such_key_zz")
}

// `nrl-k8s diff BASE PR` on runs repositories renders both and reports a
// warning the PR adds though no object changes: the recipe now asks for
// fewer nodes than the cluster has.
func TestDiffReportsNewWarnings(t *testing.T) {
	base := repoCopy(t, t.TempDir())
	pr := repoCopy(t, t.TempDir())
	recipe := filepath.Join(filepath.Dir(filepath.Dir(pr)), "recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml")
	data := testenv.ReadFile(t, recipe)
	require.Equal(t, 1, strings.Count(data, "\n  num_nodes: 4\n"))
	// 3 nodes leave 1 for training after the 2 generation nodes: 4 GPUs,
	// which expert parallelism 8 does not fit (an error, docs/nrl-k8s.md
	// §5.2); expert parallelism 4 does, and the idle node is the warning.
	require.Equal(t, 1, strings.Count(data, "expert_model_parallel_size: 8\n"))
	data = strings.Replace(data, "expert_model_parallel_size: 8\n", "expert_model_parallel_size: 4\n", 1)
	require.NoError(t, os.WriteFile(recipe, []byte(strings.Replace(data, "\n  num_nodes: 4\n", "\n  num_nodes: 3\n", 1)), 0o644))

	code, out, stderr := clirun.Run("diff", base, pr)
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, "qwen3-math-4n: changed\n"+
		"  GPU nodes   4\n"+
		"  GPUs        16\n"+
		"  security    pod security level privileged\n"+
		"              namespaces rl-team\n"+
		"  warnings    + ../../profiles/gb300/qwen3_30b_math_4n_4gpu.gb300.infra.yaml: kuberay.training.spec.workerGroupSpecs[*].replicas: the training cluster provides 4 GPU nodes but the recipe's cluster.num_nodes is 3 (set by ../../recipes/examples/configs/recipes/llm/performance/grpo-qwen3-30ba3b-4n4g-async-1off.yaml): 1 nodes will sit idle\n"+
		"3 runs unchanged\n"+
		"total: GPU nodes 116, GPUs 464\n", out)

	// The manifests alone do not show it: the objects are equal.
	code, out, _ = clirun.Run("diff", filepath.Join(base, "manifests"), filepath.Join(pr, "manifests"))
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, "4 runs unchanged\ntotal: GPU nodes 116, GPUs 464\n", out)
}
