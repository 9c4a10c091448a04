package build

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/profile"
)

// devWorkspace is where the dev pod mounts the shared workspace PVC.
const devWorkspace = "/mnt/rl-workspace"

// devPod is `nrl-k8s dev connect`'s pod (§7.6): CPU only, kept off GPU
// nodes, the workspace PVC mounted, per-user secrets via envFrom.
// It is one per user: a run name labels it but does not rename it.
func (b *builder) devPod() *corev1.Pod {
	in, user := b.in, b.p.User
	name := user + "-dev-pod"
	instance := name
	if b.named() {
		instance = b.p.Name
	}
	id := b.runIdentity(instance)
	image := in.Dev.Image
	if b.p.Image != "" {
		image = b.p.Image
	}
	home := devWorkspace + "/" + user
	script := "mkdir -p " + home + " && cd " + home + " && echo 'dev pod ready' && sleep infinity"
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   in.Namespace,
			Labels:      id.objectLabels(nil, nil, map[string]string{"nrl-k8s/component": "dev-pod"}),
			Annotations: id.objectAnnotations(nil, nil),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:    corev1.RestartPolicyNever,
			ImagePullSecrets: pullSecretsOr(in, "nvcr-secret"),
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{
							Key:      "nvidia.com/gpu.product",
							Operator: corev1.NodeSelectorOpDoesNotExist,
						}},
					}},
				},
			}},
			Containers: []corev1.Container{{
				Name:       "dev",
				Image:      image,
				Command:    []string{"sh", "-c", script},
				WorkingDir: home,
				Env:        []corev1.EnvVar{{Name: "USER", Value: user}},
				EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: in.Dev.SecretName},
					Optional:             ptr(true),
				}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5"), corev1.ResourceMemory: resource.MustParse("10Gi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "rl-workspace", MountPath: devWorkspace}},
			}},
			Volumes: []corev1.Volume{{
				Name: "rl-workspace",
				VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
					ClaimName: in.Dev.PVCName,
				}},
			}},
		},
	}
}

// pullSecretsOr uses the profile's pull secrets, else nrl-k8s's default.
func pullSecretsOr(in *profile.Infra, def string) []corev1.LocalObjectReference {
	names := in.ImagePullSecrets
	if len(names) == 0 {
		names = []string{def}
	}
	out := make([]corev1.LocalObjectReference, 0, len(names))
	for _, n := range names {
		out = append(out, corev1.LocalObjectReference{Name: n})
	}
	return out
}
