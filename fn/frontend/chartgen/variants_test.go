package chartgen

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
)

// The overrides' token is the text the sentinel override added: removing
// it gives the render without overrides, or the generator refuses.
func TestOverridesToken(t *testing.T) {
	cases := []struct{ name, data, plain, want, err string }{
		{"appended with its space", `run.py ` + SentinelOverride + `"`, `run.py"`, " " + SentinelOverride, ""},
		{"between two words: the space after it", `run.py ` + SentinelOverride + ` x`, `run.py x`, SentinelOverride + " ", ""},
		{"first", SentinelOverride + ` x`, `x`, SentinelOverride + " ", ""},
		{"not shown, nothing changed", `run.py`, `run.py`, "", ""},
		{"not shown, yet something changed", `run.py a`, `run.py`, "", "run overrides change the output although the entrypoint does not show them"},
		{"not plain text", `run.py '` + SentinelOverride + `'`, `run.py`, "", "does not give the render without overrides"},
		{"twice", SentinelOverride + " " + SentinelOverride, "", "", "the sentinel override appears 2 times; expected once, in the entrypoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := overridesToken(tc.data, tc.plain)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// The names holding a sentinel carry their kind's rule, a shipped recipe's
// hash written as its sentinel; the longest user keeps every such name in
// its limit.
func TestSentinelNames(t *testing.T) {
	recipe := rendered.Doc{Kind: "ConfigMap", Name: "n7z7-recipe-" + manifest.RecipeHash("a: 1\n"), Data: map[string]any{"data": map[string]any{"recipe.yaml": "a: 1\n"}}}
	docs := []rendered.Doc{
		{Kind: "RayJob", Name: "n7z7"}, {Kind: "RayCluster", Name: "u7z7-r7z7-training"}, {Kind: "Secret", Name: "fixed"}, recipe,
	}
	require.Equal(t, "a: 1\n", shippedRecipe(docs))
	require.Empty(t, shippedRecipe(docs[:3]))
	for _, tc := range []struct {
		name  string
		ships bool
		want  []NameRule
	}{
		{"no recipe", false, []NameRule{{"RayJob", "n7z7", 47, dns1035}, {"RayCluster", "u7z7-r7z7-training", 53, dns1035},
			{"ConfigMap", recipe.Name, 253, dns1123Sub}}},
		{"a shipped recipe", true, []NameRule{{"RayJob", "n7z7", 47, dns1035}, {"RayCluster", "u7z7-r7z7-training", 53, dns1035},
			{"ConfigMap", "n7z7-recipe-" + SentinelRecipeHash, 253, dns1123Sub}}},
	} {
		t.Run(tc.name, func(t *testing.T) { require.Equal(t, tc.want, sentinelNames(docs, tc.ships)) })
	}
	// 53 less the 14 characters around the user; 63 less 3, for two users.
	require.Equal(t, 39, maxUser([]NameRule{{"RayCluster", "u7z7-r7z7-training", 53, dns1035}, {"RayJob", "n7z7", 47, dns1035}}))
	require.Equal(t, 30, maxUser([]NameRule{{"Service", "u7z7-u7z7-x", 63, dns1035}, {"RayJob", "n7z7", 47, dns1035}}))
}

// canonical re-encodes JSON with sorted keys; what is not JSON is never
// equal to anything.
func TestCanonical(t *testing.T) {
	require.Equal(t, `{"a":[1,{"b":2,"c":3}]}`, canonical(`{ "a": [1, {"c": 3, "b": 2}] }`))
	require.Empty(t, canonical(`{a: 1}`))
}
