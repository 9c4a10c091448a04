package hydra_test

import (
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
