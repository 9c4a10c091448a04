package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

func TestAmount(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1k", "1000"}, {"1500m", "1500m"}, {"16", "16"}, {"64Gi", "64Gi"}, {"2P", "2P"},
	} {
		assert.Equal(t, tc.want, scheduler.Amount(resource.MustParse(tc.in)), tc.in)
	}
}

func TestInt32Of(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int32
		ok   bool
	}{
		{int64(1000), 1000, true}, {int64(-5), -5, true}, {int64(1) << 40, 0, false}, {"100", 0, false}, {1.5, 0, false},
	} {
		got, ok := scheduler.Int32Of(tc.in)
		assert.Equal(t, tc.ok, ok, "%v", tc.in)
		assert.Equal(t, tc.want, got, "%v", tc.in)
	}
}

// Demand counts only the pods of objects that name the queue, each pod's
// requests times its count.
func TestDemand(t *testing.T) {
	pod := func(object string, count int64, res corev1.ResourceRequirements) scheduler.PodSet {
		return scheduler.PodSet{Pod: workload.Pod{Object: object, Count: count, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: res}}}}}
	}
	worker := pod("RayJob/run", 4, corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}})
	other := pod("Deployment/shared", 2, corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}})
	got := scheduler.Demand([]scheduler.PodSet{worker, other}, []string{"RayJob/run spec.metadata.labels"})
	assert.Equal(t, "16", scheduler.Amount(got["nvidia.com/gpu"]))
	_, counted := got[corev1.ResourceCPU]
	assert.False(t, counted, "the Deployment does not name the queue")
}
