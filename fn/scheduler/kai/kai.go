// Package kai is the KAI Scheduler integration (scheduler.kind: kai): the
// profile keys it owns (scheduler.queue as the kai.scheduler/queue label,
// scheduler.topology), how it judges them, and what check says of the
// run's gangs (check.go). The names KAI reads are fn/core/vocab's; its gang
// model is fn/analyse/kai's.
package kai

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	analysekai "github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Kind is the scheduler.kind value that selects KAI.
const Kind = "kai"

// Integration is KAI's.
type Integration struct{}

// Kind is "kai".
func (Integration) Kind() string { return Kind }

// NeedsQueue: KAI places every pod through a queue.
func (Integration) NeedsQueue() bool { return true }

// Validate judges scheduler.topology (KAI's pod-grouper is what reads it:
// under another kind it is refused) and, under kind kai, the queue as the
// value of the kai.scheduler/queue label.
func (Integration) Validate(p scheduler.Profile, r scheduler.Reporter) {
	validateTopology(p, r)
	if p.QueueSet() && p.Kind == Kind {
		for _, e := range validation.IsValidLabelValue(*p.Queue) {
			r.Errorf("scheduler.queue", "found %q; expected a queue name usable as the label value of %s: %s", *p.Queue, vocab.KAIQueueLabel, e)
		}
	}
}

// validateTopology: scheduler.topology needs KAI, a topology and one
// placement level, and may not contradict annotations the clusters set.
func validateTopology(p scheduler.Profile, r scheduler.Reporter) {
	t := p.Topology
	if t == nil {
		return
	}
	if p.Kind != Kind {
		beside := ""
		if p.Kind == "kueue" {
			beside = "; with Kueue admitting, keep kind kai and name the LocalQueue in scheduler.kueue.queue"
		}
		r.Errorf("scheduler.topology", "is set but scheduler.kind is %q; expected kind kai (KAI's pod-grouper is what reads it)%s", p.Kind, beside)
	}
	if t.Topology == "" {
		r.Errorf("scheduler.topology.topology", "is empty; expected the KAI Topology's name (KAI refuses a placement without one)")
	}
	if (t.RequiredPlacement == "") == (t.PreferredPlacement == "") {
		r.Errorf("scheduler.topology", "expected exactly one of requiredPlacement and preferredPlacement")
	}
	for _, k := range []struct{ field, v string }{{"requiredPlacement", t.RequiredPlacement}, {"preferredPlacement", t.PreferredPlacement}} {
		if k.v == "" {
			continue
		}
		for _, e := range validation.IsQualifiedName(k.v) {
			r.Errorf("scheduler.topology."+k.field, "found %q; expected a node label key: %s", k.v, e)
		}
	}
	keys := analysekai.TopologyKeys()
	for _, key := range keys {
		if _, set := p.Annotations[key]; set {
			r.Errorf("annotations."+key, "is set and so is scheduler.topology; expected one of them (scheduler.topology writes it)")
		}
	}
	for _, rc := range p.Clusters {
		for _, key := range keys {
			if _, set := rc.Annotations[key]; set {
				r.Errorf("kuberay."+rc.Name+".annotations."+key, "is set and so is scheduler.topology; expected one of them (scheduler.topology writes it)")
			}
		}
	}
}

// ProfileLabels: under kind kai, the kai.scheduler/queue label among the
// profile's labels (every object and pod template, where KAI's pod grouper
// reads it); a queue label the profile writes otherwise is an error.
func (Integration) ProfileLabels(p scheduler.Profile) (map[string]string, []string, error) {
	if p.Kind != Kind || p.Queue == nil {
		return nil, nil, nil
	}
	q, key := *p.Queue, vocab.KAIQueueLabel
	if v, ok := p.Labels[key]; ok && v != q {
		return nil, nil, scheduler.Errorf("labels."+key, "is %q but scheduler.queue is %q; expected one queue (drop the label: scheduler.queue sets it)", v, q)
	}
	for _, rc := range p.Clusters {
		if v, ok := rc.Labels[key]; ok && v != q {
			return nil, nil, scheduler.Errorf("kuberay."+rc.Name+".labels."+key, "is %q but scheduler.queue is %q; expected one queue", v, q)
		}
	}
	for _, d := range p.Deployments {
		if v, ok := d.Labels[key]; ok && v != q {
			return nil, nil, scheduler.Errorf("deployments."+d.Name+".labels."+key, "is %q but scheduler.queue is %q; expected one queue", v, q)
		}
	}
	return map[string]string{key: q}, nil, nil
}

// OwnerLabels: KAI reads its queue from the profile's labels.
func (Integration) OwnerLabels(scheduler.Profile) map[string]string { return nil }

// OwnerManagedBy: KubeRay on the cluster the run is applied to.
func (Integration) OwnerManagedBy(scheduler.Profile) string { return "" }

// OwnerAnnotations are scheduler.topology as the annotations of the object
// KAI's pod-grouper makes the PodGroup for (the RayJob, or the RayCluster
// in raycluster mode): the PodGroup's own constraint, binding every pod of
// the gang (fn/analyse/kai). nil without one.
func (Integration) OwnerAnnotations(p scheduler.Profile) map[string]string {
	t := p.Topology
	if p.Kind != Kind || t == nil {
		return nil
	}
	out := map[string]string{vocab.KAITopologyAnnotation: t.Topology}
	if t.RequiredPlacement != "" {
		out[vocab.KAIRequiredPlacementAnnotation] = t.RequiredPlacement
	}
	if t.PreferredPlacement != "" {
		out[vocab.KAIPreferredPlacementAnnotation] = t.PreferredPlacement
	}
	return out
}

// Pod: under kind kai, schedulerName kai-scheduler on a pod that names no
// scheduler; another scheduler's name, or another queue on the pod, is an
// error.
func (Integration) Pod(p scheduler.Profile, field string, t *corev1.PodTemplateSpec) error {
	if p.Kind != Kind {
		return nil
	}
	switch t.Spec.SchedulerName {
	case "":
		t.Spec.SchedulerName = vocab.KAISchedulerName
	case vocab.KAISchedulerName:
	default:
		return scheduler.Errorf(field+".spec.schedulerName", "is %q but scheduler.kind is kai; expected %s or no schedulerName", t.Spec.SchedulerName, vocab.KAISchedulerName)
	}
	if p.Queue != nil {
		if v, ok := t.Labels[vocab.KAIQueueLabel]; ok && v != *p.Queue {
			return scheduler.Errorf(field+".metadata.labels."+vocab.KAIQueueLabel, "is %q but scheduler.queue is %q; expected one queue", v, *p.Queue)
		}
	}
	return nil
}

// CheckProfile: nothing of the profile's own beyond Validate.
func (Integration) CheckProfile(string, scheduler.Profile) diag.List { return nil }
