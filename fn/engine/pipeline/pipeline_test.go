package pipeline

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// TestSplitOverrides: `infra.` overrides change the profile (prefix
// removed, a +/~ kept for requestDiags to refuse); the rest the recipe.
func TestSplitOverrides(t *testing.T) {
	infra, rec := SplitOverrides([]string{"infra.image=i", "+infra.labels.a=b", "infra={}", "~infra", "infrastructure.x=1", "policy.x=1", "+a=b"})
	assert.Equal(t, []string{"image=i", "+labels.a=b", "={}", "~"}, infra)
	assert.Equal(t, []string{"infrastructure.x=1", "policy.x=1", "+a=b"}, rec)
}

// TestRequestDiags: what is refused before any file is read, each at the
// override or parameter that says it; the recipe overrides come back
// parsed. The run's node budget is tests/hostile's.
func TestRequestDiags(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides []string
		req       Request
		want      string // the first error, "FIELD: MESSAGE"; "" none
		parsed    int
	}{
		{"clean", []string{"infra.image=i", "a.b=1", "+c=2"}, Request{}, "", 2},
		{"an infra override with +", []string{"+infra.image=i"}, Request{}, "+image=i: infra overrides take no +/~ prefix", 0},
		{"a recipe override Hydra cannot read", []string{"a.b=1", "=x"}, Request{}, "=x: ", 1},
		{"a bad parameter first", []string{"+infra.image=i", "a.b=1"}, Request{Run: runparams.Run{RunID: "A"}}, `--run-id: found "A"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := recipe.NewLoader(source.Memory{})
			l.StartRun()
			tc.req.Overrides = tc.overrides
			infraOv, recipeOv := SplitOverrides(tc.overrides)
			parsed, ds := requestDiags(l, tc.req, infraOv, recipeOv)
			if tc.want == "" {
				require.False(t, ds.HasErrors(), "%v", ds)
			} else {
				require.True(t, ds.HasErrors())
				assert.True(t, strings.HasPrefix(ds.Errors()[0].Field+": "+ds.Errors()[0].Message, tc.want), "%v", ds)
			}
			assert.Len(t, parsed, tc.parsed)
		})
	}
}

// TestLoadRecipe: a recipe's own `infra:` mapping is taken out of it as a
// profile layer; any other `infra:` is refused at its key.
func TestLoadRecipe(t *testing.T) {
	for _, tc := range []struct{ name, recipe, infra, err string }{
		{"no infra:", "a: 1\n", "", ""},
		{"an infra: mapping", "a: 1\ninfra: {image: i}\n", `{"image":"i"}`, ""},
		{"infra: a string", "a: 1\ninfra: i\n", "", "r.yaml: infra: recipe `infra:` key must be a mapping; found a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, infra, ds := loadRecipe(recipe.NewLoader(source.Memory{"r.yaml": []byte(tc.recipe)}), "r.yaml")
			if tc.err != "" {
				require.Len(t, ds, 1)
				assert.Contains(t, ds[0].String(), tc.err)
				assert.Nil(t, rec)
				return
			}
			require.Empty(t, ds)
			b, err := rec.Tree.MarshalJSON()
			require.NoError(t, err)
			assert.JSONEq(t, `{"a":1}`, string(b), "infra: is not the recipe's")
			if tc.infra == "" {
				assert.Nil(t, infra)
				return
			}
			b, err = infra.MarshalJSON()
			require.NoError(t, err)
			assert.JSONEq(t, tc.infra, string(b))
		})
	}
}

// TestStateField: the state is reported as the entry point spells it.
func TestStateField(t *testing.T) {
	assert.Equal(t, "--state", stateField(Request{}))
	assert.Equal(t, "spec.state", stateField(Request{ParamNames: RunSpecParams}))
}
