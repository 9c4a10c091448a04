package renderall

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	yaml "go.yaml.in/yaml/v3"
)

// Every setting of a run's Kustomization, filled in: what a run's objects
// become when the Kustomization or its file goes, how an apply is made,
// and a health rule per Ray kind in Flux's three states.
func TestKustomizationBody(t *testing.T) {
	out := FluxKustomization(KustomizationSpec{Run: "r", Namespace: "ns", Interval: "10m", Source: "src", Path: "./flux/r",
		HealthChecks: []ObjectRef{{APIVersion: "ray.io/v1", Kind: "RayJob", Namespace: "team", Name: "r"}}})
	require.NotContains(t, string(out), "{{", "every field is filled")
	var k struct {
		Metadata struct{ Name, Namespace string }
		Spec     map[string]any
	}
	require.NoError(t, yaml.Unmarshal(out, &k))
	assert.Equal(t, "r", k.Metadata.Name)
	assert.Equal(t, "ns", k.Metadata.Namespace)
	cases := []struct {
		field string
		want  any
	}{
		{"interval", "10m"},
		{"sourceRef", map[string]any{"kind": "GitRepository", "name": "src"}},
		{"path", "./flux/r"},
		// What the render no longer holds is deleted (a stopped Kueue run's
		// RayJob, a removed run's every object).
		{"prune", true},
		// Deleting the Kustomization leaves the run: a run stops by a commit.
		{"deletionPolicy", "Orphan"},
		// A refused apply is never forced (a re-created RayJob restarts).
		{"force", false},
		{"wait", false},
		{"timeout", "2m"},
		{"healthChecks", []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": "r", "namespace": "team"}}},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) { assert.Equal(t, tc.want, k.Spec[tc.field]) })
	}
	exprs, ok := k.Spec["healthCheckExprs"].([]any)
	require.True(t, ok, "%v", k.Spec["healthCheckExprs"])
	var kinds []string
	for _, e := range exprs {
		m := e.(map[string]any)
		kinds = append(kinds, m["kind"].(string))
		assert.Equal(t, "ray.io/v1", m["apiVersion"])
		for _, state := range []string{"inProgress", "failed", "current"} {
			s, _ := m[state].(string)
			assert.NotEmpty(t, s, "%s %s", m["kind"], state)
			assert.NotContains(t, s, "\n", "a folded scalar: one expression")
		}
	}
	assert.Equal(t, []string{"RayJob", "RayCluster"}, kinds)
	assert.NotContains(t, string(FluxKustomization(KustomizationSpec{Run: "r"})), "healthChecks:", "no Ray object, no health check")
	assert.True(t, strings.HasPrefix(string(out), fluxMark), "only a file opening with the mark is ever deleted")
}
