package kueue

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// findings is each diagnostic as "severity field".
func findings(ds diag.List) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Severity)+" "+d.Field)
	}
	return out
}

// Under Kueue alone, KAI's labels and annotations that nothing reads are
// warned about where they are dropped; a template on KAI gets one info per
// cluster instead.
func TestCheckProfile(t *testing.T) {
	kaiQ := map[string]string{vocab.KAIQueueLabel: "k"}
	pod := func(sched string, labels, annots map[string]string) scheduler.Template {
		return scheduler.Template{Field: "kuberay.gym.head", Pod: &corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annots},
			Spec:       corev1.PodSpec{SchedulerName: sched},
		}}
	}
	topo := map[string]string{vocab.KAIRequiredPlacementAnnotation: "r", vocab.KAITopologyAnnotation: "t"}
	for _, tc := range []struct {
		name string
		p    scheduler.Profile
		want []string
	}{
		{"no queue", scheduler.Profile{Kind: Kind, Labels: kaiQ}, nil},
		{"kai", scheduler.Profile{Kind: kaiKind, Queue: ptr.To("a"), Labels: kaiQ}, nil},
		{"every label set", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Labels: kaiQ,
			Clusters:    []scheduler.Part{{Name: "gym", Labels: kaiQ, Templates: []scheduler.Template{pod("", kaiQ, nil)}}},
			Deployments: []scheduler.Part{{Name: "d", Labels: kaiQ}}},
			[]string{"warning labels." + vocab.KAIQueueLabel, "warning kuberay.gym.labels." + vocab.KAIQueueLabel,
				"warning kuberay.gym.head.metadata.labels." + vocab.KAIQueueLabel, "warning deployments.d.labels." + vocab.KAIQueueLabel}},
		{"labels kept when a pod names KAI", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), Labels: kaiQ, NamesKAI: true,
			Clusters: []scheduler.Part{{Name: "gym", Templates: []scheduler.Template{pod("", kaiQ, nil)}}}}, nil},
		{"topology, one warning per template", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"),
			Clusters: []scheduler.Part{{Name: "gym", Templates: []scheduler.Template{pod("volcano", nil, topo)}}}},
			[]string{"warning kuberay.gym.head.metadata.annotations." + vocab.KAITopologyAnnotation}},
		{"KAI templates, one info per cluster", scheduler.Profile{Kind: Kind, Queue: ptr.To("a"), NamesKAI: true,
			Clusters: []scheduler.Part{{Name: "gym", Templates: []scheduler.Template{pod(vocab.KAISchedulerName, kaiQ, topo), pod(vocab.KAISchedulerName, nil, topo)}}}},
			[]string{"info kuberay.gym.head.spec.schedulerName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, findings(Integration{}.CheckProfile("p.yaml", tc.p)))
		})
	}
}
