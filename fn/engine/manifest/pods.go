package manifest

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// imagePolicy says which containers get the profile image: RayCluster pods
// overwrite every container (sidecars too), Deployments only fill in missing
// images so an explicit image wins. initContainers are never touched.
type imagePolicy int

const (
	overwriteImage imagePolicy = iota
	fillMissingImage
)

// patchPodSpec applies the image (the profile's or the run's), the
// profile's pull secrets and service account to one pod spec.
func patchPodSpec(spec *corev1.PodSpec, in *profile.Infra, image string, policy imagePolicy) {
	for i := range spec.Containers {
		if policy == overwriteImage || spec.Containers[i].Image == "" {
			spec.Containers[i].Image = image
		}
	}
	if len(in.ImagePullSecrets) > 0 {
		// A fresh slice per pod: no shared list, so no YAML alias can appear.
		refs := make([]corev1.LocalObjectReference, 0, len(in.ImagePullSecrets))
		for _, s := range in.ImagePullSecrets {
			refs = append(refs, corev1.LocalObjectReference{Name: s})
		}
		spec.ImagePullSecrets = refs
	}
	if in.ServiceAccount != nil {
		spec.ServiceAccountName = *in.ServiceAccount
	}
}
