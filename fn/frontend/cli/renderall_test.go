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

// render-all takes at most one DIR; --base and --base-ref go with --check,
// one of them, never empty (an unset variable); --root must be a directory.
func TestRenderAllRefusals(t *testing.T) {
	dir := t.TempDir()
	runCases(t, []cliCase{
		{name: "two dirs", args: []string{"render-all", dir, dir}, code: cli.ExitUsage, err: "accepts at most 1 arg(s), received 2"},
		{name: "base without check", args: []string{"render-all", dir, "--base", dir}, code: cli.ExitUsage, err: "--base and --base-ref go with --check"},
		{name: "base and base-ref", args: []string{"render-all", dir, "--check", "--base", dir, "--base-ref", "main"}, code: cli.ExitUsage, err: "--base and --base-ref: give one"},
		{name: "empty base-ref", args: []string{"render-all", dir, "--check", "--base-ref", ""}, code: cli.ExitUsage, err: `--base-ref: "": expected the base branch`},
		{name: "no root", args: []string{"render-all", dir, "--root", filepath.Join(dir, "nope")}, code: cli.ExitUsage, err: "--root: "},
	})
}

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
	t.Chdir(repo) // DIR defaults to the working directory
	code, _, stderr = clirun.Run("render-all", "--check")
	require.Equal(t, cli.ExitOK, code, stderr)
}
