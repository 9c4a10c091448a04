package scheduler_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// TestSchedulerHelpers: a pod naming no scheduler goes to the cluster's
// default; a queue is set only when it names one; a *FieldError says its
// field first and is found through wrapping.
func TestSchedulerHelpers(t *testing.T) {
	for _, tc := range []struct{ name, want string }{{"", "default-scheduler"}, {"kai-scheduler", "kai-scheduler"}} {
		assert.Equal(t, tc.want, scheduler.NameOf(&corev1.PodSpec{SchedulerName: tc.name}))
	}
	empty, q := "", "team-a"
	for _, tc := range []struct {
		queue *string
		want  bool
	}{{nil, false}, {&empty, false}, {&q, true}} {
		assert.Equal(t, tc.want, scheduler.Profile{Queue: tc.queue}.QueueSet())
	}
	err := scheduler.Errorf("scheduler.queue", "found %q; expected a label value", "a b")
	assert.EqualError(t, err, `scheduler.queue: found "a b"; expected a label value`)
	fe, ok := errors.AsType[*scheduler.FieldError](errors.Join(errors.New("x"), err))
	if assert.True(t, ok) {
		assert.Equal(t, scheduler.FieldError{Field: "scheduler.queue", Msg: `found "a b"; expected a label value`}, *fe)
	}
}
