package kueue

import (
	"fmt"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// CheckProfile judges a profile that names Kueue alone (scheduler.kind
// kueue) against what its pod templates say. A template whose pods go to
// kai-scheduler by its own schedulerName is KAI placing beside Kueue, which
// the profile can say (kind kai with scheduler.kueue) and then have KAI's
// queue and run-wide topology written and checked: an info says so, once
// per cluster. Any other template loses its KAI topology annotations in the
// build (Pod), and, when no pod of the run goes to KAI, every
// kai.scheduler/queue label is dropped too (ProfileLabels): nothing reads
// them, and a warning for each says so.
func (Integration) CheckProfile(f string, p scheduler.Profile) diag.List {
	if p.Kind != Kind || p.Queue == nil {
		return nil
	}
	var ds diag.List
	queue := *p.Queue
	fix := fmt.Sprintf("expected it removed, or scheduler: {kind: kai, queue: Q, kueue: {queue: %s}} to have KAI place the pods while Kueue admits them", queue)
	dropped := func(field string, labels map[string]string) {
		if _, ok := labels[vocab.KAIQueueLabel]; ok && !p.NamesKAI {
			ds.Warnf(f, field+"."+vocab.KAIQueueLabel, "is dropped from the rendered objects: scheduler.kind is kueue and no pod of the run goes to %s, so KAI never reads it (nor should preflight ask for that KAI Queue); %s", vocab.KAISchedulerName, fix)
		}
	}
	dropped("labels", p.Labels)
	for _, rc := range p.Clusters {
		dropped("kuberay."+rc.Name+".labels", rc.Labels)
		toldKAI := false
		for _, t := range rc.Templates {
			if t.Pod.Spec.SchedulerName == vocab.KAISchedulerName {
				if !toldKAI {
					toldKAI = true
					ds.Infof(f, t.Field+".spec.schedulerName", "is %s while scheduler.kind is kueue: KAI places these pods and Kueue admits the run, which the profile can say as scheduler: {kind: kai, queue: <KAI queue>, kueue: {queue: %s}}, so that schedulerName, KAI's queue label and a run-wide scheduler.topology are written and checked from the profile", vocab.KAISchedulerName, queue)
				}
				continue
			}
			dropped(t.Field+".metadata.labels", t.Pod.Labels)
			for _, k := range kai.TopologyKeys() {
				if _, ok := t.Pod.Annotations[k]; ok {
					ds.Warnf(f, t.Field+".metadata.annotations."+k, "is dropped from the rendered pods: scheduler.kind is kueue and the pods go to %s, so KAI never reads it (Kueue admits the run and places no pod); %s", scheduler.NameOf(&t.Pod.Spec), fix)
					break
				}
			}
		}
	}
	for _, d := range p.Deployments {
		dropped("deployments."+d.Name+".labels", d.Labels)
	}
	return ds
}
