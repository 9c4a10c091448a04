package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/testenv"
)

// `nrl-k8s policy` prints the shipped started-run policy byte for byte;
// named identities change only the exemption; usage mistakes exit 2.
func TestPolicyCommand(t *testing.T) {
	shipped := testenv.ReadFile(t, filepath.Join(testenv.RepoRoot(t), policy.File))
	runCases(t, []cliCase{
		{name: "default", args: []string{"policy"}, out: shipped, exact: true},
		{name: "yaml", args: []string{"policy", "-o", "yaml"}, out: shipped, exact: true},
		{name: "json", args: []string{"policy", "-o", "json"}, code: cli.ExitUsage, err: `-o "json": expected yaml`},
		{name: "bad user", args: []string{"policy", "--kueue-user", "x'"}, code: cli.ExitUsage, err: `--kueue-user "x'": expected a username`},
		{name: "argument", args: []string{"policy", "extra"}, code: cli.ExitUsage, err: "unknown command"},
	})
	code, out, stderr := clirun.Run("policy", "--kuberay-user", "system:serviceaccount:ray-system:kuberay-operator")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, out, "system:serviceaccount:ray-system:kuberay-operator")
	require.NotContains(t, out, policy.DefaultKubeRayUser)
	require.Contains(t, out, policy.DefaultKueueUser)
}
