package review

import (
	"fmt"
	"sort"
	"strings"
)

// What a priority class change means for who is preempted, said from the
// repository alone (the review reads no cluster: the classes' values and
// what runs now are nrl-k8s preflight's to read). Kueue (v0.17.0
// pkg/scheduler/preemption): a higher WorkloadPriorityClass lets the run
// preempt lower-priority Workloads of its ClusterQueue, and of its cohort
// when reclaiming or borrowing, as the ClusterQueue's spec.preemption
// allows. KAI (KAI-Scheduler d5bc503a pkg/scheduler/actions/preempt and
// reclaim): a higher pod priorityClassName lets the run preempt running
// lower-priority gangs of its own queue; reclaim between queues goes by
// quota, not priority; from 100 up the run is non-preemptible
// (pkg/common/podgroup/preemptible.go), held within its queue's deserved
// quota.

// preemptionLines says, per priority class change of the run, what the
// class changes and which runs of the repository share its queue (their
// class as they are now).
func preemptionLines(name string, changes []FieldChange, cur Render) []string {
	var out []string
	for _, c := range changes {
		ref, field, ok := cutField(c.Key)
		if !ok || c.After == "" {
			continue
		}
		run := cur[name]
		if run == nil {
			continue
		}
		switch field {
		case "kueue priority-class":
			q := run.Scheduling[ref+" kueue queue"]
			out = append(out, fmt.Sprintf("%s: WorkloadPriorityClass %s → %s: if %s's value is the higher, Kueue may preempt lower-priority Workloads of LocalQueue %s's ClusterQueue, and of its cohort when reclaiming or borrowing, as the ClusterQueue's spec.preemption allows (nrl-k8s preflight names them from the cluster)%s",
				ref, orNone(c.Before), c.After, c.After, orNone(q), sharing(name, cur, "kueue queue", q, "kueue priority-class")))
		case "priority-class":
			q := run.Scheduling[ref+" queue"]
			out = append(out, fmt.Sprintf("%s: priorityClassName %s → %s: if %s's value is the higher, KAI may preempt running lower-priority gangs of queue %s (reclaim between queues goes by quota, not priority); from 100 up the run is non-preemptible and held within the queue's deserved quota (nrl-k8s preflight names them from the cluster)%s",
				ref, orNone(c.Before), c.After, c.After, orNone(q), sharing(name, cur, "queue", q, "priority-class")))
		}
	}
	return out
}

// cutField splits a scheduling fact key into the object ("RayJob/ns/x")
// and a run-wide field; per-group keys ("… head priority-class") are not
// run-wide and are left out.
func cutField(key string) (ref, field string, ok bool) {
	ref, field, ok = strings.Cut(key, " ")
	return ref, field, ok && (field == "priority-class" || field == "kueue priority-class")
}

// sharing names the other runs of the repository whose objects are in
// queue q, with their priority class.
func sharing(self string, cur Render, queueField, q, classField string) string {
	if q == "" {
		return ""
	}
	var runs []string
	for name, r := range cur {
		if name == self || r == nil {
			continue
		}
		for k, v := range r.Scheduling {
			ref, field, _ := strings.Cut(k, " ")
			if field == queueField && v == q {
				runs = append(runs, fmt.Sprintf("%s (%s)", name, orNone(r.Scheduling[ref+" "+classField])))
				break
			}
		}
	}
	if len(runs) == 0 {
		return "; no other run of this repository is in " + q
	}
	sort.Strings(runs)
	return "; the other runs of this repository in " + q + ": " + strings.Join(runs, ", ")
}
