package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func TestDriverAlgorithm(t *testing.T) {
	for script, want := range map[string]string{
		"examples/run_grpo.py":                           "grpo",
		"/opt/nemo-rl/examples/run_sft.py":               "sft",
		"./examples/nemo_gym/run_grpo_nemo_gym.py":       "grpo",
		"examples/run_xtoken_off_policy_distillation.py": "distillation",
		"examples/run_eval.py":                           "eval",
		"train.py":                                       "",
		"examples/run_custom.py":                         "",
	} {
		require.Equal(t, want, DriverAlgorithm(script), script)
	}
}

func TestRecipeAlgorithms(t *testing.T) {
	m := tree.NewMap()
	require.Empty(t, RecipeAlgorithms(m))
	m.Set("dpo", tree.NewMap())
	m.Set("sft", nil) // a null section names nothing
	m.Set("grpo", tree.NewMap())
	require.Equal(t, []string{"grpo", "dpo"}, RecipeAlgorithms(m))
}
