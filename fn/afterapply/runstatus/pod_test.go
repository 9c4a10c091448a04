package runstatus

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
)

// A wait that ends by itself (a claim being allocated, an image being
// pulled) is not a block; Unschedulable and a crash loop are.
func TestPodBlocked(t *testing.T) {
	pending := func(c []corev1.PodCondition, cs []corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: c, ContainerStatuses: cs}}
	}
	waiting := func(reason string) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: "ray-worker", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}}}
	}
	cases := []struct {
		name    string
		pod     *corev1.Pod
		blocked bool
	}{
		{"just created", pending(nil, nil), false},
		{"unschedulable", pending([]corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes"}}, nil), true},
		{"pulling", pending(nil, waiting("ContainerCreating")), false},
		{"image pull backoff", pending(nil, waiting("ImagePullBackOff")), true},
		{"crash loop", &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: waiting("CrashLoopBackOff")}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.blocked, podOf(c.pod).Blocked)
			assert.Equal(t, c.blocked, len(podProblems([]Pod{podOf(c.pod)})) > 0)
		})
	}
}
