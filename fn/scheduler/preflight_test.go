package scheduler

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A read's outcome is one verdict: found is ok, refused or failed is
// cannot tell (with the error's first line), absent is missing.
func TestVerdict(t *testing.T) {
	boom := errors.New("boom\nmore")
	for _, tc := range []struct {
		name   string
		out    Outcome
		err    error
		state  State
		detail string
		failed bool
		why    string
	}{
		{"found", Found, nil, OK, "", false, "x could not be read (error: )"},
		{"forbidden", Forbidden, boom, CannotTell, "no permission to read it: boom", true, "x could not be read (boom)"},
		{"error", NotFound, boom, CannotTell, "boom", true, "x could not be read (error: boom)"},
		{"absent", NotFound, nil, Missing, "not found", false, "x could not be read (error: )"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, d := Verdict(tc.out, tc.err)
			assert.Equal(t, tc.state, st)
			assert.Equal(t, tc.detail, d)
			assert.Equal(t, tc.failed, Failed(tc.out, tc.err))
			assert.Equal(t, tc.why, ReadFailure("x", tc.out, tc.err))
		})
	}
}

// Missing is worse than cannot tell, which is worse than ok.
func TestWorse(t *testing.T) {
	order := []State{OK, CannotTell, Missing}
	for i, a := range order {
		for j, b := range order {
			assert.Equal(t, i > j, Worse(a, b), "%s worse than %s", a, b)
		}
	}
}

// A bound Pod's requests (a limit without a request counting as one)
// and one of "pods" add up per node and holder; holders come in one
// order, the deleting after.
func TestBoundPods(t *testing.T) {
	pod := func(node, sched string, deleting bool, cpu string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node, SchedulerName: sched, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
		if deleting {
			p.DeletionTimestamp = &metav1.Time{}
		}
		return p
	}
	var b BoundPods
	for _, p := range []*corev1.Pod{pod("n1", "b", false, "1"), pod("n1", "a", true, "2"), pod("n1", "b", false, "500m"), pod("n1", "a", false, "3"), pod("n2", "b", false, "4")} {
		b.Add(p)
	}
	assert.Equal(t, []Holder{{"a", false}, {"a", true}, {"b", false}}, b.Holders("n1"))
	assert.Empty(t, b.Holders("n3"))
	for _, tc := range []struct {
		node      string
		h         Holder
		cpu, pods string
	}{
		{"n1", Holder{"b", false}, "1500m", "2"},
		{"n1", Holder{"a", true}, "2", "1"},
		{"n1", Holder{"a", false}, "3", "1"},
		{"n2", Holder{"b", false}, "4", "1"},
	} {
		l := b.Held[tc.node][tc.h]
		cpu, pods := l[corev1.ResourceCPU], l[corev1.ResourcePods]
		assert.Equal(t, tc.cpu, cpu.String(), tc.node, tc.h)
		assert.Equal(t, tc.pods, pods.String(), tc.node, tc.h)
	}
}
