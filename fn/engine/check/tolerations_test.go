package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var keyed = corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

// A key-less Exists toleration tolerates cordon: warned about once per
// head, worker group (its segments once) and Deployment.
func TestTolerations(t *testing.T) {
	keyless := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	job := func(head, workers []corev1.Toleration) *rayv1.RayJob {
		spec := &rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Tolerations: head}}}}
		for _, g := range []string{"gpu-segment-0", "gpu-segment-1"} {
			spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: g, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Tolerations: workers}}})
		}
		return &rayv1.RayJob{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: rayv1.RayJobSpec{RayClusterSpec: spec}}
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "sandbox"}}
	dep.Spec.Template.Spec.Tolerations = keyless
	const w = "warning p.yaml output RayJob/r spec.rayClusterSpec."
	for _, tc := range []struct {
		name string
		objs []any
		want []string
	}{
		{"keyed", []any{job([]corev1.Toleration{keyed}, []corev1.Toleration{keyed})}, nil},
		{"key-less on the workers, segments once", []any{job(nil, keyless)}, []string{w + "workerGroupSpecs[0].template.spec.tolerations"}},
		{"key-less on the head and a Deployment", []any{job(keyless, nil), dep},
			[]string{w + "headGroupSpec.template.spec.tolerations", "warning p.yaml output Deployment/sandbox spec.template.spec.tolerations"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Tolerations("p.yaml", tc.objs)
			require.Equal(t, tc.want, found(ds), "%v", ds)
			for _, d := range ds {
				require.Contains(t, d.Message, "tolerates every taint ({operator: Exists} without a key), node.kubernetes.io/unschedulable and not-ready included")
			}
		})
	}
}
