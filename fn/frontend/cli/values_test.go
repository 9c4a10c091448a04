package cli_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/cli"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/clirun"
)

func TestValuesPrintsResolvedProfileAndRecipeKeys(t *testing.T) {
	r, p := qwen(t)
	code, out, stderr := clirun.Run("values", r, "--infra", p, "--user", "Alice_X")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Contains(t, out, "name: alice-x-raycluster-qwen3-30b-math-gb300")
	require.Contains(t, out, "cluster.gpus_per_node: 4")
	require.Contains(t, out, "cluster.num_nodes: 4")
	require.NotContains(t, out, "_shared")
	require.Contains(t, out, "LOG=${LOG_DIR}/alice-x-raycluster")
}

// values needs a RECIPE; without a profile it prints nothing, and with an
// error finding it still prints the values, then exits 1.
func TestValuesRefusals(t *testing.T) {
	r, p := qwen(t)
	runCases(t, []cliCase{
		{name: "no recipe", args: []string{"values"}, code: cli.ExitUsage, err: "requires at least 1 arg(s), only received 0"},
		{name: "no profile", args: []string{"values", r, "--user", "alice", "--infra", ""}, code: cli.ExitError, exact: true, err: "error: no infra profile: pass --infra FILE"},
		{name: "error finding", args: []string{"values", r, "policy.no_such_key_zz=1", "--infra", p, "--user", "alice"}, code: cli.ExitError,
			out: "cluster.num_nodes: 4", err: `override "policy.no_such_key_zz=1": key 'policy.no_such_key_zz' is not in the recipe`},
	})
}
