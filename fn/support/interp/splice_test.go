package interp_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/interp"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Splice is asked about exactly the interpolations whose value comes from
// outside the tree (${oc.env:...}, ${user:}, an External key), directly or
// through other keys, and only where a value of the tree is built.
func TestSpliceSeesValuesFromOutside(t *testing.T) {
	doc := `run: {name: r1}
local: {word: a b}
via: ${oc.env:V}
x:
  env: cmd ${oc.env:V} end
  user: ${user:}
  run: --name=${run.name}
  local: cmd ${local.word}
  indirect: cmd ${via}
  key: ${local.${oc.env:K}}
  arg: ${oc.env:MISSING,${local.word}}
`
	root, err := tree.Parse("t.yaml", []byte(doc))
	require.NoError(t, err)
	type seen struct{ path, expr, value string }
	var got []seen
	_, err = interp.Resolve(root, interp.Options{
		User:     "alice",
		Env:      func(k string) (string, bool) { v, ok := map[string]string{"V": "v;1", "K": "word"}[k]; return v, ok },
		External: []string{"run"},
		Splice: func(p tree.Path, expr, value string) error {
			got = append(got, seen{p.String(), expr, value})
			return nil
		},
	})
	require.NoError(t, err)
	require.ElementsMatch(t, []seen{
		{"via", "${oc.env:V}", "v;1"},
		{"x.env", "${oc.env:V}", "v;1"},
		{"x.user", "${user:}", "alice"},
		{"x.run", "${run.name}", "r1"},
		{"x.indirect", "${via}", "v;1"},
		{"x.key", "${local.${oc.env:K}}", "a b"},
		{"x.arg", "${oc.env:MISSING,${local.word}}", "a b"},
	}, got, "x.local reads only the tree")

	// Its error fails the resolution at the path, and stays reachable.
	refuse := errors.New("refused")
	_, err = interp.Resolve(root, interp.Options{
		Env: func(k string) (string, bool) { return "v", true },
		Splice: func(p tree.Path, expr, value string) error {
			if p.String() == "x.env" {
				return refuse
			}
			return nil
		},
	})
	require.ErrorIs(t, err, refuse)
	ie, ok := errors.AsType[*interp.Error](err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "x.env", ie.Path)
}
