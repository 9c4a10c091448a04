package hydra_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/resolve/hydra"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// An override's prefix is its op, its key a dotted path, its value typed
// as Hydra types it; a value YAML cannot read (or reads as nothing) stays
// the string it was.
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
		{raw: "~a.b=3", op: hydra.Delete, key: "a.b", val: int64(3)},
		{raw: "policy.generation.colocated.enabled=False", op: hydra.Set, key: "policy.generation.colocated.enabled", val: false},
		{raw: "policy.model_name=${NRL_MODEL_PATH}", op: hydra.Set, key: "policy.model_name", val: "${NRL_MODEL_PATH}", dyn: true},
		{raw: "a.b[1]=null", op: hydra.Set, key: "a.b.1", val: nil},
		{raw: "x=", op: hydra.Set, key: "x", val: ""},
		{raw: "x=a:b:c", op: hydra.Set, key: "x", val: "a:b:c"},
		{raw: "x=#x", op: hydra.Set, key: "x", val: "#x"},
		{raw: "x=[1,", op: hydra.Set, key: "x", val: "[1,"},
		{raw: "=3", fail: true},
		{raw: "a..b=3", fail: true},
		{raw: "novalue", fail: true},
		{raw: "+novalue", fail: true},
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

// Apply keeps Hydra's rules on existing keys (set needs it, + needs it
// absent, ++ either, ~ needs it), and an override naming no key says which
// key it was probably meant for: the whole path when the corrected one
// exists, else the misspelt part; nothing when no key is close.
func TestApply(t *testing.T) {
	const small = "a: {b: 1}\n"
	const recipe = "policy: {max_steps: 1, optimizer: {lr: 1}}\ngrpo: {n: 1}\n"
	cases := []struct {
		recipe, raw string
		err         string // the error; "" when it applies
		want        string // the recipe after it, as JSON
	}{
		{small, "a.b=2", "", `{"a":{"b":2}}`},
		{small, "a.c=2", `override "a.c=2": key 'a.c' is not in the recipe (did you mean 'a.b'?); use +a.c=... to add it`, ""},
		{small, "+a.c=3", "", `{"a":{"b":1,"c":3}}`},
		{small, "+a.b=4", `override "+a.b=4": key 'a.b' is already in the recipe; use a.b=VALUE (set) or ++a.b=VALUE (add or set)`, ""},
		{small, "++a.b=5", "", `{"a":{"b":5}}`},
		{small, "++a.c=5", "", `{"a":{"b":1,"c":5}}`},
		{small, "~a.b", "", `{"a":{}}`},
		{small, "~a.c", `override "~a.c": key 'a.c' is not in the recipe (did you mean 'a.b'?), nothing to delete`, ""},
		{recipe, "polcy.max_steps=2", `override "polcy.max_steps=2": key 'polcy.max_steps' is not in the recipe (did you mean 'policy.max_steps'?); use +polcy.max_steps=... to add it`, ""},
		{recipe, "polcy.x=1", `override "polcy.x=1": key 'polcy.x' is not in the recipe (no key 'polcy'; did you mean 'policy'?); use +polcy.x=... to add it`, ""},
		{recipe, "policy.optimzer.lr=2", `override "policy.optimzer.lr=2": key 'policy.optimzer.lr' is not in the recipe (did you mean 'policy.optimizer.lr'?); use +policy.optimzer.lr=... to add it`, ""},
		{recipe, "~policy.max_step", `override "~policy.max_step": key 'policy.max_step' is not in the recipe (did you mean 'policy.max_steps'?), nothing to delete`, ""},
		{recipe, "zzzzzz.a=1", `override "zzzzzz.a=1": key 'zzzzzz.a' is not in the recipe; use +zzzzzz.a=... to add it`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			root, err := tree.Parse("r", []byte(tc.recipe))
			require.NoError(t, err)
			o, err := hydra.Parse(tc.raw)
			require.NoError(t, err)
			err = hydra.Apply(root.(*tree.Map), o)
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			b, _ := root.(*tree.Map).MarshalJSON()
			require.Equal(t, tc.want, string(b))
		})
	}
}
