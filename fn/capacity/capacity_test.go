package capacity

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func i32(v int32) *int32 { return &v }

func TestWorkerPods(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name      string
		g         rayv1.WorkerGroupSpec
		suspended bool
		want      int64
	}{
		{"replicas unset is KubeRay's default 0", rayv1.WorkerGroupSpec{}, false, 0},
		{"numOfHosts unset counts as 1", rayv1.WorkerGroupSpec{Replicas: i32(4)}, false, 4},
		{"multi-host", rayv1.WorkerGroupSpec{Replicas: i32(4), NumOfHosts: 2}, false, 8},
		{"negative replicas give nothing", rayv1.WorkerGroupSpec{Replicas: i32(-3)}, false, 0},
		{"suspended group", rayv1.WorkerGroupSpec{Replicas: i32(4), Suspend: &yes}, false, 0},
		{"suspended cluster", rayv1.WorkerGroupSpec{Replicas: i32(4)}, true, 0},
		{"capped past the bound", rayv1.WorkerGroupSpec{Replicas: i32(2147483647), NumOfHosts: 2147483647}, false, MaxNodes + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, WorkerPods(&tc.g, tc.suspended))
		})
	}
}

func TestGPUsPerPod(t *testing.T) {
	gpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}
	}
	for _, tc := range []struct {
		name       string
		containers []corev1.Container
		want       int64
		found      bool
	}{
		{"none", []corev1.Container{{Name: "a"}}, 0, false},
		{"limit", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu("4")}}}, 4, true},
		{"request when no limit", []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: gpu("2")}}}, 2, true},
		{"limit wins over request", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu("4"), Requests: gpu("1")}}}, 4, true},
		{"summed over containers", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu("4")}}, {Resources: corev1.ResourceRequirements{Limits: gpu("4")}}}, 8, true},
		{"zero is found, not counted", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu("0")}}}, 0, true},
		{"capped", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu("1e12")}}}, maxGPUsPerPod, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, found := GPUsPerPod(&corev1.PodSpec{Containers: tc.containers})
			require.Equal(t, tc.want, n)
			require.Equal(t, tc.found, found)
		})
	}
}

func TestCappedArithmetic(t *testing.T) {
	const limit = 100
	require.Equal(t, int64(7), Add(3, 4, limit))
	require.Equal(t, int64(limit+1), Add(1<<62, 1<<62, limit))
	require.Equal(t, int64(limit+1), Add(60, 60, limit))
	require.Equal(t, int64(12), Mul(3, 4, limit))
	require.Equal(t, int64(0), Mul(0, 1<<62, limit))
	require.Equal(t, int64(limit+1), Mul(2147483647, 2147483647, limit))
}
