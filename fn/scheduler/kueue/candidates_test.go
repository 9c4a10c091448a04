package kueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// workload is a Workload in ns admitting the RayJob owner (none when ""),
// queued in queue, with the conditions that are True and the ClusterQueue
// and GPUs of its admission (none when cq is "").
func workload(ns, owner, queue string, prio any, cq string, gpuSets []int64, conds ...string) unstructured.Unstructured {
	md := map[string]any{"name": "wl-" + owner, "namespace": ns}
	if owner != "" {
		md["ownerReferences"] = []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": owner, "uid": "u"}}
	}
	spec := map[string]any{"queueName": queue}
	if prio != nil {
		spec["priority"] = prio
	}
	var cs []any
	for _, c := range conds {
		cs = append(cs, map[string]any{"type": c, "status": "True", "lastTransitionTime": "2026-01-01T00:05:00Z"})
	}
	status := map[string]any{"conditions": cs}
	if cq != "" {
		var sets []any
		for _, n := range gpuSets {
			sets = append(sets, map[string]any{"resourceUsage": map[string]any{"nvidia.com/gpu": n}})
		}
		status["admission"] = map[string]any{"clusterQueue": cq, "podSetAssignments": sets}
	}
	return unstructured.Unstructured{Object: obj("kueue.x-k8s.io/v1beta1", "Workload", md, map[string]any{"spec": spec, "status": status})}
}

// A Workload is weighed under the object it admits, its namespace named
// when not the run's, with its priority (0 unset or not an int32), every
// pod set's usage summed and when it reserved quota.
func TestModelWorkload(t *testing.T) {
	reserved := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	cases := []struct {
		name string
		w    unstructured.Unstructured
		want QueuedWorkload
	}{
		{"named by its owner, usage summed", workload("ns", "low", "q", int64(10), "cq", []int64{2, 6}, "QuotaReserved"),
			QueuedWorkload{Name: "RayJob low", ClusterQueue: "cq", Priority: 10, Reserved: reserved, Usage: gpus(8)}},
		{"another namespace is named", workload("b", "other", "q", int64(20), "cq", []int64{1}, "QuotaReserved", "Evicted"),
			QueuedWorkload{Name: "RayJob b/other", ClusterQueue: "cq", Priority: 20, Evicted: true, Reserved: reserved, Usage: gpus(1)}},
		{"no owner: the Workload itself", workload("ns", "", "q", nil, "", nil),
			QueuedWorkload{Name: "Workload wl-", Usage: map[corev1.ResourceName]int64{}}},
		{"a priority beyond int32 is Kueue's default 0", workload("ns", "big", "q", int64(1)<<40, "", nil),
			QueuedWorkload{Name: "RayJob big", Usage: map[corev1.ResourceName]int64{}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, modelWorkload(&c.w, "ns"))
		})
	}
}

// The cohort holds the Workloads reserving quota in its ClusterQueues;
// pending are those waiting in the run's LocalQueue, highest priority
// first; finished Workloads and the run's own are neither.
func TestCohortOfWorkloads(t *testing.T) {
	line := scheduler.Line{Need: scheduler.Need{Namespace: "ns", Name: "q"}}
	own := map[string]string{"ns/RayJob/mine": "q"}
	cases := []struct {
		name             string
		w                unstructured.Unstructured
		admitted, queued []string
	}{
		{"reserving in the cohort", workload("ns", "a", "q", int64(1), "cq", []int64{1}, "QuotaReserved"), []string{"RayJob a"}, nil},
		{"reserving in another ClusterQueue", workload("ns", "a", "q", int64(1), "far", []int64{1}, "QuotaReserved"), nil, nil},
		{"finished", workload("ns", "a", "q", int64(1), "cq", []int64{1}, "QuotaReserved", "Finished"), nil, nil},
		{"the run's own", workload("ns", "mine", "q", int64(1), "cq", []int64{1}, "QuotaReserved"), nil, nil},
		{"pending in the run's LocalQueue", workload("ns", "p", "q", int64(1), "", nil), nil, []string{"RayJob p"}},
		{"pending in another LocalQueue", workload("ns", "p", "other", int64(1), "", nil), nil, nil},
		{"pending in another namespace", workload("b", "p", "q", int64(1), "", nil), nil, nil},
	}
	queue := &unstructured.Unstructured{Object: obj("kueue.x-k8s.io/v1beta1", "ClusterQueue", map[string]any{"name": "cq"}, nil)}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			co, pending := cohortOfWorkloads([]*unstructured.Unstructured{queue}, []unstructured.Unstructured{c.w}, line, own)
			assert.Equal(t, c.admitted, nameList(co.Admitted), "admitted")
			assert.Equal(t, c.queued, nameList(pending), "pending")
		})
	}
	t.Run("pending highest priority first", func(t *testing.T) {
		wls := []unstructured.Unstructured{workload("ns", "low", "q", int64(1), "", nil), workload("ns", "high", "q", int64(9), "", nil)}
		_, pending := cohortOfWorkloads([]*unstructured.Unstructured{queue}, wls, line, own)
		assert.Equal(t, "RayJob high (priority 9), RayJob low (priority 1)", names(pending))
	})
}

