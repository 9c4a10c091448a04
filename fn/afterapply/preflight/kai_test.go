package preflight

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// kaiQueue is a KAI Queue deserving gpus GPUs (limit: -1 unlimited), CPU
// and memory unbounded.
func kaiQueue(name string, gpus, limit int) map[string]any {
	free := map[string]any{"quota": -1, "limit": -1, "overQuotaWeight": 1}
	return obj("scheduling.run.ai/v2", "Queue", map[string]any{"name": name}, map[string]any{"spec": map[string]any{"resources": map[string]any{
		"gpu": map[string]any{"quota": gpus, "limit": limit, "overQuotaWeight": 1}, "cpu": free, "memory": free}}})
}

// podGroup is owner's PodGroup in queue, of priority class class, holding
// gpus GPUs when running (else asking for them).
func podGroup(owner, ns, queue, class string, gpus int, running bool) map[string]any {
	res := map[string]any{"requested": map[string]any{"nvidia.com/gpu": itoa(gpus)}}
	if running {
		res["allocated"] = map[string]any{"nvidia.com/gpu": itoa(gpus)}
	}
	return obj("scheduling.run.ai/v2alpha2", "PodGroup", map[string]any{"name": "pg-" + owner, "namespace": ns, "creationTimestamp": "2026-01-01T00:00:00Z",
		"ownerReferences": []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": owner, "uid": "u-" + owner}}},
		map[string]any{"spec": map[string]any{"queue": queue, "priorityClassName": class}, "status": map[string]any{"resourcesStatus": res}})
}

// kaiPod is a bound pod of KAI's holding gpus GPUs.
func kaiPod(name, node string, gpus int) map[string]any {
	return obj("v1", "Pod", map[string]any{"name": name, "namespace": "b"}, map[string]any{
		"spec": map[string]any{"nodeName": node, "schedulerName": "kai-scheduler", "containers": []any{map[string]any{"name": "c",
			"resources": map[string]any{"requests": map[string]any{"nvidia.com/gpu": itoa(gpus)}, "limits": map[string]any{"nvidia.com/gpu": itoa(gpus)}}}}},
		"status": map[string]any{"phase": "Running"}})
}

// The KAI Queue line of a run says what it needs, what of the cluster is
// free, and what KAI does: admit it, preempt a lower priority gang of its
// queue, reclaim from a queue over its share, or leave it pending, naming
// the gangs; a read it rests on refused, it says it cannot tell.
func TestKAIQueuePrediction(t *testing.T) {
	const v2 = "/apis/scheduling.run.ai/v2"
	full := []map[string]any{kaiPod("p1", "n1", 8), kaiPod("p2", "n2", 8)}
	cases := []struct {
		name    string
		workers int
		queues  []map[string]any
		groups  []map[string]any
		pods    []map[string]any
		deny    string
		want    string
		label   string // the head pods' priorityClassName label
	}{
		{"free GPUs: admitted", 2, []map[string]any{kaiQueue("team", 16, -1)}, nil, nil, "",
			"needs 10 cpu; 200 of 200 free; needs 16 nvidia.com/gpu; 16 of 16 free: admitted now", ""},
		{"a lower priority gang of the queue: preempted", 2, []map[string]any{kaiQueue("team", 16, -1)},
			[]map[string]any{podGroup("low", "a", "team", "low", 16, true)}, full, "",
			"needs 16 nvidia.com/gpu; 0 of 16 free: admitted now by preempting RayJob low (priority 10)", ""},
		{"an equal priority holds it, a higher one waits: queued behind it", 2, []map[string]any{kaiQueue("team", 16, -1)},
			[]map[string]any{podGroup("same", "a", "team", "high", 16, true), podGroup("waiting", "a", "team", "top", 8, false)}, full, "",
			": queued behind RayJob waiting (priority 90)", ""},
		{"another queue over its share: reclaimed", 1, []map[string]any{kaiQueue("team", 8, -1), kaiQueue("other", 8, -1)},
			[]map[string]any{podGroup("big", "b", "other", "top", 16, true)}, full, "",
			"0 of 16 free: admitted now by reclaiming from queue other (RayJob b/big (priority 90))", ""},
		{"the queue's limit", 2, []map[string]any{kaiQueue("team", 16, 8)}, nil, nil, "",
			"pending while it is over the limit of queue team (priority 50)", ""},
		{"nothing to take: queued", 2, []map[string]any{kaiQueue("team", 16, -1)},
			[]map[string]any{podGroup("same", "a", "team", "high", 16, true)}, full, "",
			"queued until running PodGroups finish (priority 50", ""},
		{"PodGroups unreadable: says so", 2, []map[string]any{kaiQueue("team", 16, -1)}, nil, nil, "/apis/scheduling.run.ai/v2alpha2/podgroups",
			"cannot tell what KAI does with the run: the PodGroups could not be read (access refused (403 Forbidden)", ""},
		{"the pods' priorityClassName label before their spec's: it preempts", 2, []map[string]any{kaiQueue("team", 16, -1)},
			[]map[string]any{podGroup("same", "a", "team", "high", 16, true)}, full, "",
			"admitted now by preempting RayJob same (priority 50)", "top"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := func(name string) map[string]any {
				n := gpuNode(name, 8, nil)
				n["status"].(map[string]any)["conditions"] = []any{map[string]any{"type": "Ready", "status": "True"}}
				return n
			}
			gets := map[string]map[string]any{
				"/api/v1/namespaces/a": obj("v1", "Namespace", map[string]any{"name": "a"}, nil),
				v2: {"kind": "APIResourceList", "groupVersion": "scheduling.run.ai/v2", "resources": []any{
					map[string]any{"name": "queues", "kind": "Queue", "verbs": []any{"get", "list"}}}},
				v2 + "/queues/team": tc.queues[0],
			}
			classes := []map[string]any{}
			for name, v := range map[string]int{"low": 10, "high": 50, "top": 90} {
				classes = append(classes, obj("scheduling.k8s.io/v1", "PriorityClass", map[string]any{"name": name}, map[string]any{"value": v}))
			}
			lists := map[string][]map[string]any{
				v2 + "/queues": tc.queues, "/apis/scheduling.run.ai/v2alpha2/podgroups": tc.groups,
				"/apis/scheduling.k8s.io/v1/priorityclasses": classes,
				"/api/v1/nodes": {node("n1"), node("n2")}, "/api/v1/pods": tc.pods,
			}
			c := deniedCluster(t, tc.deny, lists, gets)
			docs := runDocs(t, "a", "j", tc.workers, 0)
			docs[0].Data["metadata"].(map[string]any)["labels"] = map[string]any{"kai.scheduler/queue": "team"}
			rc := docs[0].Data["spec"].(map[string]any)["rayClusterSpec"].(map[string]any)
			rc["headGroupSpec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["priorityClassName"] = "high"
			if tc.label != "" {
				rc["headGroupSpec"].(map[string]any)["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"priorityClassName": tc.label}}
			}
			line := lineOfKind(t, c, docs, "Queue")
			assert.Equal(t, OK, line.State, line.Detail)
			assert.Contains(t, line.Detail, tc.want)
		})
	}
}
