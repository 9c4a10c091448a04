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

// TestCompletion: shell completion offers the values of --mode and -o.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "render", "r.yaml", "--mode", ""}, []string{"rayjob", "raycluster", "dev"}},
		{[]string{"__complete", "check", "r.yaml", "--mode", ""}, []string{"rayjob", "raycluster", "dev"}},
		{[]string{"__complete", "render", "r.yaml", "-o", ""}, []string{"yaml", "json"}},
		{[]string{"__complete", "diff", "a", "b", "-o", ""}, []string{"text", "markdown"}},
		{[]string{"__complete", "version", "-o", ""}, []string{"json", "yaml"}},
	} {
		code, out, errs := clirun.Run(tc.args...)
		require.Equal(t, 0, code, errs)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Equal(t, tc.want, lines[:len(lines)-1], "%v", tc.args)
		require.Equal(t, ":4", lines[len(lines)-1], "no file names offered")
	}
}

// TestBadUserIsOneError: a user that cannot name objects is one error
// about --user, not one per object it would break.
func TestBadUserIsOneError(t *testing.T) {
	recipe, profile := qwen(t)
	code, _, errs := clirun.Run("render", recipe, "--infra", profile, "--user", "Bob Smith")
	require.Equal(t, cli.ExitError, code)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	require.Len(t, lines, 1, errs)
	require.Contains(t, lines[0], `--user: found "bob smith"`)
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
