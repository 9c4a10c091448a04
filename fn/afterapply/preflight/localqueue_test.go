package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// clusterQueue is a ClusterQueue of 1504 cpu and gpus GPUs.
func clusterQueue(name, cohort string, gpus int, preemption map[string]any) map[string]any {
	spec := map[string]any{"resourceGroups": []any{map[string]any{
		"coveredResources": []any{"cpu", "nvidia.com/gpu"},
		"flavors": []any{map[string]any{"name": "any", "resources": []any{
			map[string]any{"name": "cpu", "nominalQuota": "1504"},
			map[string]any{"name": "nvidia.com/gpu", "nominalQuota": gpus}}}}}}}
	if cohort != "" {
		spec["cohortName"] = cohort
	}
	if preemption != nil {
		spec["preemption"] = preemption
	}
	return obj("kueue.x-k8s.io/v1beta2", "ClusterQueue", map[string]any{"name": name}, map[string]any{"spec": spec})
}

// kueueWorkload is owner's Workload, holding gpus GPUs of cq when reserved.
func kueueWorkload(owner, ns, cq string, prio, gpus int, reserved bool) map[string]any {
	status := map[string]any{"conditions": []any{map[string]any{"type": "QuotaReserved", "status": "False"}}}
	if reserved {
		status = map[string]any{
			"conditions": []any{map[string]any{"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
			"admission": map[string]any{"clusterQueue": cq, "podSetAssignments": []any{map[string]any{
				"resourceUsage": map[string]any{"cpu": "10", "nvidia.com/gpu": gpus}}}}}
	}
	return obj("kueue.x-k8s.io/v1beta2", "Workload", map[string]any{"name": "rayjob-" + owner, "namespace": ns,
		"ownerReferences": []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": owner, "uid": "u-" + owner}}},
		map[string]any{"spec": map[string]any{"priority": prio, "queueName": "lab"}, "status": status})
}

// The LocalQueue line of a run the free quota does not hold says what
// Kueue does, from the ClusterQueue's preemption policy, the run's
// WorkloadPriorityClass and the Workloads holding or awaiting quota.
func TestLocalQueuePreemption(t *testing.T) {
	const kq = "/apis/kueue.x-k8s.io/v1beta2"
	lower := map[string]any{"withinClusterQueue": "LowerPriority"}
	cases := []struct {
		name      string
		cq        map[string]any
		queues    []map[string]any
		workloads []map[string]any
		deny      string
		want      string
		waits     bool
	}{
		{"a lower priority run holds the quota: preempted", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("low", "a", "cq", 10, 16, true)},
			"", "ClusterQueue cq: needs 10 cpu; 1494 of 1504 free; needs 16 nvidia.com/gpu; 0 of 16 free: admitted now by preempting RayJob low (priority 10)", false},
		{"every lower one it needs, named with its namespace", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("low", "a", "cq", 10, 8, true), kueueWorkload("other", "b", "cq", 20, 8, true)},
			"", "admitted now by preempting RayJob low (priority 10), RayJob b/other (priority 20)", false},
		{"the run's own Workload is no candidate", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("j", "a", "cq", 10, 16, true)},
			"", "0 of 16 free: queued until other Workloads finish", true},
		{"no preemption policy: queued until others finish", clusterQueue("cq", "", 16, nil), nil,
			[]map[string]any{kueueWorkload("low", "a", "cq", 10, 16, true)},
			"", "0 of 16 free: queued until other Workloads finish", true},
		{"a higher priority one holds it: queued", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("top", "a", "cq", 5000, 16, true)},
			"", ": queued until other Workloads finish", true},
		{"a pending run it does not outrank: queued behind it", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("top", "a", "cq", 5000, 16, true), kueueWorkload("waiting", "a", "", 2000, 0, false)},
			"", ": queued behind RayJob waiting (priority 2000)", true},
		{"an idle cohort: borrows", clusterQueue("cq", "co", 8, nil),
			[]map[string]any{clusterQueue("cq", "co", 8, nil), clusterQueue("idle", "co", 8, nil)}, nil,
			"", "needs 16 nvidia.com/gpu; 8 of 8 free: admitted now by borrowing from cohort co", false},
		{"Workloads unreadable: says so", clusterQueue("cq", "", 16, lower), nil,
			[]map[string]any{kueueWorkload("low", "a", "cq", 10, 16, true)},
			kq + "/workloads", "queued until other Workloads finish (cannot tell whether Kueue preempts: Workloads could not be read (access refused (403 Forbidden)", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			used := 0
			for _, w := range tc.workloads {
				if st, _ := w["status"].(map[string]any); st["admission"] != nil {
					u := st["admission"].(map[string]any)["podSetAssignments"].([]any)[0].(map[string]any)["resourceUsage"].(map[string]any)
					used += u["nvidia.com/gpu"].(int)
				}
			}
			cq := tc.cq
			cq["status"] = map[string]any{"flavorsReservation": []any{map[string]any{"name": "any", "resources": []any{
				map[string]any{"name": "nvidia.com/gpu", "total": used}, map[string]any{"name": "cpu", "total": "10"}}}}}
			gets := map[string]map[string]any{
				"/api/v1/namespaces/a": obj("v1", "Namespace", map[string]any{"name": "a"}, nil),
				kq + "/namespaces/a/localqueues/lab": obj("kueue.x-k8s.io/v1beta2", "LocalQueue",
					map[string]any{"name": "lab", "namespace": "a"}, map[string]any{"spec": map[string]any{"clusterQueue": "cq"}}),
				kq + "/clusterqueues/cq": cq,
				kq: {"kind": "APIResourceList", "groupVersion": "kueue.x-k8s.io/v1beta2", "resources": []any{
					map[string]any{"name": "localqueues", "namespaced": true, "kind": "LocalQueue", "verbs": []any{"get"}},
					map[string]any{"name": "clusterqueues", "kind": "ClusterQueue", "verbs": []any{"get"}}}},
				kq + "/workloadpriorityclasses/high": obj("kueue.x-k8s.io/v1beta2", "WorkloadPriorityClass", map[string]any{"name": "high"}, map[string]any{"value": 1000}),
			}
			lists := map[string][]map[string]any{kq + "/workloads": tc.workloads, kq + "/clusterqueues": tc.queues}
			c := deniedCluster(t, tc.deny, lists, gets)
			docs := runDocs(t, "a", "j", 2, 0)
			docs[0].Data["metadata"].(map[string]any)["labels"] = map[string]any{"kueue.x-k8s.io/queue-name": "lab", "kueue.x-k8s.io/priority-class": "high"}
			line := lineOfKind(t, c, docs, "LocalQueue")
			assert.Equal(t, OK, line.State, line.Detail)
			assert.Contains(t, line.Detail, tc.want)
			assert.Equal(t, tc.waits, line.Waits, "the run waits for quota")
		})
	}
}
