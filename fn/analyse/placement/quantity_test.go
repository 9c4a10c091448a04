package placement

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A container limit without a request counts as its request, as the API
// server defaults it; init containers count at their largest.
func TestPodRequests(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		out := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		containers []corev1.Container
		inits      []corev1.Container
		want       corev1.ResourceList
	}{
		{"requests", []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: list("cpu", "2")}}}, nil, list("cpu", "2")},
		{"limit only", []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: list("nvidia.com/gpu", "4")}}}, nil, list("nvidia.com/gpu", "4")},
		{"request kept under a larger limit", []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: list("cpu", "1"), Limits: list("cpu", "3")}}}, nil, list("cpu", "1")},
		{"an init container larger than the sum", []corev1.Container{{Resources: corev1.ResourceRequirements{Requests: list("cpu", "1")}}},
			[]corev1.Container{{Resources: corev1.ResourceRequirements{Limits: list("cpu", "5")}}}, list("cpu", "5")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodRequests(&corev1.Pod{Spec: corev1.PodSpec{Containers: tc.containers, InitContainers: tc.inits}})
			assert.Len(t, got, len(tc.want))
			for n, q := range tc.want {
				have := got[n]
				assert.Zero(t, q.Cmp(have), "%s: got %s, want %s", n, have.String(), q.String())
			}
		})
	}
}

// A quantity no cluster has is refused, naming it as the answer wrote it.
func TestInRange(t *testing.T) {
	for _, tc := range []struct {
		q, want string
	}{
		{"0", ""},
		{"1E", ""},
		{"-1", "is -1: negative, expected a quantity from 0 to 1E"},
		{"2E", "is 2E: absurd, expected a quantity from 0 to 1E"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			err := InRange(resource.MustParse(tc.q), tc.q)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.EqualError(t, err, tc.want)
		})
	}
}
