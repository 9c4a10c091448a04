package scheduling_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/operator"
	"github.com/nemo-rl-krm/nemo-rl-krm/internal/scheduler"
)

// KAI Scheduler does not run here: its preempt and reclaim actions are
// modelled from its source (fn/scheduler/kai/preempt.go and reclaim.go,
// KAI-Scheduler d5bc503a pkg/scheduler/actions/{preempt,reclaim} and
// pkg/scheduler/plugins/proportion). These cases set the cluster up as
// KAI leaves it while a gang runs (its Queues; PodGroups with their
// priority class and the status.resourcesStatus KAI's podgroup controller
// writes; the gang's Pods bound by kai-scheduler, holding their GPUs), on
// the real kube-apiserver, and ask preflight about the qwen3 GB300 run
// (KAI's queue rl, 16 GPUs, KAI's train priority) before it is applied:
// its Queue line reads the real objects and says what KAI does.
func TestKAIPreemptionPredicted(t *testing.T) {
	env, _ := scheduler.Shared(t)
	ctx := context.Background()
	installKAI(t, env)
	for name, v := range map[string]int64{"train": 50, "nrl-kai-low": 10, "nrl-kai-top": 90} {
		pc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
			"metadata": map[string]any{"name": name}, "value": v}}
		if err := env.Client.Create(ctx, pc); err != nil && !strings.Contains(err.Error(), "already exists") {
			require.NoError(t, err)
		}
	}
	for _, tc := range []struct {
		name   string
		nodes  int
		queues map[string]int64 // GPUs each queue deserves
		gangs  []kaiGang
		want   string
	}{
		{name: "a lower priority gang of its queue is preempted", nodes: 2, queues: map[string]int64{"rl": 16},
			gangs: []kaiGang{{name: "low", queue: "rl", class: "nrl-kai-low", gpus: 16, running: true}},
			want:  "needs 16 nvidia.com/gpu; 0 of 16 free: admitted now by preempting RayJob %s/low (priority 10)"},
		{name: "a queue over its fair share is reclaimed from, whatever the priority", nodes: 4, queues: map[string]int64{"rl": 16, "other": 0},
			gangs: []kaiGang{{name: "big", queue: "other", class: "nrl-kai-top", gpus: 32, running: true}},
			want:  "needs 16 nvidia.com/gpu; 0 of 32 free: admitted now by reclaiming from queue other (RayJob %s/big (priority 90))"},
		{name: "an equal priority holds the GPUs, a higher one waits: queued behind it", nodes: 2, queues: map[string]int64{"rl": 16},
			gangs: []kaiGang{{name: "same", queue: "rl", class: "train", gpus: 16, running: true},
				{name: "waiting", queue: "rl", class: "nrl-kai-top", gpus: 16}},
			want: "needs 16 nvidia.com/gpu; 0 of 16 free: queued behind RayJob %s/waiting (priority 90)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := fmt.Sprintf("kaipre%d", len(tc.queues)*10+len(tc.gangs))
			f := scheduler.EightGPU(prefix, "NVIDIA-H100-80GB-HBM3", tc.nodes, 0, 0)
			for i := range f.Nodes {
				// Room for the run's CPU and memory (head included) on
				// two nodes: GPUs are what is short.
				f.Nodes[i].Allocatable = f.Nodes[i].Allocatable.DeepCopy()
				f.Nodes[i].Allocatable[corev1.ResourceCPU] = resource.MustParse("300")
				f.Nodes[i].Allocatable[corev1.ResourceMemory] = resource.MustParse("2000Gi")
			}
			fleet(t, env, f)
			other := namespaceFor(prefix + "-others")
			require.NoError(t, env.SetUp(ctx, other, "privileged", []string{"default"}, nil))
			t.Cleanup(func() { scheduler.Teardown(env, other) })
			for q, gpus := range tc.queues {
				kaiObject(t, env, kaiQueueObject(q, gpus))
			}
			node := 0
			for _, g := range tc.gangs {
				kaiObject(t, env, g.podGroup(other))
				for i := int64(0); g.running && i < g.gpus/8; i++ {
					pod := g.pod(other, fmt.Sprintf("%s-%d", g.name, i), f.Nodes[node].Name)
					require.NoError(t, env.Client.Create(ctx, pod))
					node++
				}
			}
			r := qwen(t, prefix)
			run := scenarioRun{name: prefix, ns: namespaceFor(prefix), objs: r.Objs}
			line := kaiQueueLine(t, env, run)
			assert.Equal(t, preflight.OK, line.State, line.Detail)
			assert.Contains(t, line.Detail, fmt.Sprintf(tc.want, other))
		})
	}
}

// kaiGang is a PodGroup of KAI's and, running, its Pods (8 GPUs each).
type kaiGang struct {
	name, queue, class string
	gpus               int64
	running            bool
}

