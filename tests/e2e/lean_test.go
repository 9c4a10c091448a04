package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// nrl-krm, the KRM function alone (the image's entrypoint, the exec
// function), is `nrl-k8s fn`: for every golden run (generator mode, read
// from the repository) and every function fixture (a ResourceList on
// stdin), the two binaries exit alike and write the same bytes to stdout
// and stderr. So are a usage error and a standalone render.
func TestLeanFunctionIsNrlK8sFn(t *testing.T) {
	lean := clirun.BinaryNamed(t, clirun.Lean)
	root := testenv.RepoRoot(t)
	type invocation struct {
		name  string
		args  []string
		stdin []byte
	}
	var cases []invocation
	runs, err := filepath.Glob(filepath.Join(root, "tests/golden/*/run.yaml"))
	require.NoError(t, err)
	require.Greater(t, len(runs), 20, "the golden runs")
	for _, r := range runs {
		rel, err := filepath.Rel(root, r)
		require.NoError(t, err)
		cases = append(cases, invocation{name: rel, args: []string{"--files", ".", "--runs", rel}})
	}
	fixtures, err := filepath.Glob(filepath.Join(root, "fn/frontend/krm/testdata/*/input.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, fixtures)
	for _, f := range fixtures {
		in, err := os.ReadFile(f)
		require.NoError(t, err)
		cases = append(cases, invocation{name: filepath.Base(filepath.Dir(f)), stdin: in})
	}
	cases = append(cases,
		invocation{name: "--runs without --files", args: []string{"--runs", "x.yaml"}},
		invocation{name: "unknown flag", args: []string{"--nope"}},
		invocation{name: "standalone", args: []string{"examples/kpt/run.yaml", "-"}, stdin: []byte(testenv.ReadFile(t, filepath.Join(root, "examples/kpt/inputs/nrl-profiles-gb300.yaml")))},
	)
	sawOutput := false
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantCode, wantOut, wantErr := clirun.Exec(t, root, t.TempDir(), c.stdin, append([]string{"fn"}, c.args...)...)
			code, out, errOut := clirun.ExecBinary(t, lean, root, t.TempDir(), c.stdin, c.args...)
			require.Equal(t, wantCode, code, "exit code; nrl-krm stderr:\n%s", errOut)
			require.Equal(t, wantOut, out, "stdout")
			require.Equal(t, wantErr, errOut, "stderr")
			sawOutput = sawOutput || (code == 0 && len(out) > 0)
		})
	}
	require.True(t, sawOutput, "some invocation rendered")
}
