package entrypoint_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/entrypoint"
)

const ultraLike = `set -eu
# python run_grpo.py cluster.num_nodes=1 (a comment)
OMP_NUM_THREADS=16 \
python ./examples/nemo_gym/run_grpo_nemo_gym.py \
  --config examples/configs/grpo_ultra_64n4g_pipeclean.yaml \
  policy.model_name=${NRL_MODEL_PATH} \
  cluster.num_nodes=58 \
  "logger.wandb.name=a b" \
  2>&1 | tee -a "${LOG}"`

func TestFindInvocation(t *testing.T) {
	inv, ok := entrypoint.FindInvocation(ultraLike)
	require.True(t, ok)
	require.Equal(t, "./examples/nemo_gym/run_grpo_nemo_gym.py", inv.Script)
	require.Equal(t, "examples/configs/grpo_ultra_64n4g_pipeclean.yaml", inv.Config)
	require.Equal(t, []string{"policy.model_name=${NRL_MODEL_PATH}", "cluster.num_nodes=58", "logger.wandb.name=a b"}, inv.Overrides)
	require.Equal(t, 3, inv.Line)
	_, ok = entrypoint.FindInvocation("echo hello")
	require.False(t, ok)
}

func TestAppendOverrides(t *testing.T) {
	got, err := entrypoint.AppendOverrides(ultraLike, []string{"grpo.max_num_steps=3", "logger.wandb.name=it's"})
	require.NoError(t, err)
	require.Contains(t, got, "  grpo.max_num_steps=3 'logger.wandb.name=it'\"'\"'s' 2>&1 | tee -a \"${LOG}\"")
	inv, ok := entrypoint.FindInvocation(got)
	require.True(t, ok)
	require.Equal(t, []string{"policy.model_name=${NRL_MODEL_PATH}", "cluster.num_nodes=58", "logger.wandb.name=a b", "grpo.max_num_steps=3", "logger.wandb.name=it's"}, inv.Overrides)

	plain, err := entrypoint.AppendOverrides("python run_sft.py a=1", []string{"b=2"})
	require.NoError(t, err)
	require.Equal(t, "python run_sft.py a=1 b=2", plain)

	_, err = entrypoint.AppendOverrides("echo no driver", []string{"b=2"})
	require.ErrorContains(t, err, "runs no NeMo-RL driver")
	_, err = entrypoint.AppendOverrides("python run_sft.py", []string{"not an override"})
	require.Error(t, err)

	same, err := entrypoint.AppendOverrides(ultraLike, nil)
	require.NoError(t, err)
	require.Equal(t, ultraLike, same)
}

func TestRewriteConfig(t *testing.T) {
	const to = "examples/configs/b.yaml"
	cases := []struct {
		name, in, want string
		changes        int
		err            string
	}{
		{name: "separate", in: "python run_grpo.py --config a.yaml x=1", want: "python run_grpo.py --config " + to + " x=1", changes: 1},
		{name: "equals", in: "python run_grpo.py --config=a.yaml", want: "python run_grpo.py --config=" + to, changes: 1},
		{name: "single quotes", in: "python run_grpo.py --config 'a.yaml'", want: "python run_grpo.py --config '" + to + "'", changes: 1},
		{name: "double quotes", in: `python run_grpo.py --config "a.yaml"`, want: `python run_grpo.py --config "` + to + `"`, changes: 1},
		{name: "equals quoted value", in: `python run_grpo.py --config="a.yaml"`, want: `python run_grpo.py --config="` + to + `"`, changes: 1},
		{name: "whole word quoted", in: `python run_grpo.py "--config=a.yaml"`, want: `python run_grpo.py "--config=` + to + `"`, changes: 1},
		{name: "already right", in: "python run_grpo.py --config " + to, want: "python run_grpo.py --config " + to},
		{name: "config-name untouched", in: "python run_grpo.py --config-name a.yaml", want: "python run_grpo.py --config-name a.yaml"},
		{name: "no flag", in: "python run_grpo.py x=1", want: "python run_grpo.py x=1"},
		{name: "every call", in: "python run_grpo.py --config a.yaml\npython run_sft.py --config=c.yaml | tee l", want: "python run_grpo.py --config " + to + "\npython run_sft.py --config=" + to + " | tee l", changes: 2},
		{name: "continued", in: "python run_grpo.py \\\n  --config a.yaml \\\n  x=1", want: "python run_grpo.py \\\n  --config " + to + " \\\n  x=1", changes: 1},
		{name: "shell variable", in: "python run_grpo.py --config $RECIPE", err: "expanded by the shell"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ch, err := entrypoint.RewriteConfig(tc.in, to)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Len(t, ch, tc.changes)
			for _, inv := range entrypoint.FindInvocations(got) {
				if inv.Config != "" {
					require.Equal(t, to, inv.Config)
				}
			}
		})
	}
}