func (g kaiGang) podGroup(ns string) *unstructured.Unstructured {
	res := map[string]any{"requested": map[string]any{"nvidia.com/gpu": fmt.Sprint(g.gpus)}}
	if g.running {
		res["allocated"] = map[string]any{"nvidia.com/gpu": fmt.Sprint(g.gpus)}
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg-" + g.name, "namespace": ns,
			"ownerReferences": []any{map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob", "name": g.name, "uid": "u-" + g.name}}},
		"spec":   map[string]any{"queue": g.queue, "priorityClassName": g.class, "minMember": g.gpus / 8},
		"status": map[string]any{"resourcesStatus": res}}}
}

func (g kaiGang) pod(ns, name, node string) *corev1.Pod {
	gpus := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{"pod-group-name": "pg-" + g.name}},
		Spec: corev1.PodSpec{NodeName: node, SchedulerName: "kai-scheduler", Containers: []corev1.Container{{Name: "w", Image: "img",
			Resources: corev1.ResourceRequirements{Requests: gpus, Limits: gpus}}}}}
}

// kaiQueueObject is a Queue deserving gpus GPUs, CPU and memory unbounded
// (limit -1 throughout), as KAI's quickstart queues are written.
func kaiQueueObject(name string, gpus int64) *unstructured.Unstructured {
	free := map[string]any{"quota": int64(-1), "limit": int64(-1), "overQuotaWeight": int64(1)}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": map[string]any{"name": name},
		"spec": map[string]any{"resources": map[string]any{"gpu": map[string]any{"quota": gpus, "limit": int64(-1), "overQuotaWeight": int64(1)}, "cpu": free, "memory": free}}}}
}

// kaiObject creates u (once its CRD is served) and deletes it at the end
// of the test.
func kaiObject(t *testing.T, env *operator.Env, u *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, operator.Wait(ctx, 30*time.Second, "create "+u.GetKind()+" "+u.GetName(), func(ctx context.Context) (bool, string, error) {
		err := env.Client.Create(ctx, u.DeepCopy())
		if err == nil {
			return true, "", nil
		}
		return false, err.Error(), nil
	}))
	t.Cleanup(func() { _ = env.Client.Delete(context.Background(), u.DeepCopy()) })
}

// installKAI installs stand-ins for KAI's Queue (scheduling.run.ai/v2,
// cluster-scoped) and PodGroup (v2alpha2, namespaced) CRDs: any fields,
// no status subresource (a PodGroup is created with the status KAI's
// controller would have written).
func installKAI(t *testing.T, env *operator.Env) {
	t.Helper()
	for _, c := range []struct {
		plural, kind, version, scope string
	}{{"queues", "Queue", "v2", "Cluster"}, {"podgroups", "PodGroup", "v2alpha2", "Namespaced"}} {
		crd := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": c.plural + ".scheduling.run.ai"},
			"spec": map[string]any{"group": "scheduling.run.ai", "scope": c.scope,
				"names": map[string]any{"plural": c.plural, "singular": strings.ToLower(c.kind), "kind": c.kind, "listKind": c.kind + "List"},
				"versions": []any{map[string]any{"name": c.version, "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}}}
		if err := env.Client.Create(context.Background(), crd); err != nil && !strings.Contains(err.Error(), "already exists") {
			require.NoError(t, err)
		}
	}
}

// kaiQueueLine is preflight's Queue line for run, asked before it is
// applied.
func kaiQueueLine(t *testing.T, env *operator.Env, run scenarioRun) preflight.Line {
	t.Helper()
	var docs []rendered.Doc
	for _, u := range run.objs {
		c := u.DeepCopy()
		c.SetNamespace(run.ns)
		docs = append(docs, rendered.FromData(c.Object))
	}
	c, err := kube.FromConfig(env.Server.Config, run.ns, kube.Options{})
	require.NoError(t, err)
	in, err := preflight.InputOf(docs, "", run.ns)
	require.NoError(t, err)
	var rep preflight.Report
	// The CRDs' discovery may lag their creation.
	require.NoError(t, operator.Wait(context.Background(), 30*time.Second, "a KAI Queue line", func(ctx context.Context) (bool, string, error) {
		rep, err = preflight.Run(ctx, c, in)
		if err != nil {
			return false, "", err
		}
		for _, l := range rep.Lines {
			if l.Kind == "Queue" && strings.Contains(l.Detail, "needs ") {
				return true, "", nil
			}
		}
		return false, "no KAI Queue line with a verdict", nil
	}))
	for _, l := range rep.Lines {
		if l.Kind == "Queue" {
			t.Logf("preflight: %s %s: %s", l.State, l.Name, l.Detail)
			return l
		}
	}
	return preflight.Line{}
}
