package kueue

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// fields is a scheduler.Reporter that keeps the field of each error.
type fields []string

func (f *fields) Errorf(field, _ string, _ ...any) { *f = append(*f, field) }

// Kueue is named one way per kind; its queue, priority class and dispatch
// are judged at the keys that say them.
func TestValidate(t *testing.T) {
	beside := func(k scheduler.KueueBeside) *scheduler.KueueBeside { return &k }
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		want []string
	}{
		{"alone", scheduler.Profile{Kind: Kind, Queue: ptr.To("team-a"), WorkloadPriorityClass: ptr.To("high"), Dispatch: ptr.To(DispatchMultiKueue)}, nil},
		{"alone, no queue", scheduler.Profile{Kind: Kind}, nil},
		{"alone, bad queue", scheduler.Profile{Kind: Kind, Queue: ptr.To("Team_A")}, []string{"scheduler.queue"}},
		{"alone, bad priority class", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), WorkloadPriorityClass: ptr.To("Hi")}, []string{"scheduler.workloadPriorityClass"}},
		{"alone, bad dispatch", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Dispatch: ptr.To("push")}, []string{"scheduler.dispatch"}},
		{"alone, suspend", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Suspend: true}, []string{"launch.rayjob.suspend"}},
		{"alone, kueue key", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Kueue: beside(scheduler.KueueBeside{Queue: "a"})}, []string{"scheduler.kueue"}},
		{"kai, priority class", scheduler.Profile{Kind: kaiKind, WorkloadPriorityClass: ptr.To("high")}, []string{"scheduler.workloadPriorityClass"}},
		{"kai, dispatch", scheduler.Profile{Kind: kaiKind, Dispatch: ptr.To(DispatchMultiKueue)}, []string{"scheduler.dispatch"}},
		{"kai, suspend without kueue", scheduler.Profile{Kind: kaiKind, Suspend: true}, nil},
		{"beside", scheduler.Profile{Kind: kaiKind, Kueue: beside(scheduler.KueueBeside{Queue: "q", WorkloadPriorityClass: ptr.To("high"), Dispatch: ptr.To(DispatchMultiKueue)})}, nil},
		{"beside, empty queue", scheduler.Profile{Kind: kaiKind, Kueue: beside(scheduler.KueueBeside{})}, []string{"scheduler.kueue.queue"}},
		{"beside, bad values", scheduler.Profile{Kind: kaiKind, Suspend: true, Kueue: beside(scheduler.KueueBeside{Queue: "Q", WorkloadPriorityClass: ptr.To("P"), Dispatch: ptr.To("x")})},
			[]string{"scheduler.kueue.dispatch", "scheduler.kueue.queue", "scheduler.kueue.workloadPriorityClass", "launch.rayjob.suspend"}},
		{"volcano, kueue key", scheduler.Profile{Kind: "volcano", Kueue: beside(scheduler.KueueBeside{Queue: "q"})}, []string{"scheduler.kueue"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got fields
			Integration{}.Validate(tc.p, &got)
			require.Equal(t, fields(tc.want), got)
		})
	}
}

