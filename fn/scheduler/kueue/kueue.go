// Package kueue is the Kueue integration (scheduler.kind: kueue, or
// scheduler.kueue beside kind kai): the profile keys it owns
// (scheduler.queue under kind kueue, scheduler.workloadPriorityClass,
// scheduler.dispatch, scheduler.kueue), which of them name Kueue's
// admission, and how it judges them; and what Kueue does with a run's
// Workload: the flavors it admits a pod set on (Admit) and whom it
// preempts to admit it (Predict); and what preflight reads of Kueue (a
// LocalQueue's quota, its flavors, the Workloads it may preempt). The
// labels Kueue reads are fn/core/vocab's.
package kueue

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/kai"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// Kind is the scheduler.kind value that selects Kueue alone (Kueue admits,
// the default scheduler places).
const Kind = "kueue"

// kaiKind is the kind Kueue admits beside (scheduler.kueue).
const kaiKind = "kai"

// Integration is Kueue's.
type Integration struct{}

// Kind is "kueue".
func (Integration) Kind() string { return Kind }

// NeedsQueue: Kueue admits through a LocalQueue.
func (Integration) NeedsQueue() bool { return true }

// Admission is Kueue's part of the scheduler, whichever way the profile
// says it: kind kueue with queue (Kueue alone), or kind kai with kueue
// (Kueue admits, KAI places). ok is false when Kueue admits nothing.
func Admission(p scheduler.Profile) (queue string, priority *string, ok bool) {
	switch {
	case p.Kind == Kind && p.QueueSet():
		return *p.Queue, p.WorkloadPriorityClass, true
	case p.Kind == kaiKind && p.Kueue != nil && p.Kueue.Queue != "":
		return p.Kueue.Queue, p.Kueue.WorkloadPriorityClass, true
	}
	return "", nil, false
}

// AdmissionKeys: scheduler.queue and scheduler.workloadPriorityClass for
// Kueue alone, scheduler.kueue's keys under kind kai (Beside once the
// profile has scheduler.kueue: Kueue admits, KAI places).
func (Integration) AdmissionKeys(p scheduler.Profile) scheduler.AdmissionKeys {
	if p.Kind == kaiKind {
		return scheduler.AdmissionKeys{Queue: "scheduler.kueue.queue", PriorityClass: "scheduler.kueue.workloadPriorityClass", Beside: p.Kueue != nil}
	}
	return scheduler.AdmissionKeys{Queue: "scheduler.queue", PriorityClass: "scheduler.workloadPriorityClass", Selected: p.Kind == Kind}
}

// DispatchMultiKueue is the dispatch value that has Kueue's MultiKueue
// copy the admitted object to a worker cluster.
const DispatchMultiKueue = "multikueue"

// DispatchModes are the values dispatch accepts.
var DispatchModes = []string{DispatchMultiKueue}

// Dispatch is how the object Kueue admits reaches a cluster and the key
// that says it. The key sits beside the LocalQueue it goes with, as the
// priority class does (scheduler.dispatch under kind kueue,
// scheduler.kueue.dispatch beside KAI): the queue decides whether the run
// is dispatched, and a string leaves room for another dispatcher. nil:
// the run stays on the cluster it is applied to.
func Dispatch(p scheduler.Profile) (value *string, field string) {
	if p.Kind == kaiKind {
		var d *string
		if p.Kueue != nil {
			d = p.Kueue.Dispatch
		}
		return d, "scheduler.kueue.dispatch"
	}
	return p.Dispatch, "scheduler.dispatch"
}

// MultiKueue reports whether Kueue admits the run and MultiKueue
// dispatches it.
func MultiKueue(p scheduler.Profile) bool {
	d, _ := Dispatch(p)
	_, _, ok := Admission(p)
	return ok && d != nil && *d == DispatchMultiKueue
}