func nameList(ws []QueuedWorkload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

// The run's priority is the value of the WorkloadPriorityClass its objects
// queued in the line's LocalQueue name; none is 0; a class unread or
// with a value no int32 says why.
func TestRunPriority(t *testing.T) {
	pc := func(v any) map[string]any {
		return obj("kueue.x-k8s.io/v1beta1", "WorkloadPriorityClass", map[string]any{"name": "high"}, map[string]any{"value": v})
	}
	path := pathOf(WorkloadPriorityClasses, "", "high")
	line := scheduler.Line{Need: scheduler.Need{Namespace: "ns", Name: "q"}}
	cases := []struct {
		name   string
		run    scheduler.PreflightRun
		gets   map[string]map[string]any
		deny   string
		prio   int32
		why    string
		hasErr bool
	}{
		{"no class: Kueue's default", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "q"}}, nil, "", 0, "", false},
		{"the class's value", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "q"}, Priorities: map[string]string{"ns/RayJob/r": "high"}},
			map[string]map[string]any{path: pc(int64(1000))}, "", 1000, "", false},
		{"a class of an object in another LocalQueue is not the run's", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "other"}, Priorities: map[string]string{"ns/RayJob/r": "high"}},
			map[string]map[string]any{path: pc(int64(1000))}, "", 0, "", false},
		{"a class of an object in another namespace is not the run's", scheduler.PreflightRun{Queues: map[string]string{"b/RayJob/r": "q"}, Priorities: map[string]string{"b/RayJob/r": "high"}},
			map[string]map[string]any{path: pc(int64(1000))}, "", 0, "", false},
		{"a class absent", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "q"}, Priorities: map[string]string{"ns/RayJob/r": "high"}},
			nil, "", 0, "WorkloadPriorityClass high", false},
		{"a class refused", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "q"}, Priorities: map[string]string{"ns/RayJob/r": "high"}},
			nil, path, 0, "WorkloadPriorityClass high", true},
		{"a value beyond int32", scheduler.PreflightRun{Queues: map[string]string{"ns/RayJob/r": "q"}, Priorities: map[string]string{"ns/RayJob/r": "high"}},
			map[string]map[string]any{path: pc(int64(1) << 40)}, "", 0, "WorkloadPriorityClass high's value is not a 32-bit integer", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prio, why, err := runPriority(context.Background(), fakeReader{gets: c.gets, deny: c.deny}, c.run, line)
			assert.Equal(t, c.prio, prio)
			if c.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, c.why)
			}
			assert.Equal(t, c.hasErr, err != nil)
		})
	}
}

// A ClusterQueue's cohort is spec.cohortName, else spec.cohort.
func TestCohortOf(t *testing.T) {
	cases := []struct {
		name string
		spec map[string]any
		want string
	}{
		{"cohortName", map[string]any{"cohortName": "new"}, "new"},
		{"cohort", map[string]any{"cohort": "old"}, "old"},
		{"cohortName wins", map[string]any{"cohortName": "new", "cohort": "old"}, "new"},
		{"none", map[string]any{}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := &unstructured.Unstructured{Object: map[string]any{"spec": c.spec}}
			assert.Equal(t, c.want, cohortOf(q))
		})
	}
}
