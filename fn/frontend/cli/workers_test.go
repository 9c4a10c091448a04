package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

// --worker NAME=CONTEXT is checked before any request: a malformed one, a
// worker given twice, a context the kubeconfig lacks, or workers for a run
// MultiKueue does not dispatch are usage errors naming the flag.
func TestWorkerFlag(t *testing.T) {
	kc := deadCluster(t)
	run := filepath.Join(t.TempDir(), "run.yaml")
	require.NoError(t, os.WriteFile(run, []byte("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: ml}\nspec: {entrypoint: x}\n"), 0o600))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no =", []string{"status", "r", "-n", "ml", "--worker", "w1"}, `--worker "w1": no "="`},
		{"bad name", []string{"status", "r", "-n", "ml", "--worker", "W_1=w1"}, `--worker "W_1=w1": NAME: `},
		{"empty context", []string{"status", "r", "-n", "ml", "--worker", "w1="}, `--worker "w1=": CONTEXT is empty`},
		{"twice", []string{"status", "r", "-n", "ml", "--worker", "w1=w1", "--worker", "w1=m"}, "--worker w1: given twice"},
		{"unknown context", []string{"status", "r", "-n", "ml", "--worker", "w1=nope"}, `--worker w1=nope: kubeconfig: context "nope"`},
		{"not dispatched", []string{"preflight", "-f", run, "--worker", "w1=w1"}, "--worker: the run is not dispatched by MultiKueue"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := clirun.Run(append(tc.args, "--kubeconfig", kc)...)
			assert.Equal(t, cli.ExitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}