// Kueue's labels go on the admitted object alone: written by hand they are
// refused; KAI's queue label is dropped under Kueue alone unless a pod goes
// to KAI; MultiKueue dispatch names its manager.
func TestLabels(t *testing.T) {
	mine := map[string]string{vocab.KueuePriorityClassLabel: "x"}
	for _, tc := range []struct {
		name    string
		p       scheduler.Profile
		err     string
		drop    []string
		owner   map[string]string
		manager string
	}{
		{"alone", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), WorkloadPriorityClass: ptr.To("p")}, "", []string{vocab.KAIQueueLabel},
			map[string]string{vocab.KueueQueueLabel: "a", vocab.KueuePriorityClassLabel: "p"}, ""},
		{"alone, pod on KAI", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), NamesKAI: true}, "", nil, map[string]string{vocab.KueueQueueLabel: "a"}, ""},
		{"alone, multikueue", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Dispatch: ptr.To(DispatchMultiKueue), NamesKAI: true}, "", nil,
			map[string]string{vocab.KueueQueueLabel: "a"}, vocab.MultiKueueControllerName},
		{"alone, no queue", scheduler.Profile{Kind: Kind, Labels: mine, Dispatch: ptr.To(DispatchMultiKueue)}, "", []string{vocab.KAIQueueLabel}, nil, ""},
		{"alone, profile label", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Labels: mine}, "labels." + vocab.KueuePriorityClassLabel, nil,
			map[string]string{vocab.KueueQueueLabel: "a"}, ""},
		{"beside, cluster label", scheduler.Profile{Kind: kaiKind, Kueue: &scheduler.KueueBeside{Queue: "q"}, Clusters: []scheduler.Part{{Name: "gym", Labels: mine}}},
			"kuberay.gym.labels." + vocab.KueuePriorityClassLabel, nil, map[string]string{vocab.KueueQueueLabel: "q"}, ""},
		{"beside, multikueue", scheduler.Profile{Kind: kaiKind, Kueue: &scheduler.KueueBeside{Queue: "q", Dispatch: ptr.To(DispatchMultiKueue)}}, "", nil,
			map[string]string{vocab.KueueQueueLabel: "q"}, vocab.MultiKueueControllerName},
		{"kai alone", scheduler.Profile{Kind: kaiKind, Queue: ptr.To("a"), Labels: mine}, "", nil, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, drop, err := Integration{}.ProfileLabels(tc.p)
			require.Nil(t, set)
			require.Equal(t, tc.err, fieldOf(err))
			require.Equal(t, tc.drop, drop)
			require.Equal(t, tc.owner, Integration{}.OwnerLabels(tc.p))
			require.Equal(t, tc.manager, Integration{}.OwnerManagedBy(tc.p))
			require.Nil(t, Integration{}.OwnerAnnotations(tc.p))
		})
	}
}

// Under Kueue alone a pod KAI does not place loses KAI's topology
// annotations, and KAI's queue label unless another pod goes to KAI.
func TestPod(t *testing.T) {
	for _, tc := range []struct {
		name, kind, sched string
		namesKAI          bool
		annots, labels    int
	}{
		{"alone, default scheduler", Kind, "", false, 0, 1},
		{"alone, another pod on KAI", Kind, "", true, 0, 2},
		{"alone, this pod on KAI", Kind, vocab.KAISchedulerName, false, 3, 2},
		{"kai", kaiKind, "", false, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      map[string]string{vocab.KAIQueueLabel: "k", "app": "x"},
					Annotations: map[string]string{vocab.KAITopologyAnnotation: "t", vocab.KAIRequiredPlacementAnnotation: "r", vocab.KAIPreferredPlacementAnnotation: "p"},
				},
				Spec: corev1.PodSpec{SchedulerName: tc.sched},
			}
			require.NoError(t, Integration{}.Pod(scheduler.Profile{Kind: tc.kind, Queue: ptr.To("a"), NamesKAI: tc.namesKAI}, "w", tpl))
			require.Len(t, tpl.Annotations, tc.annots)
			require.Len(t, tpl.Labels, tc.labels)
			require.Equal(t, tc.sched, tpl.Spec.SchedulerName)
		})
	}
}

// fieldOf is the field of a *scheduler.FieldError, "" for nil.
func fieldOf(err error) string {
	if err == nil {
		return ""
	}
	fe, ok := errors.AsType[*scheduler.FieldError](err)
	if !ok {
		return fmt.Sprintf("not a *FieldError: %v", err)
	}
	return fe.Field
}

// Kueue's queue and priority class are scheduler.queue's keys unless KAI
// places the pods, where scheduler.kueue holds them.
func TestAdmissionKeys(t *testing.T) {
	top := scheduler.AdmissionKeys{Queue: "scheduler.queue", PriorityClass: "scheduler.workloadPriorityClass"}
	block := scheduler.AdmissionKeys{Queue: "scheduler.kueue.queue", PriorityClass: "scheduler.kueue.workloadPriorityClass"}
	alone, beside := top, block
	alone.Selected, beside.Beside = true, true
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		want scheduler.AdmissionKeys
	}{
		{"kueue alone", scheduler.Profile{Kind: Kind, Queue: ptr.To("lab")}, alone},
		{"kai with scheduler.kueue", scheduler.Profile{Kind: kaiKind, Queue: ptr.To("rl"), Kueue: &scheduler.KueueBeside{Queue: "lab"}}, beside},
		{"kai alone", scheduler.Profile{Kind: kaiKind, Queue: ptr.To("rl")}, block},
		{"default", scheduler.Profile{Kind: "default"}, top},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Integration{}.AdmissionKeys(tc.p))
		})
	}
}
