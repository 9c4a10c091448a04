package runspec_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runspec"
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

// TestOneNamespace: metadata.namespace is the run's namespace; the older
// spec.namespace is read only when it is empty (kustomize's namespace: sets
// metadata.namespace and the run must follow).
func TestOneNamespace(t *testing.T) {
	const doc = "apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: a\n%sspec:\n  recipe: r.yaml\n  user: alice\n%s"
	parse := func(meta, spec string) (*runspec.NemoRLRun, error) {
		return runspec.Parse("run.yaml", []byte(strings.Replace(strings.Replace(doc, "%s", meta, 1), "%s", spec, 1)))
	}
	r, err := parse("  namespace: ml-prod\n", "")
	require.NoError(t, err)
	require.Equal(t, "ml-prod", r.Request("").Namespace)
	r, err = parse("", "  namespace: team\n")
	require.NoError(t, err)
	require.Equal(t, "team", r.Request("").Namespace)
	r, err = parse("  namespace: team\n", "  namespace: team\n")
	require.NoError(t, err)
	require.Equal(t, "team", r.Request("").Namespace)
	r, err = parse("  namespace: ml-prod\n", "  namespace: default\n")
	require.NoError(t, err)
	require.Equal(t, "ml-prod", r.Request("").Namespace, "kustomize's namespace: wins over the spec's")
}

// TestPathsAreRelativeToTheRunFile: every path field, recipeRoot included,
// is read from the run file's directory, and the deployment switches reach
// the request.
func TestPathsAreRelativeToTheRunFile(t *testing.T) {
	r, err := runspec.Parse("run.yaml", []byte("apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: a\nspec:\n"+
		"  recipe: ../../nemo-rl/examples/configs/sft.yaml\n  profile: ../../profiles/sft.yaml\n  defaults: mine.yaml\n"+
		"  recipeRoot: ../../nemo-rl\n  user: alice\n  noDeployments: true\n"))
	require.NoError(t, err)
	req := r.Request("lab/runs/a/run.yaml")
	require.Equal(t, "lab/nemo-rl/examples/configs/sft.yaml", req.Recipe)
	require.Equal(t, "lab/profiles/sft.yaml", req.Profile)
	require.Equal(t, "lab/runs/a/mine.yaml", req.UserDefaults)
	require.Equal(t, "lab/nemo-rl", req.RecipeRoot)
	require.True(t, req.NoDeployments)
	require.False(t, req.OnlyDeployments)
}
