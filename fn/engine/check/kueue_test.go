package check

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
)

// Under kind kueue alone: KAI's queue labels are dropped (a warning each)
// unless some pod goes to KAI, a pod KAI places is told once per cluster,
// and another pod's KAI topology annotations are dropped (a warning).
func TestKueueAlone(t *testing.T) {
	const kueue = "scheduler: {kind: kueue, queue: lq}\n"
	const q = "kai.scheduler/queue"
	const w = "kuberay.training.spec.workerGroupSpecs"
	for _, tc := range []struct {
		name, profile string
		want          []string
	}{
		{"no KAI keys", kueue + "labels: {team: a}", nil},
		{"not kueue", "scheduler: {kind: kai, queue: q}\nlabels: {kai.scheduler/queue: q}", nil},
		{"kueue without a queue", "scheduler: {kind: kueue}\nlabels: {kai.scheduler/queue: q}", nil},
		{"queue labels everywhere", kueue + "labels: {kai.scheduler/queue: q}\ndeployments: {d: {labels: {kai.scheduler/queue: q}}}\n" +
			"kuberay: {training: {labels: {kai.scheduler/queue: q}, spec: {workerGroupSpecs: [{groupName: g, template: {metadata: {labels: {kai.scheduler/queue: q}}}}]}}}",
			[]string{"warning p.yaml labels." + q, "warning p.yaml kuberay.training.labels." + q,
				"warning p.yaml " + w + "[0].template.metadata.labels." + q, "warning p.yaml deployments.d.labels." + q}},
		{"a pod goes to KAI: labels kept, told once", kueue + "labels: {kai.scheduler/queue: q}\n" +
			"kuberay: {training: {spec: {workerGroupSpecs: [{groupName: a, template: {spec: {schedulerName: kai-scheduler}}}, {groupName: b, template: {spec: {schedulerName: kai-scheduler}}}]}}}",
			[]string{"info p.yaml " + w + "[0].template.spec.schedulerName"}},
		{"topology annotations, once per pod", kueue +
			"kuberay: {training: {spec: {workerGroupSpecs: [{groupName: g, template: {metadata: {annotations: {kai.scheduler/topology: t, kai.scheduler/topology-required-placement: r}}}}]}}}",
			[]string{"warning p.yaml " + w + "[0].template.metadata.annotations.kai.scheduler/topology"}},
		{"topology annotations on a KAI pod", kueue +
			"kuberay: {training: {spec: {workerGroupSpecs: [{groupName: g, template: {metadata: {annotations: {kai.scheduler/topology: t}}, spec: {schedulerName: kai-scheduler}}}]}}}",
			[]string{"info p.yaml " + w + "[0].template.spec.schedulerName"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := registry.CheckProfile("p.yaml", infraOf(t, tc.profile).SchedulerView())
			require.Equal(t, tc.want, found(ds), "%v", ds)
		})
	}
}
