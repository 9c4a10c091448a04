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

// Usage mistakes exit 2, whichever part of cobra finds them (an unknown
// command with --help too: cobra would print the root's help and exit 0);
// --help and a bare nrl-k8s exit 0.
func TestUsageErrorsExit2(t *testing.T) {
	runCases(t, []cliCase{
		{name: "unknown command", args: []string{"no-such-command"}, code: cli.ExitUsage, err: `unknown command "no-such-command"`},
		{name: "unknown command --help", args: []string{"unknown-cmd", "--help"}, code: cli.ExitUsage, err: `unknown command "unknown-cmd"`},
		{name: "help", args: []string{"--help"}, out: "Available Commands:"},
		{name: "command help", args: []string{"render", "--help"}, out: "Render a run:"},
		{name: "bare", out: "Available Commands:"},
	})
}

// cliCase is one command line and what it must give: its exit code, text
// stdout and stderr hold (out is all of stdout when exact is set).
type cliCase struct {
	name     string
	args     []string
	code     int
	out, err string
	exact    bool
}

// runCases runs each case in process; a usage error prints nothing on
// stdout.
func runCases(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := clirun.Run(c.args...)
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, errs)
			if c.exact {
				require.Equal(t, c.out, out)
			}
			require.Contains(t, out, c.out)
			require.Contains(t, errs, c.err)
			if c.code == cli.ExitUsage {
				require.Empty(t, out)
			}
		})
	}
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
