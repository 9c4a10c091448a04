package kueue

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// queuedUntil is the verdict when nothing frees quota for the run but
// Workloads finishing.
const queuedUntil = "queued until other Workloads finish"

// admission is what Kueue does with a run the ClusterQueue's free quota
// does not hold (Predict, Kueue's classical preemption): admit
// it by borrowing from the cohort, by preempting named Workloads, or leave
// it queued, behind the pending Workloads of its LocalQueue it does not
// outrank (waits: the run is left queued). It reads the run's WorkloadPriorityClass, the cohort's
// ClusterQueues and every Workload (their spec.priority and usage).
func admission(ctx context.Context, c scheduler.Reader, in scheduler.PreflightRun, l scheduler.Line, cq *unstructured.Unstructured, cohort string, need corev1.ResourceList) (string, bool, error) {
	prio, why, err := runPriority(ctx, c, in, l)
	if why != "" || err != nil {
		return queuedUntil + " (cannot tell whether Kueue preempts: " + why + ")", true, passStops(c, err)
	}
	queues := []*unstructured.Unstructured{cq}
	if cohort != "" {
		all, out, err := c.List(ctx, ClusterQueues, "", "")
		if out != scheduler.Found {
			return queuedUntil + " (cannot tell whether Kueue preempts: " + scheduler.ReadFailure("the cohort's ClusterQueues", out, err) + ")", true, passStops(c, err)
		}
		queues = queues[:0]
		for i := range all {
			if cohortOf(&all[i]) == cohort {
				queues = append(queues, &all[i])
			}
		}
	}
	wls, out, err := c.List(ctx, Workloads, "", "")
	if out != scheduler.Found && (out != scheduler.NotFound || err != nil) {
		return queuedUntil + " (cannot tell whether Kueue preempts: " + scheduler.ReadFailure("Workloads", out, err) + ")", true, passStops(c, err)
	}
	co, pending := cohortOfWorkloads(queues, wls, l, in.Queues)
	p := Predict(co, cq.GetName(), prio, milli(need))
	switch {
	case len(p.Preempt) > 0:
		return "admitted now by preempting " + names(p.Preempt), false, nil
	case p.Admitted && p.Borrowing:
		return "admitted now by borrowing from cohort " + cohort, false, nil
	case p.Admitted:
		return "admitted now", false, nil
	}
	var ahead []QueuedWorkload
	for _, w := range pending {
		if w.Priority >= prio {
			ahead = append(ahead, w)
		}
	}
	if len(ahead) > 0 {
		return "queued behind " + names(ahead), true, nil
	}
	return queuedUntil, true, nil
}

// runPriority is the value of the WorkloadPriorityClass the run's objects
// queued in l name (0 without one, as Kueue defaults it; a pod
// PriorityClass Kueue would fall back to is not read).
func runPriority(ctx context.Context, c scheduler.Reader, in scheduler.PreflightRun, l scheduler.Line) (int32, string, error) {
	class := ""
	for _, key := range tree.SortedKeys(in.Queues) {
		if in.Queues[key] == l.Name && strings.HasPrefix(key, l.Namespace+"/") && in.Priorities[key] != "" {
			class = in.Priorities[key]
		}
	}
	if class == "" {
		return 0, "", nil
	}
	u, out, err := c.Get(ctx, WorkloadPriorityClasses, "", class)
	if out != scheduler.Found {
		return 0, scheduler.ReadFailure("WorkloadPriorityClass "+class, out, err), err
	}
	v, ok := scheduler.Int32Of(u.Object["value"])
	if !ok {
		return 0, "WorkloadPriorityClass " + class + "'s value is not a 32-bit integer", nil
	}
	return v, "", nil
}

func cohortOf(cq *unstructured.Unstructured) string {
	cohort, _, _ := unstructured.NestedString(cq.Object, "spec", "cohortName")
	if cohort == "" {
		cohort, _, _ = unstructured.NestedString(cq.Object, "spec", "cohort")
	}
	return cohort
}

// cohortOfWorkloads is the ClusterQueues as the model weighs them, the
// Workloads holding their quota (QuotaReserved and not finished), and the
// Workloads pending in l's LocalQueue. The run's own Workloads (it was
// applied already) are no candidates: Kueue never preempts a Workload for
// itself.
func cohortOfWorkloads(queues []*unstructured.Unstructured, wls []unstructured.Unstructured, l scheduler.Line, own map[string]string) (Cohort, []QueuedWorkload) {
	var co Cohort
	in := map[string]bool{}
	for _, q := range queues {
		in[q.GetName()] = true
		co.Queues = append(co.Queues, modelQueue(q))
	}
	var pending []QueuedWorkload
	for i := range wls {
		w := &wls[i]
		if hasCondition(w, "Finished") || ownedBy(w, own) {
			continue
		}
		qw := modelWorkload(w, l.Namespace)
		switch {
		case hasCondition(w, "QuotaReserved") && in[qw.ClusterQueue]:
			co.Admitted = append(co.Admitted, qw)
		case !hasCondition(w, "QuotaReserved") && w.GetNamespace() == l.Namespace && nestedString(w, "spec", "queueName") == l.Name:
			pending = append(pending, qw)
		}
	}
	sort.SliceStable(pending, func(i, j int) bool { return pending[i].Priority > pending[j].Priority })
	return co, pending
}

