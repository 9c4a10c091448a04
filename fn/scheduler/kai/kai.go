// Package kai is the KAI Scheduler integration (scheduler.kind: kai): the
// profile keys it owns (scheduler.queue as the kai.scheduler/queue label,
// scheduler.topology) and how it judges them. The names KAI reads and its
// gang model are fn/analyse/kai's.
package kai

import (
	"k8s.io/apimachinery/pkg/util/validation"

	analysekai "github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
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
			r.Errorf("scheduler.queue", "found %q; expected a queue name usable as the label value of kai.scheduler/queue: %s", *p.Queue, e)
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
				r.Errorf("kuberay."+rc.Role+".annotations."+key, "is set and so is scheduler.topology; expected one of them (scheduler.topology writes it)")
			}
		}
	}
}
