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
		{"replicas below minReplicas start minReplicas", rayv1.WorkerGroupSpec{Replicas: i32(4), MinReplicas: i32(16), MaxReplicas: i32(16)}, false, 16},
		{"replicas above maxReplicas start maxReplicas", rayv1.WorkerGroupSpec{Replicas: i32(2147483647), MaxReplicas: i32(4)}, false, 4},
		{"minReplicas above maxReplicas start maxReplicas", rayv1.WorkerGroupSpec{Replicas: i32(8), MinReplicas: i32(10), MaxReplicas: i32(2)}, false, 2},
		{"unset replicas start minReplicas", rayv1.WorkerGroupSpec{MinReplicas: i32(3)}, false, 3},
		{"clamped, then times numOfHosts", rayv1.WorkerGroupSpec{Replicas: i32(1), MinReplicas: i32(2), NumOfHosts: 4}, false, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, WorkerPods(&tc.g, tc.suspended))
		})
	}
}

func TestMaxWorkerPods(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name        string
		g           rayv1.WorkerGroupSpec
		autoscaling bool
		want        int64
	}{
		{"no autoscaling: what starts", rayv1.WorkerGroupSpec{Replicas: i32(2), MaxReplicas: i32(8)}, false, 2},
		{"autoscaling: maxReplicas", rayv1.WorkerGroupSpec{Replicas: i32(2), MaxReplicas: i32(8)}, true, 8},
		{"autoscaling: maxReplicas × numOfHosts", rayv1.WorkerGroupSpec{Replicas: i32(2), MaxReplicas: i32(8), NumOfHosts: 2}, true, 16},
		{"autoscaling without maxReplicas has no ceiling", rayv1.WorkerGroupSpec{Replicas: i32(2)}, true, MaxNodes + 1},
		{"a suspended group stays at 0", rayv1.WorkerGroupSpec{Replicas: i32(2), MaxReplicas: i32(8), Suspend: &yes}, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, MaxWorkerPods(&tc.g, tc.autoscaling, false))
		})
	}
}

func TestCount(t *testing.T) {
	gpu := corev1.ResourceRequirements{Limits: corev1.ResourceList{GPUResource: resource.MustParse("8")}}
	on := true
	spec := &rayv1.RayClusterSpec{
		EnableInTreeAutoscaling: &on,
		WorkerGroupSpecs: []rayv1.WorkerGroupSpec{
			{GroupName: "cpu", Replicas: i32(1), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w"}}}}},
			{GroupName: "gpu", Replicas: i32(4), MinReplicas: i32(16), MaxReplicas: i32(32), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "w", Resources: gpu}, {Name: "side", Resources: gpu}}}}},
		},
	}
	c := Count(spec)
	require.True(t, c.Autoscaling)
	require.Equal(t, int64(17), c.Pods)
	require.Equal(t, int64(16), c.GPUNodes)
	require.Equal(t, int64(16*16), c.GPUs, "both GPU containers count")
	require.Equal(t, int64(32), c.MaxGPUNodes)
	require.Equal(t, int64(32*16), c.MaxGPUs)
	require.Len(t, c.GPUGroups(), 1)
	require.Equal(t, "gpu", c.GPUGroups()[0].Name)
	require.False(t, c.OverBound())
	require.Equal(t, Cluster{}, Count(nil))
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
	always := corev1.ContainerRestartPolicyAlways
	withGPU := func(n string, sidecar bool) corev1.Container {
		c := corev1.Container{Resources: corev1.ResourceRequirements{Limits: gpu(n)}}
		if sidecar {
			c.RestartPolicy = &always
		}
		return c
	}
	for _, tc := range []struct {
		name string
		init []corev1.Container
		want int64
	}{
		{"a sidecar runs beside the containers", []corev1.Container{withGPU("1", true)}, 5},
		{"a smaller init container runs before them", []corev1.Container{withGPU("2", false)}, 4},
		{"a larger init container sets the reservation", []corev1.Container{withGPU("6", false)}, 6},
		{"with the sidecars started before it", []corev1.Container{withGPU("1", true), withGPU("6", false)}, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, found := GPUsPerPod(&corev1.PodSpec{InitContainers: tc.init, Containers: []corev1.Container{withGPU("4", false)}})
			require.Equal(t, tc.want, n)
			require.True(t, found)
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
