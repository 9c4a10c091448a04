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
	cases := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"default", []string{"policy"}, cli.ExitOK, shipped, ""},
		{"yaml", []string{"policy", "-o", "yaml"}, cli.ExitOK, shipped, ""},
		{"json", []string{"policy", "-o", "json"}, cli.ExitUsage, "", `-o "json": expected yaml`},
		{"bad user", []string{"policy", "--kueue-user", "x'"}, cli.ExitUsage, "", `--kueue-user "x'": expected a username`},
		{"argument", []string{"policy", "extra"}, cli.ExitUsage, "", "unknown command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := clirun.Run(c.args...)
			require.Equal(t, c.code, code, stderr)
			if c.out != "" {
				require.Equal(t, c.out, out)
			}
			require.Contains(t, stderr, c.err)
		})
	}
	code, out, stderr := clirun.Run("policy", "--kuberay-user", "system:serviceaccount:ray-system:kuberay-operator")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, out, "system:serviceaccount:ray-system:kuberay-operator")
	require.NotContains(t, out, policy.DefaultKubeRayUser)
	require.Contains(t, out, policy.DefaultKueueUser)
}
