package defaultsched

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// fields is a scheduler.Reporter that keeps the field of each error.
type fields []string

func (f *fields) Errorf(field, _ string, _ ...any) { *f = append(*f, field) }

// The default scheduler needs no queue, owns no key and writes nothing,
// whatever the profile says: the pod keeps the schedulerName it names.
func TestIntegration(t *testing.T) {
	topo := &scheduler.Topology{Topology: "t", RequiredPlacement: "rack"}
	for _, tc := range []struct {
		name  string
		p     scheduler.Profile
		sched string
	}{
		{"selected, bare", scheduler.Profile{Kind: Kind}, ""},
		{"selected, every key", scheduler.Profile{Kind: Kind, Queue: ptr.To("q"), Topology: topo, PriorityClassName: ptr.To("high"),
			Labels: map[string]string{"kai.scheduler/queue": "q"}}, "volcano"},
		{"another kind", scheduler.Profile{Kind: "kai", Queue: ptr.To("q"), Topology: topo}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Integration{}
			require.Equal(t, "default", s.Kind())
			require.False(t, s.NeedsQueue())
			var got fields
			s.Validate(tc.p, &got)
			require.Empty(t, got)
			set, drop, err := s.ProfileLabels(tc.p)
			require.NoError(t, err)
			require.Nil(t, set)
			require.Nil(t, drop)
			require.Nil(t, s.OwnerLabels(tc.p))
			require.Nil(t, s.OwnerAnnotations(tc.p))
			tpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: tc.sched}}
			require.NoError(t, s.Pod(tc.p, "w", tpl))
			require.Equal(t, tc.sched, tpl.Spec.SchedulerName)
			require.Nil(t, s.CheckObjects("p.yaml", []any{tpl}))
		})
	}
}
