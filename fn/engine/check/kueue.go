package check

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// kueueAlone judges a profile that names Kueue alone (scheduler.kind
// kueue) against what its pod templates say. A template whose pods go to
// kai-scheduler by its own schedulerName is KAI placing beside Kueue, which
// the profile can say (kind kai with scheduler.kueue) and then have KAI's
// queue and run-wide topology written and checked: an info says so, once
// per cluster. Any other template loses its KAI topology annotations in the
// build (fn/engine/manifest/profilekeys.go applyScheduler), and, when no pod
// of the run goes to KAI, every kai.scheduler/queue label is dropped too
// (withoutKAIQueue): nothing reads them, and a warning for each says so.
func kueueAlone(ds *diag.List, f string, in *profile.Infra) {
	if in.Scheduler.Kind != "kueue" || in.Scheduler.Queue == nil {
		return
	}
	queue := *in.Scheduler.Queue
	fix := fmt.Sprintf("expected it removed, or scheduler: {kind: kai, queue: Q, kueue: {queue: %s}} to have KAI place the pods while Kueue admits them", queue)
	noKAI := !in.NamesKAIScheduler()
	dropped := func(field string, labels map[string]string) {
		if _, ok := labels[vocab.KAIQueueLabel]; ok && noKAI {
			ds.Warnf(f, field+"."+vocab.KAIQueueLabel, "is dropped from the rendered objects: scheduler.kind is kueue and no pod of the run goes to %s, so KAI never reads it (nor should preflight ask for that KAI Queue); %s", vocab.KAISchedulerName, fix)
		}
	}
	dropped("labels", in.Labels)
	for _, rc := range in.Kuberay.ByRole() {
		dropped("kuberay."+rc.Role+".labels", rc.Cluster.Labels)
		if rc.Cluster.Spec == nil {
			continue
		}
		base := "kuberay." + rc.Role + ".spec"
		fields := []string{base + ".headGroupSpec.template"}
		templates := []*corev1.PodTemplateSpec{&rc.Cluster.Spec.HeadGroupSpec.Template}
		for i := range rc.Cluster.Spec.WorkerGroupSpecs {
			fields = append(fields, fmt.Sprintf("%s.workerGroupSpecs[%d].template", base, i))
			templates = append(templates, &rc.Cluster.Spec.WorkerGroupSpecs[i].Template)
		}
		toldKAI := false
		for i, t := range templates {
			if t.Spec.SchedulerName == vocab.KAISchedulerName {
				if !toldKAI {
					toldKAI = true
					ds.Infof(f, fields[i]+".spec.schedulerName", "is %s while scheduler.kind is kueue: KAI places these pods and Kueue admits the run, which the profile can say as scheduler: {kind: kai, queue: <KAI queue>, kueue: {queue: %s}}, so that schedulerName, KAI's queue label and a run-wide scheduler.topology are written and checked from the profile", vocab.KAISchedulerName, queue)
				}
				continue
			}
			dropped(fields[i]+".metadata.labels", t.Labels)
			for _, k := range kai.TopologyKeys() {
				if _, ok := t.Annotations[k]; ok {
					ds.Warnf(f, fields[i]+".metadata.annotations."+k, "is dropped from the rendered pods: scheduler.kind is kueue and the pods go to %s, so KAI never reads it (Kueue admits the run and places no pod); %s", schedulerOf(&t.Spec), fix)
					break
				}
			}
		}
	}
	for _, k := range tree.SortedKeys(in.Deployments) {
		if d := in.Deployments[k]; d != nil {
			dropped("deployments."+k+".labels", d.Labels)
		}
	}
}