func modelQueue(q *unstructured.Unstructured) ClusterQueue {
	out := ClusterQueue{Name: q.GetName(), Nominal: map[corev1.ResourceName]int64{}, BorrowingLimit: map[corev1.ResourceName]int64{}, Reserved: map[corev1.ResourceName]int64{}}
	for name, fq := range readQuota(q) {
		out.Nominal[name] = fq.nominal.MilliValue()
		out.Reserved[name] = fq.reserved.MilliValue()
		if fq.limited {
			out.BorrowingLimit[name] = fq.borrowing.MilliValue()
		}
	}
	p := func(f ...string) string { return nestedString(q, append([]string{"spec", "preemption"}, f...)...) }
	out.Preemption = Preemption{WithinClusterQueue: p("withinClusterQueue"), ReclaimWithinCohort: p("reclaimWithinCohort"), BorrowWithinCohort: p("borrowWithinCohort", "policy")}
	t, _, _ := unstructured.NestedFieldNoCopy(q.Object, "spec", "preemption", "borrowWithinCohort", "maxPriorityThreshold")
	if t32, ok := scheduler.Int32Of(t); ok {
		out.Preemption.MaxPriorityThreshold = &t32
	}
	return out
}

// modelWorkload is a Workload as the preemptor weighs it, named by the
// object it admits (its namespace too when not the run's).
func modelWorkload(w *unstructured.Unstructured, ns string) QueuedWorkload {
	name := "Workload " + w.GetName()
	if refs := w.GetOwnerReferences(); len(refs) > 0 {
		name = refs[0].Kind + " " + refs[0].Name
	}
	if w.GetNamespace() != ns {
		name = strings.Replace(name, " ", " "+w.GetNamespace()+"/", 1)
	}
	out := QueuedWorkload{Name: name, ClusterQueue: nestedString(w, "status", "admission", "clusterQueue"), Created: w.GetCreationTimestamp().Time, UID: string(w.GetUID()), Usage: map[corev1.ResourceName]int64{}}
	p, _, _ := unstructured.NestedFieldNoCopy(w.Object, "spec", "priority")
	out.Priority, _ = scheduler.Int32Of(p) // Kueue's default: 0
	out.Evicted = hasCondition(w, "Evicted")
	out.Reserved = conditionTime(w, "QuotaReserved")
	sets, _, _ := unstructured.NestedSlice(w.Object, "status", "admission", "podSetAssignments")
	for _, s := range sets {
		sm, _ := s.(map[string]any)
		usage, _ := sm["resourceUsage"].(map[string]any)
		for r, v := range usage {
			if q, err := quantityOf(v); err == nil {
				out.Usage[corev1.ResourceName(r)] += q.MilliValue()
			}
		}
	}
	return out
}

// ownedBy: w is the Workload of one of the input's objects (keyed
// "namespace/Kind/name").
func ownedBy(w *unstructured.Unstructured, objs map[string]string) bool {
	for _, r := range w.GetOwnerReferences() {
		if _, ok := objs[w.GetNamespace()+"/"+r.Kind+"/"+r.Name]; ok {
			return true
		}
	}
	return false
}

// int32Of reads a priority: an integer that fits int32, as Kueue's are.
func hasCondition(w *unstructured.Unstructured, typ string) bool {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return m["status"] == "True"
		}
	}
	return false
}

func conditionTime(w *unstructured.Unstructured, typ string) time.Time {
	conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if s, _ := m["lastTransitionTime"].(string); m["type"] == typ {
			t, _ := time.Parse(time.RFC3339, s)
			return t
		}
	}
	return time.Time{}
}

func nestedString(u *unstructured.Unstructured, f ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, f...)
	return s
}

// names lists Workloads as a report says them: "RayJob low (priority 10)".
func names(ws []QueuedWorkload) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = fmt.Sprintf("%s (priority %d)", w.Name, w.Priority)
	}
	return strings.Join(out, ", ")
}

// milli is a resource list in milli-units, as the model counts.
func milli(l corev1.ResourceList) map[corev1.ResourceName]int64 {
	out := map[corev1.ResourceName]int64{}
	for n, q := range l {
		out[n] = q.MilliValue()
	}
	return out
}
