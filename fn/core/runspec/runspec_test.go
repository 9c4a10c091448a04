package runspec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
)

func TestParseIsStrict(t *testing.T) {
	const head = "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: %s\nspec:\n  recipe: r.yaml\n  user: alice\n"
	doc := func(name, extra string) []byte { return []byte(strings.Replace(head, "%s", name, 1) + extra) }
	for _, tc := range []struct {
		name, run, extra, want string
	}{
		{"duplicate key", "a", "  mode: raycluster\n  mode: dev\n", `key "mode" already set`},
		{"unknown key", "a", "  recipee: x\n", `line 8: unknown field "spec.recipee"`},
		{"spaces and punctuation", `"Bad Name!"`, "", "metadata.name: \"Bad Name!\": a lowercase RFC 1123 subdomain"},
		{"too long", strings.Repeat("a", 300), "", "must be no more than 253 characters"},
		{"a path", "a/b", "", "a lowercase RFC 1123 subdomain"},
		{"reserved", "inputs", "", `"inputs" is reserved`},
		{"empty", `""`, "", "metadata.name: is required"},
		{"both deployment switches", "a", "  noDeployments: true\n  onlyDeployments: true\n", "spec.onlyDeployments: is true with spec.noDeployments; expected one of them"},
		{"unknown state", "a", "  state: paused\n", `spec.state: found "paused"; expected run, stopped or removed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runspec.Parse("run.yaml", doc(tc.run, tc.extra))
			require.ErrorContains(t, err, tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "run.yaml: "), err.Error())
		})
	}
	r, err := runspec.Parse("run.yaml", doc("my-run.v2", "  mode: dev\n"))
	require.NoError(t, err)
	require.Equal(t, "dev", r.Mode())
}
