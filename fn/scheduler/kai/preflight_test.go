package kai

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// fixtures is a cluster as preflight's reader hands it over: lists keyed
// by resource, the Nodes and the bound Pods; the resource deny ("nodes",
// "pods" among them) is refused as the API server's 403 is, and more cuts
// the Pods' list.
type fixtures struct {
	lists map[string][]map[string]any
	nodes []*corev1.Node
	pods  []corev1.Pod
	deny  string
	more  bool
}

var errRefused = errors.New("access refused (403 Forbidden): denied by the test")

func (fixtures) Get(context.Context, schema.GroupVersionResource, string, string) (*unstructured.Unstructured, scheduler.Outcome, error) {
	return nil, scheduler.NotFound, nil
}

func (f fixtures) List(_ context.Context, gvr schema.GroupVersionResource, _, _ string) ([]unstructured.Unstructured, scheduler.Outcome, error) {
	if gvr.Resource == f.deny {
		return nil, scheduler.Forbidden, errRefused
	}
	var out []unstructured.Unstructured
	for _, o := range f.lists[gvr.Resource] {
		out = append(out, unstructured.Unstructured{Object: o})
	}
	return out, scheduler.Found, nil
}

func (f fixtures) BoundPods(context.Context) (scheduler.BoundPods, scheduler.Outcome, error) {
	b := scheduler.BoundPods{More: f.more, Limit: len(f.pods)}
	if f.deny == "pods" {
		return b, scheduler.Forbidden, errRefused
	}
	for i := range f.pods {
		b.Add(&f.pods[i])
	}
	return b, scheduler.Found, nil
}

func (f fixtures) Nodes(context.Context) ([]*corev1.Node, scheduler.Outcome, error) {
	if f.deny == "nodes" {
		return nil, scheduler.Forbidden, errRefused
	}
	return f.nodes, scheduler.Found, nil
}

func (fixtures) Exists(context.Context, schema.GroupVersionResource, string, string) (scheduler.Outcome, error) {
	return scheduler.NotFound, nil
}

func (fixtures) Stops(error) bool { return false }

// queue is a KAI Queue deserving gpus GPUs (limit: -1 unlimited), CPU and
// memory unbounded.
func queue(name string, gpus, limit int) map[string]any {
	free := map[string]any{"quota": int64(-1), "limit": int64(-1), "overQuotaWeight": int64(1)}
	return map[string]any{"apiVersion": vocab.KAIQueueAPIVersion, "kind": "Queue", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"resources": map[string]any{
			"gpu": map[string]any{"quota": int64(gpus), "limit": int64(limit), "overQuotaWeight": int64(1)}, "cpu": free, "memory": free}}}
}

// podGroup is owner's PodGroup in queue, of priority class class, holding
// gpus GPUs when running (else asking for them).
func podGroup(owner, ns, queue, class string, gpus int, running bool) map[string]any {
	n := resource.NewQuantity(int64(gpus), resource.DecimalSI).String()
	res := map[string]any{"requested": map[string]any{GPU.String(): n}}
	if running {
		res["allocated"] = map[string]any{GPU.String(): n}
	}
	return map[string]any{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg-" + owner, "namespace": ns, "creationTimestamp": "2026-01-01T00:00:00Z",
			"ownerReferences": []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": owner, "uid": "u-" + owner}}},
		"spec": map[string]any{"queue": queue, "priorityClassName": class}, "status": map[string]any{"resourcesStatus": res}}
}

func gpuList(n int64) corev1.ResourceList {
	return corev1.ResourceList{GPU: *resource.NewQuantity(n, resource.DecimalSI)}
}

