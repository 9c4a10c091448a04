package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

func TestRecipeYAML(t *testing.T) {
	for _, tc := range []struct {
		name, recipe, want, err string
	}{
		{"keys sorted, interpolations kept", "z: 1\na: ${z}\n", "a: ${z}\nz: 1\n", ""},
		{"over a ConfigMap's limit", "a: " + strings.Repeat("x", maxConfigMapBytes) + "\n", "", "a ConfigMap holds at most"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := tree.Parse("r.yaml", []byte(tc.recipe))
			require.NoError(t, err)
			got, err := RecipeYAML(v.(*tree.Map))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	require.Equal(t, RecipeHash("a: 1\n"), RecipeHash("a: 1\n"))
	require.Len(t, RecipeHash("a: 1\n"), 10)
	require.NotEqual(t, RecipeHash("a: 1\n"), RecipeHash("a: 2\n"))
}

// The ConfigMap is named by its text, immutable, and mounted into every
// container of the head; a volume already using its name is an error.
func TestRecipeConfigMap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		volumes []corev1.Volume
		err     string
	}{
		{"mounted", nil, ""},
		{"volume name taken", []corev1.Volume{{Name: recipeVolume}}, "already has a volume named"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &builder{in: infraOf(t, "namespace: team"), p: runparams.Params{RecipeYAML: "a: 1\n"}}
			head := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{Volumes: tc.volumes, Containers: []corev1.Container{{Name: "ray"}, {Name: "side"}}}}
			cm, err := b.recipeConfigMap(identity{instance: "j"}, infraOf(t, "kuberay: {training: {name: c}}").Kuberay.Training, "j", head)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, "j-recipe-"+RecipeHash("a: 1\n"), cm.Name)
			require.Equal(t, "team", cm.Namespace)
			require.True(t, *cm.Immutable)
			require.Equal(t, map[string]string{"recipe.yaml": "a: 1\n"}, cm.Data)
			require.Equal(t, cm.Name, head.Spec.Volumes[0].ConfigMap.Name)
			for _, c := range head.Spec.Containers {
				require.Equal(t, []corev1.VolumeMount{{Name: recipeVolume, MountPath: "/etc/nemo-rl/recipe", ReadOnly: true}}, c.VolumeMounts, c.Name)
			}
		})
	}
}
