package cli_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// repoCopy copies examples/runs-repo with the recipes and profiles its runs
// read into dir, in the repository's layout.
func repoCopy(t *testing.T, dir string) string {
	t.Helper()
	root := testenv.RepoRoot(t)
	for _, d := range []string{"examples/runs-repo", "recipes/examples/configs", "profiles/gb300"} {
		from, to := filepath.Join(root, d), filepath.Join(dir, d)
		require.NoError(t, filepath.WalkDir(from, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(from, p)
			if e.IsDir() {
				return os.MkdirAll(filepath.Join(to, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(to, rel), b, 0o644)
		}))
	}
	// A checkout (render-all and diff read only the tracked files of the
	// git work tree).
	testenv.GitCheckout(t, dir)
	return filepath.Join(dir, "examples/runs-repo")
}

// The --check diff names files relative to the git work tree, so `git
// apply` from the repository root fixes the tree, whatever DIR is.
func TestRenderAllCheckDiffAppliesFromGitRoot(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	top := t.TempDir()
	repo := repoCopy(t, top)

	manifest := filepath.Join(repo, "manifests", "qwen3-math-4n.yaml")
	want := testenv.ReadFile(t, manifest)
	require.NoError(t, os.WriteFile(manifest, []byte(strings.Replace(want, "namespace: rl-team", "namespace: other", 1)), 0o644))

	code, patch, stderr := clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitError, code, stderr)
	require.True(t, strings.HasPrefix(patch, "--- a/examples/runs-repo/manifests/qwen3-math-4n.yaml\n+++ b/examples/runs-repo/manifests/qwen3-math-4n.yaml\n"), patch)
	require.Contains(t, stderr, "examples/runs-repo/manifests/qwen3-math-4n.yaml: stale")

	apply := exec.Command(git, "apply", "-")
	apply.Dir = top
	apply.Stdin = strings.NewReader(patch)
	out, err := apply.CombinedOutput()
	require.NoError(t, err, "git apply from the repository root: %s", out)
	require.Equal(t, want, testenv.ReadFile(t, manifest))
	code, _, stderr = clirun.Run("render-all", repo, "--check")
	require.Equal(t, cli.ExitOK, code, stderr)
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
