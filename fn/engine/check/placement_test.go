package check

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each rule once, on the rendered RayJob or RayCluster: GPU workers
// without tolerations (segments of one group once), a head on GPU nodes or
// asking for GPUs.
func TestPlacement(t *testing.T) {
	gpu := func(n string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}}}}}
	}
	spec := func(edit func(head *corev1.PodTemplateSpec, w *rayv1.WorkerGroupSpec)) rayv1.RayClusterSpec {
		w := rayv1.WorkerGroupSpec{GroupName: "gpu", Template: corev1.PodTemplateSpec{Spec: gpu("4")}}
		w.Template.Spec.Tolerations = []corev1.Toleration{keyed}
		head := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "h"}}}}
		edit(&head, &w)
		return rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: head}, WorkerGroupSpecs: []rayv1.WorkerGroupSpec{w}}
	}
	cluster := func(edit func(*corev1.PodTemplateSpec, *rayv1.WorkerGroupSpec)) []any {
		return []any{&rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: spec(edit)}}
	}
	const ws = "warning p.yaml output RayCluster/c spec.workerGroupSpecs[0].template"
	const hs = "warning p.yaml output RayCluster/c spec.headGroupSpec.template.spec"
	for _, tc := range []struct {
		name string
		objs []any
		want []string
	}{
		{"tolerated GPU worker, CPU head", cluster(func(*corev1.PodTemplateSpec, *rayv1.WorkerGroupSpec) {}), nil},
		{"untolerated GPU worker", cluster(func(_ *corev1.PodTemplateSpec, w *rayv1.WorkerGroupSpec) { w.Template.Spec.Tolerations = nil }),
			[]string{ws + ".spec.tolerations"}},
		{"untolerated CPU worker", cluster(func(_ *corev1.PodTemplateSpec, w *rayv1.WorkerGroupSpec) { w.Template.Spec = corev1.PodSpec{} }), nil},
		{"untolerated segments, once", []any{&rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "j"}, Spec: rayv1.RayJobSpec{RayClusterSpec: &rayv1.RayClusterSpec{
			WorkerGroupSpecs: []rayv1.WorkerGroupSpec{{GroupName: "gpu-segment-0", Template: corev1.PodTemplateSpec{Spec: gpu("4")}}, {GroupName: "gpu-segment-1", Template: corev1.PodTemplateSpec{Spec: gpu("4")}}}}}}},
			[]string{"warning p.yaml output RayJob/j spec.rayClusterSpec.workerGroupSpecs[0].template.spec.tolerations"}},
		{"RayJob without a cluster spec", []any{&rayv1.RayJob{}}, nil},
		{"head selects GPU nodes", cluster(func(h *corev1.PodTemplateSpec, _ *rayv1.WorkerGroupSpec) {
			h.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.present": "true", "pool": "cpu"}
		}), []string{hs + ".nodeSelector.nvidia.com/gpu.present"}},
		{"head requests GPUs", cluster(func(h *corev1.PodTemplateSpec, _ *rayv1.WorkerGroupSpec) { h.Spec = gpu("1") }), []string{hs + ".containers[*].resources"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Placement("p.yaml", tc.objs)
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
