package kai

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

var (
	clique = &scheduler.Topology{Topology: "t", RequiredPlacement: "nvidia.com/gpu.clique"}
	topoAt = map[string]string{vocab.KAITopologyAnnotation: "t"}
)

// scheduler.topology is KAI's under every kind, the queue a label value
// only under kind kai.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		want []string
	}{
		{"kai, label-safe queue", scheduler.Profile{Kind: Kind, Queue: ptr.To("team-a")}, nil},
		{"kai, queue no label value", scheduler.Profile{Kind: Kind, Queue: ptr.To("team a")}, []string{"scheduler.queue"}},
		{"kueue, queue no label value", scheduler.Profile{Kind: "kueue", Queue: ptr.To("team a")}, nil},
		{"kai, required placement", scheduler.Profile{Kind: Kind, Topology: clique}, nil},
		{"kueue, topology", scheduler.Profile{Kind: "kueue", Topology: clique}, []string{"scheduler.topology"}},
		{"no topology name", scheduler.Profile{Kind: Kind, Topology: &scheduler.Topology{PreferredPlacement: "rack"}}, []string{"scheduler.topology.topology"}},
		{"no placement", scheduler.Profile{Kind: Kind, Topology: &scheduler.Topology{Topology: "t"}}, []string{"scheduler.topology"}},
		{"both placements", scheduler.Profile{Kind: Kind, Topology: &scheduler.Topology{Topology: "t", RequiredPlacement: "a", PreferredPlacement: "b"}}, []string{"scheduler.topology"}},
		{"placement no label key", scheduler.Profile{Kind: Kind, Topology: &scheduler.Topology{Topology: "t", PreferredPlacement: "a b"}}, []string{"scheduler.topology.preferredPlacement"}},
		{"profile annotation beside", scheduler.Profile{Kind: Kind, Topology: clique, Annotations: topoAt}, []string{"annotations." + vocab.KAITopologyAnnotation}},
		{"cluster annotation beside", scheduler.Profile{Kind: Kind, Topology: clique, Clusters: []scheduler.Part{{Name: "training", Annotations: topoAt}}},
			[]string{"kuberay.training.annotations." + vocab.KAITopologyAnnotation}},
		{"annotation, no topology", scheduler.Profile{Kind: Kind, Annotations: topoAt}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got fields
			Integration{}.Validate(tc.p, &got)
			require.Equal(t, fields(tc.want), got)
		})
	}
}

// Under kind kai the queue joins the profile's labels; a label naming
// another queue is the error at its field.
func TestProfileLabels(t *testing.T) {
	other := map[string]string{vocab.KAIQueueLabel: "b"}
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		set  map[string]string
		err  string
	}{
		{"kai", scheduler.Profile{Kind: Kind, Queue: ptr.To("a")}, map[string]string{vocab.KAIQueueLabel: "a"}, ""},
		{"kai, same label", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Labels: map[string]string{vocab.KAIQueueLabel: "a"}}, map[string]string{vocab.KAIQueueLabel: "a"}, ""},
		{"kai, no queue", scheduler.Profile{Kind: Kind}, nil, ""},
		{"kueue", scheduler.Profile{Kind: "kueue", Queue: ptr.To("a"), Labels: other}, nil, ""},
		{"profile label", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Labels: other}, nil, "labels." + vocab.KAIQueueLabel},
		{"cluster label", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Clusters: []scheduler.Part{{Name: "gym", Labels: other}}}, nil, "kuberay.gym.labels." + vocab.KAIQueueLabel},
		{"deployment label", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Deployments: []scheduler.Part{{Name: "d", Labels: other}}}, nil, "deployments.d.labels." + vocab.KAIQueueLabel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, drop, err := Integration{}.ProfileLabels(tc.p)
			require.Equal(t, tc.set, set)
			require.Nil(t, drop)
			require.Equal(t, tc.err, fieldOf(err))
		})
	}
}

// scheduler.topology goes on the owner under kind kai only, with the one
// placement level it names.
func TestOwnerAnnotations(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		want map[string]string
	}{
		{"required", scheduler.Profile{Kind: Kind, Topology: clique},
			map[string]string{vocab.KAITopologyAnnotation: "t", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}},
		{"preferred", scheduler.Profile{Kind: Kind, Topology: &scheduler.Topology{Topology: "t", PreferredPlacement: "rack"}},
			map[string]string{vocab.KAITopologyAnnotation: "t", vocab.KAIPreferredPlacementAnnotation: "rack"}},
		{"no topology", scheduler.Profile{Kind: Kind}, nil},
		{"kueue", scheduler.Profile{Kind: "kueue", Topology: clique}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Integration{}.OwnerAnnotations(tc.p))
			require.Nil(t, Integration{}.OwnerLabels(tc.p))
		})
	}
}

// Under kind kai a pod naming no scheduler goes to kai-scheduler; another
// scheduler or another queue on the pod is refused.
func TestPod(t *testing.T) {
	for _, tc := range []struct {
		name, kind, sched, label, want, err string
	}{
		{"unnamed", Kind, "", "", vocab.KAISchedulerName, ""},
		{"named kai", Kind, vocab.KAISchedulerName, "a", vocab.KAISchedulerName, ""},
		{"another scheduler", Kind, "volcano", "", "volcano", "w.spec.schedulerName"},
		{"another queue", Kind, "", "b", vocab.KAISchedulerName, "w.metadata.labels." + vocab.KAIQueueLabel},
		{"kueue leaves it", "kueue", "", "b", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tpl := &corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: tc.sched}}
			if tc.label != "" {
				tpl.ObjectMeta = metav1.ObjectMeta{Labels: map[string]string{vocab.KAIQueueLabel: tc.label}}
			}
			err := Integration{}.Pod(scheduler.Profile{Kind: tc.kind, Queue: ptr.To("a")}, "w", tpl)
			require.Equal(t, tc.err, fieldOf(err))
			require.Equal(t, tc.want, tpl.Spec.SchedulerName)
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
