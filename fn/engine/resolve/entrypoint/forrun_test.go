package entrypoint_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
)

// ForRun edits the text as read: the same bytes as rewriting every --config
// and then appending to the first call of the rewritten text read again,
// whatever the calls' number, forms and operators.
func TestForRunIsRewriteThenAppend(t *testing.T) {
	var extra []hydra.Override
	for _, raw := range []string{"grpo.max_num_steps=3", "logger.wandb.name=it's"} {
		o, err := hydra.Parse(raw)
		require.NoError(t, err)
		extra = append(extra, o)
	}
	for _, ep := range []string{
		ultraLike,
		"python run_sft.py --config a.yaml",
		"python run_sft.py --config a.yaml|tee log",
		"python run_sft.py --config=a.yaml x=1 # note",
		`python run_sft.py "--config=a.yaml" x=1 2>&1 | tee log`,
		"set -o pipefail\npython run_a.py --config 'a.yaml' x=1 | tee a\npython run_b.py --config=b.yaml y=2\npython run_c.py --config c.yaml",
		"python run_sft.py x=1 && python run_dpo.py --config d.yaml",
	} {
		for _, config := range []string{"", "/opt/nemo-rl/examples/configs/much/longer/recipe.yaml", "r.yaml"} {
			rewritten := ep
			if config != "" {
				var err error
				rewritten, _, err = entrypoint.RewriteConfig(ep, config)
				require.NoError(t, err)
			}
			want, err := entrypoint.Parse(rewritten).AppendOverrides(extra)
			require.NoError(t, err)
			got, err := entrypoint.Parse(ep).ForRun(config, extra)
			require.NoError(t, err)
			require.Equal(t, want, got, "%q with --config %q", ep, config)
		}
	}
	_, err := entrypoint.Parse("python run_sft.py --config $RECIPE").ForRun("r.yaml", extra)
	require.ErrorContains(t, err, "expanded by the shell in the pod")
	_, err = entrypoint.Parse("echo no driver").ForRun("", extra)
	require.ErrorContains(t, err, "runs no NeMo-RL driver")
}
