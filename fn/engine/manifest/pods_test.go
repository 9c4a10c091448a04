package manifest

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// infraOf decodes a profile fragment into the typed profile the build reads.
func infraOf(t *testing.T, y string) *profile.Infra {
	t.Helper()
	in := &profile.Infra{}
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), in))
	return in
}

// Ray pods get the image on every container, Deployments only where a
// container has none; pull secrets and service account come from the
// profile, and init containers are never touched.
func TestPatchPodSpec(t *testing.T) {
	spec := func() *corev1.PodSpec {
		return &corev1.PodSpec{ServiceAccountName: "own", InitContainers: []corev1.Container{{Name: "i", Image: "init"}},
			Containers: []corev1.Container{{Name: "a", Image: "mine"}, {Name: "b"}}}
	}
	for _, tc := range []struct {
		name, profile string
		policy        imagePolicy
		images        []string
		secrets       []corev1.LocalObjectReference
		sa            string
	}{
		{"overwrite", "{}", overwriteImage, []string{"run", "run"}, nil, "own"},
		{"fill missing", "{}", fillMissingImage, []string{"mine", "run"}, nil, "own"},
		{"pull secrets and service account", "{imagePullSecrets: [s1, s2], serviceAccount: sa}", overwriteImage,
			[]string{"run", "run"}, []corev1.LocalObjectReference{{Name: "s1"}, {Name: "s2"}}, "sa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spec()
			patchPodSpec(s, infraOf(t, tc.profile), "run", tc.policy)
			require.Equal(t, tc.images, []string{s.Containers[0].Image, s.Containers[1].Image})
			require.Equal(t, tc.secrets, s.ImagePullSecrets)
			require.Equal(t, tc.sa, s.ServiceAccountName)
			require.Equal(t, "init", s.InitContainers[0].Image)
		})
	}
}
