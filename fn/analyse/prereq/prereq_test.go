package prereq

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

func worker() corev1.PodSpec {
	return corev1.PodSpec{
		ServiceAccountName: "runner",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		ResourceClaims: []corev1.PodResourceClaim{
			{Name: "roce", ResourceClaimTemplateName: ptr.To("roce-rct")},
			{Name: "cd", ResourceClaimTemplateName: ptr.To("cd-channel")},
			{Name: "shared", ResourceClaimName: ptr.To("team-claim")},
			{Name: "ext", ResourceClaimTemplateName: ptr.To("external-rct")},
		},
		Volumes: []corev1.Volume{
			{Name: "ws", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "workspace"}}},
			{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "run-recipe"}}}},
			{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}},
		},
		Containers: []corev1.Container{{
			Name:    "ray-worker",
			EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "user-secrets"}, Optional: ptr.To(true)}}},
			Env: []corev1.EnvVar{{Name: "WANDB_API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "wandb"}, Key: "key"}}}},
		}},
	}
}

func objects() []any {
	job := &rayv1.RayJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"},
		ObjectMeta: metav1.ObjectMeta{Name: "run", Namespace: "team", Labels: map[string]string{vocab.KAIQueueLabel: "rl"}},
		Spec: rayv1.RayJobSpec{SubmissionMode: rayv1.HTTPMode, RayClusterSpec: &rayv1.RayClusterSpec{
			HeadGroupSpec:    rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: "runner", Containers: []corev1.Container{{Name: "ray-head"}}}}},
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu", Template: corev1.PodTemplateSpec{Spec: worker()}}},
		}},
	}
	rct := &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: "roce-rct", Namespace: "team"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{
			{Name: "roce", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "roce.networking.k8s.aws"}},
		}}}},
	}
	cd := map[string]any{
		"apiVersion": "resource.nvidia.com/v1beta1", "kind": "ComputeDomain",
		"metadata": map[string]any{"name": "cd", "namespace": "team"},
		"spec":     map[string]any{"channel": map[string]any{"resourceClaimTemplate": map[string]any{"name": "cd-channel"}}},
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "run-recipe", Namespace: "team"}}
	return []any{cd, rct, cm, job}
}

func TestFromObjects(t *testing.T) {
	got, err := FromObjects(objects())
	require.NoError(t, err)
	type key struct{ kind, ns, name string }
	have := map[key]Prerequisite{}
	var order []key
	for _, p := range got {
		k := key{p.Kind, p.Namespace, p.Name}
		require.NotContains(t, have, k, "listed twice")
		have[k] = p
		order = append(order, k)
		require.NotEmpty(t, p.Why)
		require.NotEmpty(t, p.ReferencedBy)
	}
	want := []key{
		{"APIService", "", "v1.resource.k8s.io"},
		{"CustomResourceDefinition", "", "computedomains.resource.nvidia.com"},
		{"CustomResourceDefinition", "", "queues.scheduling.run.ai"},
		{"CustomResourceDefinition", "", "rayjobs.ray.io"},
		{"DeviceClass", "", "compute-domain-default-channel.nvidia.com"},
		{"DeviceClass", "", "roce.networking.k8s.aws"},
		{"PersistentVolumeClaim", "team", "workspace"},
		{"Queue", "", "rl"},
		{"ResourceClaim", "team", "team-claim"},
		{"ResourceClaimTemplate", "team", "external-rct"},
		{"Secret", "team", "pull"},
		{"Secret", "team", "tls"},
		{"Secret", "team", "user-secrets"},
		{"Secret", "team", "wandb"},
		{"ServiceAccount", "team", "runner"},
	}
	require.Equal(t, want, order, "rendered objects (roce-rct, run-recipe) and the ComputeDomain's own channel template are not prerequisites; the DeviceClass that template names is")
	require.Equal(t, []string{"ComputeDomain/cd spec.channel"},
		have[key{"DeviceClass", "", ComputeDomainChannelClass}].ReferencedBy)
	require.True(t, have[key{"Secret", "team", "user-secrets"}].Optional)
	require.False(t, have[key{"Secret", "team", "wandb"}].Optional)
	// The head and the worker both name the ServiceAccount; the worker's
	// env is read once although KubeRay's init container copies it.
	require.Len(t, have[key{"ServiceAccount", "team", "runner"}].ReferencedBy, 2)
	require.Equal(t, []string{"RayJob/run spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].env[0].valueFrom.secretKeyRef"},
		have[key{"Secret", "team", "wandb"}].ReferencedBy)
	require.Equal(t, "apiextensions.k8s.io/v1", have[key{"CustomResourceDefinition", "", "rayjobs.ray.io"}].APIVersion)
}

func TestFromObjectsDeterministic(t *testing.T) {
	a, err := FromObjects(objects())
	require.NoError(t, err)
	objs := objects()
	objs[0], objs[3] = objs[3], objs[0]
	b, err := FromObjects(objs)
	require.NoError(t, err)
	require.Equal(t, a, b)
}

func TestFromObjectsUnreadable(t *testing.T) {
	_, err := FromObjects([]any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": map[string]any{"name": "x"}, "spec": "nope"}})
	require.ErrorContains(t, err, "RayJob/x")
}
