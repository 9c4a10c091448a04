package manifest

import (
	"path"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

// devScript is the dev pod's start script, doing what nrl-k8s's does: the
// user's SSH key from the secret installed with mode 600, rclone configured
// (and installed) when RCLONE_CONF is set, kubectl installed when missing,
// then sleep. An install that fails (no network) is reported, not fatal:
// the pod stays up.
func devScript(home string) string {
	return `mkdir -p ` + shell.Quote(home) + ` /root/.ssh
if [ -n "${SSH_KEY_CONTENT:-}" ] && [ -n "${SSH_KEY_NAME:-}" ]; then
  printf '%s\n' "$SSH_KEY_CONTENT" > "/root/.ssh/$SSH_KEY_NAME" && chmod 600 "/root/.ssh/$SSH_KEY_NAME"
fi
if [ -n "${RCLONE_CONF:-}" ]; then
  mkdir -p /root/.config/rclone && printf '%s\n' "$RCLONE_CONF" > /root/.config/rclone/rclone.conf
  command -v rclone >/dev/null 2>&1 || curl -fsSL https://rclone.org/install.sh | bash || echo "rclone install failed" >&2
fi
if ! command -v kubectl >/dev/null 2>&1; then
  arch=$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')
  ver=$(curl -fsSL https://dl.k8s.io/release/stable.txt) &&
    curl -fsSLo /usr/local/bin/kubectl "https://dl.k8s.io/release/$ver/bin/linux/$arch/kubectl" &&
    chmod +x /usr/local/bin/kubectl || echo "kubectl install failed" >&2
fi
cd ` + home + ` && echo 'dev pod ready'
exec sleep infinity`
}

// devSettings are the dev pod's image, pull secrets and service account:
// the `dev:` section, else the profile's own. nrl-k8s hard-codes them.
func devSettings(in *profile.Infra) (image string, secrets []string, sa *string) {
	image = in.Dev.Image
	if image == "" {
		image = in.Image
	}
	secrets = in.ImagePullSecrets
	if in.Dev.ImagePullSecrets != nil {
		secrets = in.Dev.ImagePullSecrets
	}
	sa = in.ServiceAccount
	if in.Dev.ServiceAccount != nil {
		sa = in.Dev.ServiceAccount
	}
	return image, secrets, sa
}

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
	mount := profile.DevMountPath(in).Path
	home := path.Join(mount, user)
	script := devScript(home)
	image, secrets, sa := devSettings(in)
	workspace := corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
	if c := profile.DevWorkspaceClaim(in); c.Claim != "" {
		workspace = corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Claim}}
	} else {
		b.ds.Warnf(b.file, "dev.pvcName", "is unset and the profile names no workspace claim (workspace.pvcName, or one PersistentVolumeClaim in its Ray pods): the dev pod's %s is an emptyDir, lost with the pod; expected dev.pvcName naming the shared workspace PVC", mount)
	}
	if b.p.Image != "" {
		image = b.p.Image
	}
	var pullSecrets []corev1.LocalObjectReference
	for _, s := range secrets {
		pullSecrets = append(pullSecrets, corev1.LocalObjectReference{Name: s})
	}
	saName := ""
	if sa != nil {
		saName = *sa
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   in.Namespace,
			Labels:      id.objectLabels(nil, nil, map[string]string{"nrl-k8s/component": "dev-pod"}),
			Annotations: id.objectAnnotations(nil, nil),
		},
		Spec: corev1.PodSpec{
			RestartPolicy:      corev1.RestartPolicyNever,
			ImagePullSecrets:   pullSecrets,
			ServiceAccountName: saName,
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
				VolumeMounts: []corev1.VolumeMount{{Name: "rl-workspace", MountPath: mount}},
			}},
			Volumes: []corev1.Volume{{Name: "rl-workspace", VolumeSource: workspace}},
		},
	}
}

// DevImage is the dev pod's image before any run image replaces it (the
// chart's default for its image sentinel).
func DevImage(in *profile.Infra) string {
	image, _, _ := devSettings(in)
	return image
}