// Validate: a Kueue run names a LocalQueue (a DNS-1123 subdomain, as
// Kueue's own validation of the kueue.x-k8s.io/queue-name label requires),
// never starts suspended by the profile's hand (Kueue's webhook suspends it
// on creation; a suspend written in Git re-suspends an admitted run on the
// next apply, and KubeRay then deletes its cluster). Kueue is named one way
// only: kind kueue with queue when it admits and the default scheduler
// places, kind kai with kueue when KAI places. What Kueue's webhooks refuse
// in the built objects is judged by CheckObjects (check.go).
func (Integration) Validate(p scheduler.Profile, r scheduler.Reporter) {
	if p.WorkloadPriorityClass != nil && p.Kind != Kind {
		hint := "expected kind kueue (a WorkloadPriorityClass is Kueue's; use scheduler.priorityClassName for the pods' PriorityClass)"
		if p.Kind == kaiKind {
			hint = "expected scheduler.kueue.workloadPriorityClass beside KAI (Kueue admits, KAI places), or scheduler.priorityClassName for the pods' PriorityClass"
		}
		r.Errorf("scheduler.workloadPriorityClass", "is set but scheduler.kind is %q; %s", p.Kind, hint)
	}
	if p.Kueue != nil && p.Kind != kaiKind {
		r.Errorf("scheduler.kueue", "is set but scheduler.kind is %q; expected kind kai (scheduler.kueue is Kueue's admission beside KAI's placement); for Kueue alone write scheduler: {kind: kueue, queue: Q}", p.Kind)
	}
	if p.Kueue != nil && p.Kind == kaiKind && p.Kueue.Queue == "" {
		r.Errorf("scheduler.kueue.queue", "is empty; expected the LocalQueue in the run's namespace that admits the run")
	}
	if p.Dispatch != nil && p.Kind != Kind {
		r.Errorf("scheduler.dispatch", "is set but scheduler.kind is %q; expected kind kueue with a queue (dispatch is how Kueue's admitted object reaches a cluster), or scheduler.kueue.dispatch beside KAI", p.Kind)
	}
	queue, pc, ok := Admission(p)
	if !ok {
		return
	}
	if d, field := Dispatch(p); d != nil && *d != DispatchMultiKueue {
		r.Errorf(field, "found %q; expected %s (Kueue's MultiKueue copies the admitted RayJob or RayCluster to a worker cluster), or unset to run on the cluster it is applied to", *d, DispatchMultiKueue)
	}
	keys := Integration{}.AdmissionKeys(p)
	for _, e := range validation.IsDNS1123Subdomain(queue) {
		r.Errorf(keys.Queue, "found %q; expected a LocalQueue name (DNS-1123 subdomain, the value of the %s label): %s", queue, vocab.KueueQueueLabel, e)
	}
	if pc != nil {
		for _, e := range validation.IsDNS1123Subdomain(*pc) {
			r.Errorf(keys.PriorityClass, "found %q; expected a WorkloadPriorityClass name (DNS-1123 subdomain): %s", *pc, e)
		}
	}
	if p.Suspend {
		why := "scheduler.kind is kueue"
		if p.Kind == kaiKind {
			why = "scheduler.kueue is set (Kueue admits the run)"
		}
		r.Errorf("launch.rayjob.suspend", "is true but %s; expected false (unset): Kueue's webhook suspends the RayJob when it is created and unsuspends it on admission, while a suspend: true kept in Git sets spec.suspend again on every later apply of the same manifests, and KubeRay then deletes the admitted run's cluster", why)
	}
}

// ProfileLabels: Kueue's labels written by hand beside a profile that names
// Kueue are refused (profile and cluster labels reach every object and pod
// template, while Kueue must see them on the admitted object only). Under
// Kueue alone with no pod on KAI's scheduler, KAI's queue label is dropped
// from every label set: nothing reads it, and preflight would ask for a
// KAI Queue the run never uses (check warns about each one dropped).
func (Integration) ProfileLabels(p scheduler.Profile) (map[string]string, []string, error) {
	if _, _, ok := Admission(p); ok {
		why, keys := "scheduler.kind is kueue", "scheduler.queue and scheduler.workloadPriorityClass put"
		if p.Kind == kaiKind {
			why, keys = "scheduler.kueue is set", "scheduler.kueue.queue and .workloadPriorityClass put"
		}
		for _, k := range []string{vocab.KueueQueueLabel, vocab.KueuePriorityClassLabel} {
			if _, ok := p.Labels[k]; ok {
				return nil, nil, scheduler.Errorf("labels."+k, "is set but %s; expected it unset: %s it on the RayJob (or RayCluster) alone, while labels reach every object and pod template", why, keys)
			}
			for _, rc := range p.Clusters {
				if _, ok := rc.Labels[k]; ok {
					return nil, nil, scheduler.Errorf("kuberay."+rc.Name+".labels."+k, "is set but %s; expected it unset: %s it on the RayJob (or RayCluster) alone, while kuberay.%s.labels reach its pod templates and ConfigMaps too", why, keys, rc.Name)
				}
			}
		}
	}
	if p.Kind == Kind && !p.NamesKAI {
		return nil, []string{vocab.KAIQueueLabel}, nil
	}
	return nil, nil, nil
}

// OwnerLabels are the labels of the object Kueue admits (the RayJob, or
// each RayCluster in raycluster mode): the queue name and the workload
// priority class. nil unless the profile names Kueue.
func (Integration) OwnerLabels(p scheduler.Profile) map[string]string {
	q, pc, ok := Admission(p)
	if !ok {
		return nil
	}
	out := map[string]string{vocab.KueueQueueLabel: q}
	if pc != nil {
		out[vocab.KueuePriorityClassLabel] = *pc
	}
	return out
}

// OwnerManagedBy: MultiKueue's controller name when the profile
// dispatches the run (KubeRay v1.5.0 then leaves the RayJob or RayCluster
// on the manager to MultiKueue).
func (Integration) OwnerManagedBy(p scheduler.Profile) string {
	if MultiKueue(p) {
		return vocab.MultiKueueControllerName
	}
	return ""
}

// OwnerAnnotations: Kueue reads none of ours.
func (Integration) OwnerAnnotations(scheduler.Profile) map[string]string { return nil }

// Pod: under Kueue alone a pod that KAI does not place keeps none of KAI's
// topology annotations (nothing reads them, and a reader would take them
// for a constraint: check warns about each one dropped, and about a
// ComputeDomain that nothing keeps in one NVLink domain), nor its
// kai.scheduler/queue label when no pod of the run goes to KAI.
// schedulerName and spec.suspend are left alone (Kueue's webhook suspends
// on creation).
func (Integration) Pod(p scheduler.Profile, _ string, t *corev1.PodTemplateSpec) error {
	if p.Kind != Kind || t.Spec.SchedulerName == vocab.KAISchedulerName {
		return nil
	}
	for _, k := range kai.TopologyKeys() {
		delete(t.Annotations, k)
	}
	if !p.NamesKAI {
		delete(t.Labels, vocab.KAIQueueLabel)
	}
	return nil
}
