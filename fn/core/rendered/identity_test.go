package rendered_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

// An object's identity is group, kind, namespace and name (the version is
// not: v1 and v1beta1 of one object are one object); its digest follows its
// content, whatever the order its maps were built in.
func TestIdentity(t *testing.T) {
	doc := func(apiVersion, ns, image string) rendered.Doc {
		return rendered.FromData(map[string]any{"apiVersion": apiVersion, "kind": "RayJob",
			"metadata": map[string]any{"name": "train", "namespace": ns}, "spec": map[string]any{"image": image}})
	}
	a := doc("ray.io/v1", "ml", "img:1")
	require.Equal(t, "ray.io/RayJob/ml/train", a.ID())
	require.Equal(t, "RayJob ml/train", a.Describe())
	require.Equal(t, a.ID(), doc("ray.io/v1alpha1", "ml", "img:1").ID())
	require.Equal(t, "/ConfigMap//c", rendered.FromData(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}).ID())

	ids := rendered.Identities([]rendered.Doc{a, doc("ray.io/v1", "ml", "img:1"), doc("ray.io/v1", "ml", "img:2")})
	require.Equal(t, ids[0], ids[1], "equal objects, equal identities")
	require.NotEqual(t, ids[0].Sum, ids[2].Sum, "other content, other digest")
	require.Equal(t, ids[0].ID, ids[2].ID)
}
