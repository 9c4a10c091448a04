package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
)

// preflight takes RECIPE or -f, not both, and -o text or json; a run that
// does not render is exit 1 before any connection; -n must agree with the
// objects' namespace.
func TestPreflightRefusals(t *testing.T) {
	kc := deadCluster(t)
	dir := t.TempDir()
	run, bare := filepath.Join(dir, "run.yaml"), filepath.Join(dir, "bare.yaml")
	require.NoError(t, os.WriteFile(run, []byte("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j, namespace: ml}\nspec: {entrypoint: x}\n"), 0o600))
	require.NoError(t, os.WriteFile(bare, []byte("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec: {entrypoint: x}\n"), 0o600))
	runCases(t, []cliCase{
		{name: "bad format", args: []string{"preflight", "-f", run, "-o", "yaml", "--kubeconfig", kc}, code: cli.ExitUsage, err: "-o yaml: expected text or json"},
		{name: "recipe and -f", args: []string{"preflight", "r.yaml", "-f", run, "--kubeconfig", kc}, code: cli.ExitUsage, err: "give RECIPE [OVERRIDES] --infra INFRA or -f RENDERED.yaml, not both"},
		{name: "neither", args: []string{"preflight", "--kubeconfig", kc}, code: cli.ExitUsage, err: "missing RECIPE argument (or -f RENDERED.yaml)"},
		{name: "render fails first", args: []string{"preflight", run, "--user", "alice", "--kubeconfig", filepath.Join(dir, "none")}, code: cli.ExitError, err: "error: no infra profile"},
		{name: "no kubeconfig", args: []string{"preflight", "-f", run, "--kubeconfig", filepath.Join(dir, "none")}, code: cli.ExitCluster, err: "error: kubeconfig: stat "},
		{name: "-n not the objects'", args: []string{"preflight", "-f", run, "-n", "other", "--kubeconfig", kc}, code: cli.ExitUsage, err: "-n other: the objects are in namespace ml"},
		{name: "bad namespace", args: []string{"preflight", "-f", bare, "-n", "Bad_NS", "--kubeconfig", kc}, code: cli.ExitUsage, err: `-n "Bad_NS": expected a namespace name`},
		{name: "no answer", args: []string{"preflight", "-f", run, "--kubeconfig", kc}, code: cli.ExitCluster, err: "error: cluster unreachable: "},
	})
}