func TestPiped(t *testing.T) {
	cases := []struct {
		name, in string
		piped    bool
	}{
		{name: "tee after redirect", in: `python run_grpo.py a=1 2>&1 | tee "${LOG}"`, piped: true},
		{name: "pipe and stderr", in: `python run_grpo.py a=1 |& tee log`, piped: true},
		{name: "continued pipe", in: "python run_grpo.py \\\n  a=1 \\\n  2>&1 | tee log", piped: true},
		{name: "redirect only", in: `python run_grpo.py a=1 > log 2>&1`},
		{name: "or", in: `python run_grpo.py a=1 || echo failed`},
		{name: "and then pipe elsewhere", in: `python run_grpo.py a=1 && echo ok | tee x`},
		{name: "plain", in: `python run_grpo.py a=1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, ok := entrypoint.FindInvocation(tc.in)
			require.True(t, ok)
			require.Equal(t, tc.piped, inv.Piped)
		})
	}
}

func TestPipefailOn(t *testing.T) {
	cases := []struct {
		name, in string
		want     bool
	}{
		{name: "set -eu", in: "set -eu\npython run_grpo.py 2>&1 | tee l"},
		{name: "set -euo pipefail", in: "set -euo pipefail\npython run_grpo.py 2>&1 | tee l", want: true},
		{name: "set -o pipefail", in: "set -e\nset -o pipefail\npython run_grpo.py | tee l", want: true},
		{name: "turned off again", in: "set -o pipefail\nset +o pipefail\npython run_grpo.py | tee l"},
		{name: "after the call", in: "python run_grpo.py | tee l\nset -o pipefail"},
		{name: "in a comment", in: "# set -o pipefail\npython run_grpo.py | tee l"},
		{name: "on a continued call", in: "set -o pipefail\npython run_grpo.py \\\n  a=1 | tee l", want: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inv, ok := entrypoint.FindInvocation(tc.in)
			require.True(t, ok)
			require.Equal(t, tc.want, inv.PipefailOn)
		})
	}
}

// The insertion is plain text (`OVR ` before an operator, ` OVR` at the end)
// so the chart can remove it; it never glues onto the previous word and
// lands before the first operator even when that is on an earlier line than
// the continuation's last.
func TestAppendOverridesPlacement(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{name: "no space before pipe", in: "python run_grpo.py a=1|tee l", want: "python run_grpo.py a=1 b=2|tee l"},
		{name: "redirect then continued pipe", in: "python run_grpo.py a=1 2>&1 | \\\n  tee l", want: "python run_grpo.py a=1 b=2 2>&1 | \\\n  tee l"},
		{name: "comment", in: "python run_grpo.py a=1 # note", want: "python run_grpo.py a=1 b=2 # note"},
		{name: "and-list", in: "python run_grpo.py a=1 && echo ok", want: "python run_grpo.py a=1 b=2 && echo ok"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := entrypoint.AppendOverrides(tc.in, []string{"b=2"})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			removed := strings.Replace(got, "b=2 ", "", 1)
			if removed == got || removed != tc.in {
				removed = strings.Replace(got, " b=2", "", 1)
			}
			require.Equal(t, tc.in, removed, "removing the insertion restores the entrypoint")
		})
	}
}