// node is a ready node of 100 CPUs and 8 GPUs.
func node(name string) *corev1.Node {
	alloc := gpuList(8)
	alloc[corev1.ResourceCPU] = resource.MustParse("100")
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: alloc,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

// kaiPod is a running pod of KAI's on node holding 8 GPUs.
func kaiPod(name, node string) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "b"},
		Spec: corev1.PodSpec{NodeName: node, SchedulerName: vocab.KAISchedulerName,
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: gpuList(8), Limits: gpuList(8)}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// otherPod is kaiPod bound by another scheduler (sched), or with sched
// "" KAI's pod being deleted.
func otherPod(name, node, sched string) corev1.Pod {
	p := kaiPod(name, node)
	if sched != "" {
		p.Spec.SchedulerName = sched
	} else {
		p.DeletionTimestamp = &metav1.Time{}
	}
	return p
}

// notReady is node whose Ready condition is False.
func notReady(name string) *corev1.Node {
	n := node(name)
	n.Status.Conditions[0].Status = corev1.ConditionFalse
	return n
}

// run is RayJob a/j queued on team: a head of 10 CPUs of PriorityClass
// high (label, when set, its priorityClassName label) and workers of 8
// GPUs.
func run(workers int64, label string) scheduler.PreflightRun {
	head := workload.Pod{Object: "RayJob/j", Namespace: "a", Role: "head", Count: 1, Spec: corev1.PodSpec{PriorityClassName: "high",
		Containers: []corev1.Container{{Name: "head", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10")}}}}}}
	if label != "" {
		head.Meta.Labels = map[string]string{priorityLabel: label}
	}
	worker := workload.Pod{Object: "RayJob/j", Namespace: "a", Role: "worker group gpu", Count: workers, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{Limits: gpuList(8)}}}}}
	return scheduler.PreflightRun{Namespace: "a", Pods: []scheduler.PodSet{{Pod: head}, {Pod: worker}}}
}

// The KAI Queue line of a run says what it needs, what of the cluster is
// free, and what KAI does: admit it, preempt a lower priority gang of its
// queue, reclaim from a queue over its share, or leave it pending, naming
// the gangs; a read it rests on errRefused or cut, it says it cannot tell.
func TestPreflightObject(t *testing.T) {
	full := []corev1.Pod{kaiPod("p1", "n1"), kaiPod("p2", "n2")}
	team := []map[string]any{queue("team", 16, -1)}
	cases := []struct {
		name    string
		workers int64
		queues  []map[string]any
		groups  []map[string]any
		pods    []corev1.Pod
		deny    string
		more    bool
		label   string // the head pod's priorityClassName label
		want    string
	}{
		{name: "free GPUs: admitted", workers: 2, queues: team,
			want: "needs 10 cpu; 200 of 200 free; needs 16 nvidia.com/gpu; 16 of 16 free: admitted now"},
		{name: "a lower priority gang of the queue: preempted", workers: 2, queues: team,
			groups: []map[string]any{podGroup("low", "a", "team", "low", 16, true)}, pods: full,
			want: "needs 16 nvidia.com/gpu; 0 of 16 free: admitted now by preempting RayJob low (priority 10)"},
		{name: "an equal priority holds it, a higher one waits: queued behind it", workers: 2, queues: team,
			groups: []map[string]any{podGroup("same", "a", "team", "high", 16, true), podGroup("waiting", "a", "team", "top", 8, false)}, pods: full,
			want: ": queued behind RayJob waiting (priority 90)"},
		{name: "another queue over its share: reclaimed", workers: 1, queues: []map[string]any{queue("team", 8, -1), queue("other", 8, -1)},
			groups: []map[string]any{podGroup("big", "b", "other", "top", 16, true)}, pods: full,
			want: "0 of 16 free: admitted now by reclaiming from queue other (RayJob b/big (priority 90))"},
		{name: "the queue's limit", workers: 2, queues: []map[string]any{queue("team", 16, 8)},
			want: "pending while it is over the limit of queue team (priority 50)"},
		{name: "nothing to take: queued", workers: 2, queues: team,
			groups: []map[string]any{podGroup("same", "a", "team", "high", 16, true)}, pods: full,
			want: "queued until running PodGroups finish (priority 50"},
		{name: "the pods' priorityClassName label before their spec's: it preempts", workers: 2, queues: team,
			groups: []map[string]any{podGroup("same", "a", "team", "high", 16, true)}, pods: full, label: "top",
			want: "admitted now by preempting RayJob same (priority 50)"},
		{name: "PodGroups unreadable: says so", workers: 2, queues: team, deny: "podgroups",
			want: "cannot tell what KAI does with the run: the PodGroups could not be read (access refused (403 Forbidden)"},
		{name: "Nodes unreadable: says so", workers: 2, queues: team, deny: "nodes",
			want: "cannot tell what KAI does with the run: the Nodes could not be read (access refused (403 Forbidden)"},
		{name: "another scheduler's pods take from what KAI divides", workers: 1, queues: team, pods: []corev1.Pod{otherPod("d1", "n1", corev1.DefaultSchedulerName)},
			want: "needs 8 nvidia.com/gpu; 8 of 8 free: admitted now"},
		{name: "a KAI pod being deleted still holds its GPUs", workers: 2, queues: team, pods: []corev1.Pod{otherPod("k1", "n1", "")},
			want: "needs 16 nvidia.com/gpu; 8 of 16 free"},
		{name: "a pod on a node not ready holds nothing KAI divides", workers: 2, queues: team, pods: []corev1.Pod{kaiPod("p3", "n3")},
			want: "needs 16 nvidia.com/gpu; 16 of 16 free: admitted now"},
		{name: "more Pods than a read holds: says so", workers: 2, queues: team, pods: full, more: true,
			want: "cannot tell what KAI does with the run: the bound Pods are more than 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var classes []map[string]any
			for name, v := range map[string]int64{"low": 10, "high": 50, "top": 90} {
				classes = append(classes, map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": map[string]any{"name": name}, "value": v})
			}
			f := fixtures{lists: map[string][]map[string]any{"queues": tc.queues, "podgroups": tc.groups, "priorityclasses": classes},
				nodes: []*corev1.Node{node("n1"), node("n2"), notReady("n3")}, pods: tc.pods, deny: tc.deny, more: tc.more}
			l := scheduler.Line{Need: scheduler.Need{Kind: "Queue", APIVersion: vocab.KAIQueueAPIVersion, Name: "team",
				ReferencedBy: []string{"RayJob/j metadata.labels[" + vocab.KAIQueueLabel + "]"}}}
			got, ok, err := Integration{}.PreflightObject(context.Background(), f, run(tc.workers, tc.label), l, nil)
			require.NoError(t, err)
			require.True(t, ok)
			assert.Equal(t, scheduler.OK, got.State, got.Detail)
			assert.Contains(t, got.Detail, tc.want)
		})
	}
}

// Only KAI's Queue is KAI's to judge; a run that asks for nothing KAI
// divides gets the bare ok line.
func TestPreflightObjectOwns(t *testing.T) {
	for _, tc := range []struct {
		name, kind, apiVersion string
		run                    scheduler.PreflightRun
		judged                 bool
	}{
		{"another kind", "LocalQueue", vocab.KueueAPIVersion, run(1, ""), false},
		{"another group's Queue", "Queue", "example.com/v1", run(1, ""), false},
		{"no demand", "Queue", vocab.KAIQueueAPIVersion, scheduler.PreflightRun{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := scheduler.Line{Need: scheduler.Need{Kind: tc.kind, APIVersion: tc.apiVersion, Name: "team", ReferencedBy: []string{"RayJob/j x"}}, State: scheduler.Missing}
			got, ok, err := Integration{}.PreflightObject(context.Background(), fixtures{deny: "queues"}, tc.run, l, nil)
			require.NoError(t, err)
			require.Equal(t, tc.judged, ok)
			if ok {
				assert.Equal(t, scheduler.OK, got.State)
				assert.Empty(t, got.Detail)
			}
		})
	}
}
