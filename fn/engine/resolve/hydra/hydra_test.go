package hydra_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func TestParseOverride(t *testing.T) {
	cases := []struct {
		raw  string
		op   hydra.Op
		key  string
		val  any
		dyn  bool
		fail bool
	}{
		{raw: "cluster.num_nodes=58", op: hydra.Set, key: "cluster.num_nodes", val: int64(58)},
		{raw: "+a.b=x", op: hydra.Add, key: "a.b", val: "x"},
		{raw: "++a.b=[1,2]", op: hydra.Force, key: "a.b", val: []any{int64(1), int64(2)}},
		{raw: "~policy.optimizer.kwargs.foreach", op: hydra.Delete, key: "policy.optimizer.kwargs.foreach"},
		{raw: "policy.generation.colocated.enabled=False", op: hydra.Set, key: "policy.generation.colocated.enabled", val: false},
		{raw: "policy.model_name=${NRL_MODEL_PATH}", op: hydra.Set, key: "policy.model_name", val: "${NRL_MODEL_PATH}", dyn: true},
		{raw: "x=", op: hydra.Set, key: "x", val: ""},
		{raw: "=3", fail: true},
		{raw: "a..b=3", fail: true},
		{raw: "novalue", fail: true},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			o, err := hydra.Parse(tc.raw)
			if tc.fail {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.op, o.Op)
			require.Equal(t, tc.key, o.Key.String())
			require.Equal(t, tc.val, o.Value)
			require.Equal(t, tc.dyn, o.Dynamic)
		})
	}
}

func TestApplyRules(t *testing.T) {
	root, _ := tree.Parse("r", []byte("a: {b: 1}\n"))
	m := root.(*tree.Map)
	apply := func(s string) error {
		o, err := hydra.Parse(s)
		require.NoError(t, err)
		return hydra.Apply(m, o)
	}
	require.NoError(t, apply("a.b=2"))
	require.ErrorContains(t, apply("a.c=2"), "use +a.c=")
	require.NoError(t, apply("+a.c=3"))
	require.ErrorContains(t, apply("+a.c=4"), "already in the recipe")
	require.NoError(t, apply("++a.c=5"))
	require.NoError(t, apply("~a.b"))
	require.ErrorContains(t, apply("~a.b"), "nothing to delete")
	b, _ := m.MarshalJSON()
	require.Equal(t, `{"a":{"c":5}}`, string(b))
}

// TestApplyDidYouMean: an override naming no key says which key it was
// probably meant for: the whole path when the corrected one exists, else
// the misspelt part; nothing when no key is close.
func TestApplyDidYouMean(t *testing.T) {
	root, _ := tree.Parse("r", []byte("policy: {max_steps: 1, optimizer: {lr: 1}}\ngrpo: {n: 1}\n"))
	m := root.(*tree.Map)
	apply := func(s string) error {
		o, err := hydra.Parse(s)
		require.NoError(t, err)
		return hydra.Apply(m, o)
	}
	require.ErrorContains(t, apply("polcy.max_steps=2"), "key 'polcy.max_steps' is not in the recipe (did you mean 'policy.max_steps'?); use +polcy.max_steps=")
	require.ErrorContains(t, apply("polcy.x=1"), "(no key 'polcy'; did you mean 'policy'?)")
	require.ErrorContains(t, apply("policy.optimzer.lr=2"), "(did you mean 'policy.optimizer.lr'?)")
	require.ErrorContains(t, apply("~policy.max_step"), "(did you mean 'policy.max_steps'?), nothing to delete")
	err := apply("zzzzzz.a=1")
	require.ErrorContains(t, err, "use +zzzzzz.a=")
	require.NotContains(t, err.Error(), "did you mean")
}

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
	inv, ok := hydra.FindInvocation(ultraLike)
	require.True(t, ok)
	require.Equal(t, "./examples/nemo_gym/run_grpo_nemo_gym.py", inv.Script)
	require.Equal(t, "examples/configs/grpo_ultra_64n4g_pipeclean.yaml", inv.Config)
	require.Equal(t, []string{"policy.model_name=${NRL_MODEL_PATH}", "cluster.num_nodes=58", "logger.wandb.name=a b"}, inv.Overrides)
	require.Equal(t, 3, inv.Line)
	_, ok = hydra.FindInvocation("echo hello")
	require.False(t, ok)
}

func TestAppendOverrides(t *testing.T) {
	got, err := hydra.AppendOverrides(ultraLike, []string{"grpo.max_num_steps=3", "logger.wandb.name=it's"})
	require.NoError(t, err)
	require.Contains(t, got, "  grpo.max_num_steps=3 'logger.wandb.name=it'\"'\"'s' 2>&1 | tee -a \"${LOG}\"")
	inv, ok := hydra.FindInvocation(got)
	require.True(t, ok)
	require.Equal(t, []string{"policy.model_name=${NRL_MODEL_PATH}", "cluster.num_nodes=58", "logger.wandb.name=a b", "grpo.max_num_steps=3", "logger.wandb.name=it's"}, inv.Overrides)

	plain, err := hydra.AppendOverrides("python run_sft.py a=1", []string{"b=2"})
	require.NoError(t, err)
	require.Equal(t, "python run_sft.py a=1 b=2", plain)

	_, err = hydra.AppendOverrides("echo no driver", []string{"b=2"})
	require.ErrorContains(t, err, "runs no NeMo-RL driver")
	_, err = hydra.AppendOverrides("python run_sft.py", []string{"not an override"})
	require.Error(t, err)

	same, err := hydra.AppendOverrides(ultraLike, nil)
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
			got, ch, err := hydra.RewriteConfig(tc.in, to)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Len(t, ch, tc.changes)
			for _, inv := range hydra.FindInvocations(got) {
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
			inv, ok := hydra.FindInvocation(tc.in)
			require.True(t, ok)
			require.Equal(t, tc.piped, inv.Piped)
		})
	}
}

func TestPipefailBefore(t *testing.T) {
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
			inv, ok := hydra.FindInvocation(tc.in)
			require.True(t, ok)
			require.Equal(t, tc.want, hydra.PipefailBefore(tc.in, inv))
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
			got, err := hydra.AppendOverrides(tc.in, []string{"b=2"})
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
