package krm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// The function's command line, as `nrl-k8s fn` (krm.Run in process), as
// nrl-krm (krm.Main: its own --help and flag errors) and as the kustomize
// plugin (krm.PluginMain, the binary under the plugin's name): exit 0,
// 1 for an error result or unreadable input, 2 for a wrong command line.
func TestCommand(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name, "input.yaml"))
		require.NoError(t, err)
		return b
	}
	root, err := filepath.Abs(repoRoot)
	require.NoError(t, err)
	// plugin is the lean binary under the plugin's name, as kustomize
	// execs it, in the repository root.
	plugin := func(t *testing.T, args ...string) (int, string, string) {
		link := krm.PluginPath(t.TempDir())
		require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
		require.NoError(t, os.Symlink(clirun.BinaryNamed(t, clirun.Lean), link))
		return clirun.ExecBinary(t, link, root, t.TempDir(), nil, args...)
	}
	config := func(t *testing.T, runs string) string {
		p := filepath.Join(t.TempDir(), "gen.yaml")
		require.NoError(t, os.WriteFile(p, []byte("apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRunGenerator\nmetadata: {name: g}\nfiles: .\nruns: ["+runs+"]\n"), 0o600))
		return p
	}
	cases := []struct {
		name         string
		run          func(t *testing.T) (int, string, string)
		code         int
		stdout, errs string // in stdout, in stderr
	}{
		{"a ResourceList renders", func(*testing.T) (int, string, string) {
			return clirun.RunStdin(bytes.NewReader(fixture("pass-through")), "fn")
		}, 0, "kind: RayJob", "nrl-k8s fn: [warning]"},
		{"an error result", func(*testing.T) (int, string, string) {
			return clirun.RunStdin(bytes.NewReader(fixture("bad-run")), "fn")
		}, 1, "severity: error", "[error] nemo-rl.nvidia.com/v1alpha1/NemoRLRun"},
		{"stdin over the cap", func(*testing.T) (int, string, string) {
			return clirun.RunStdin(bytes.NewReader(make([]byte, krm.MaxFunctionInput+1)), "fn")
		}, 1, "", "the function's input (stdin) is over the 2097152-byte limit"},
		{"--runs without --files", func(*testing.T) (int, string, string) { return clirun.Run("fn", "--runs", "x.yaml") },
			2, "", "error: --runs needs --files (the package root the runs' files and inputs are read below)\n"},
		{"--files outside the repository", func(*testing.T) (int, string, string) { return clirun.Run("fn", "--files", "/", "--runs", "x.yaml") },
			2, "", `error: --files "/": is outside the repository`},
		{"a standalone config that is not there", func(*testing.T) (int, string, string) { return clirun.Run("fn", "none.yaml") },
			2, "", `unable to read configuration file "none.yaml"`},
		{"nrl-krm --help", func(t *testing.T) (int, string, string) {
			return clirun.ExecBinary(t, clirun.BinaryNamed(t, clirun.Lean), root, t.TempDir(), nil, "--help")
		}, 0, "Run as a KRM function (kustomize exec/container function, kpt fn render).\n", ""},
		{"nrl-krm with an unknown flag", func(t *testing.T) (int, string, string) {
			return clirun.ExecBinary(t, clirun.BinaryNamed(t, clirun.Lean), root, t.TempDir(), nil, "--nope")
		}, 2, "", "error: unknown flag: --nope\n"},
		{"the plugin without its config", func(t *testing.T) (int, string, string) { return plugin(t) },
			2, "", "nrl-k8s NemoRLRunGenerator: expected one argument"},
		{"the plugin renders", func(t *testing.T) (int, string, string) {
			return plugin(t, config(t, "tests/golden/h100-multikueue/run.yaml"))
		}, 0, "kind: RayJob", ""},
		{"the plugin with a failing run", func(t *testing.T) (int, string, string) {
			return plugin(t, config(t, "tests/golden/gpu-mismatch/run.yaml"))
		}, 1, "", "the training cluster provides 4 GPU nodes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := tc.run(t)
			require.Equal(t, tc.code, code, "stderr: %s", stderr)
			require.Contains(t, stdout, tc.stdout)
			require.Contains(t, stderr, tc.errs)
		})
	}
}
