package runrequest_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
)

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
	require.Equal(t, "ml-prod", runrequest.Of(r, "").Namespace)
	r, err = parse("", "  namespace: team\n")
	require.NoError(t, err)
	require.Equal(t, "team", runrequest.Of(r, "").Namespace)
	r, err = parse("  namespace: team\n", "  namespace: team\n")
	require.NoError(t, err)
	require.Equal(t, "team", runrequest.Of(r, "").Namespace)
	r, err = parse("  namespace: ml-prod\n", "  namespace: default\n")
	require.NoError(t, err)
	require.Equal(t, "ml-prod", runrequest.Of(r, "").Namespace, "kustomize's namespace: wins over the spec's")
}

// TestPathsAreRelativeToTheRunFile: every path field, recipeRoot included,
// is read from the run file's directory, and the deployment switches reach
// the request.
func TestPathsAreRelativeToTheRunFile(t *testing.T) {
	r, err := runspec.Parse("run.yaml", []byte("apiVersion: nemo-rl.nvidia.com/v1alpha1\nkind: NemoRLRun\nmetadata:\n  name: a\nspec:\n"+
		"  recipe: ../../nemo-rl/examples/configs/sft.yaml\n  profile: ../../profiles/sft.yaml\n  defaults: mine.yaml\n"+
		"  recipeRoot: ../../nemo-rl\n  user: alice\n  noDeployments: true\n"))
	require.NoError(t, err)
	req := runrequest.Of(r, "lab/runs/a/run.yaml")
	require.Equal(t, "lab/nemo-rl/examples/configs/sft.yaml", req.Recipe)
	require.Equal(t, "lab/profiles/sft.yaml", req.Profile)
	require.Equal(t, "lab/runs/a/mine.yaml", req.UserDefaults)
	require.Equal(t, "lab/nemo-rl", req.RecipeRoot)
	require.True(t, req.NoDeployments)
	require.False(t, req.OnlyDeployments)
}
