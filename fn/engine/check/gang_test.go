package check

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// job is a RayJob of groups one-pod GPU worker groups claiming one
// ComputeDomain, each template kept in one clique, as the GB300 qwen3
// profile renders with segmentSize 1.
func job(scheduler string, groups int, owner map[string]string, tol corev1.Toleration) *rayv1.RayJob {
	pod := func() corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{vocab.KAITopologyAnnotation: "gb300-topology", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}},
			Spec: corev1.PodSpec{
				SchedulerName:  scheduler,
				Tolerations:    []corev1.Toleration{tol},
				ResourceClaims: []corev1.PodResourceClaim{{Name: profile.ComputeDomainClaim}},
				Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}},
			},
		}
	}
	spec := &rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: scheduler}}}}
	for i := range groups {
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, rayv1.WorkerGroupSpec{
			GroupName: "gpu-segment-" + string(rune('0'+i)), Replicas: ptr.To[int32](1), Template: pod()})
	}
	return &rayv1.RayJob{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: owner}, Spec: rayv1.RayJobSpec{RayClusterSpec: spec}}
}

func messages(ds diag.List, sev diag.Severity) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == sev {
			out = append(out, d.Message)
		}
	}
	return out
}

func anyContains(ms []string, s string) bool {
	for _, m := range ms {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

var keyed = corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}

func TestGangs(t *testing.T) {
	t.Run("four one-pod groups under KAI: each kept in a clique alone", func(t *testing.T) {
		ds := Gangs("p.yaml", []any{job(vocab.KAISchedulerName, 4, nil, keyed)})
		require.True(t, anyContains(messages(ds, diag.Info), "a PodGroup of 5 pods, all or nothing, with run-wide topology none"))
		require.True(t, anyContains(messages(ds, diag.Warning), "the ComputeDomain of RayJob/r spans 4 pods in worker groups gpu-segment-0, gpu-segment-1, gpu-segment-2, gpu-segment-3, and no required topology constraint keeps them in one domain"))
	})
	t.Run("a run-wide required placement keeps them together", func(t *testing.T) {
		owner := map[string]string{vocab.KAITopologyAnnotation: "gb300-topology", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}
		ds := Gangs("p.yaml", []any{job(vocab.KAISchedulerName, 4, owner, keyed)})
		require.True(t, anyContains(messages(ds, diag.Info), "run-wide topology required nvidia.com/gpu.clique (topology gb300-topology)"))
		require.False(t, anyContains(messages(ds, diag.Warning), "ComputeDomain"))
		// The PodGroup's constraint binds the CPU head too, as preflight
		// places it (fn/analyse/placement): a head whose nodes lack the
		// level keeps the whole gang waiting.
		require.Equal(t, []string{"KAI's run-wide required placement (nvidia.com/gpu.clique) binds every pod of RayJob/r's PodGroup, the head's included: the head must run on a node carrying nvidia.com/gpu.clique, in the workers' domain, or KAI places none of the run (all or nothing); a CPU head's pool seldom carries a GPU level (preflight --nodes tells, on the cluster); expected the level required on the worker groups instead (their pod templates' kai.scheduler/topology-required-placement; one worker group, segmentSize at least its replicas, keeps them in one domain), unless the head's nodes are in the domain"},
			messages(ds, diag.Warning))
	})
	t.Run("one group is kept together by its own constraint", func(t *testing.T) {
		j := job(vocab.KAISchedulerName, 1, nil, keyed)
		j.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4)
		require.Empty(t, messages(Gangs("p.yaml", []any{j}), diag.Warning))
	})
	t.Run("a placement without a topology is what KAI refuses", func(t *testing.T) {
		ds := Gangs("p.yaml", []any{job(vocab.KAISchedulerName, 1, map[string]string{vocab.KAIRequiredPlacementAnnotation: "x"}, keyed)})
		require.True(t, anyContains(messages(ds, diag.Error), "KAI's pod-grouper refuses a placement without a topology"))
	})
	t.Run("no gang scheduler: partial placement", func(t *testing.T) {
		ds := Gangs("p.yaml", []any{job("", 2, nil, keyed)})
		require.True(t, anyContains(messages(ds, diag.Warning), "RayJob/r has 2 GPU pods and no gang scheduler (its pods go to default-scheduler)"))
		q := job("", 2, nil, keyed)
		q.Labels = map[string]string{vocab.KueueQueueLabel: "lab-queue"}
		require.False(t, anyContains(messages(Gangs("p.yaml", []any{q}), diag.Warning), "no gang scheduler"), "Kueue admits the run whole")
		require.Empty(t, messages(Gangs("p.yaml", []any{job("", 1, nil, keyed)}), diag.Warning), "one GPU pod is its own gang")
	})
	t.Run("a ComputeDomain on pods KAI does not place: nothing keeps it in one domain", func(t *testing.T) {
		q := job("", 2, nil, keyed)
		q.Labels = map[string]string{vocab.KueueQueueLabel: "lab-queue"}
		ds := Gangs("p.yaml", []any{q})
		require.True(t, anyContains(messages(ds, diag.Warning), "the ComputeDomain of RayJob/r spans 2 pods in worker groups gpu-segment-0, gpu-segment-1, and nothing keeps them in one NVLink domain: its pods go to default-scheduler, which reads no topology (Kueue, through LocalQueue lab-queue, admits the run against quota and places no pod)"))
		one := job("", 1, nil, keyed)
		one.Labels = q.Labels
		require.Empty(t, messages(Gangs("p.yaml", []any{one}), diag.Warning), "one pod is in one domain")
	})
	t.Run("a key-less Exists toleration tolerates cordon", func(t *testing.T) {
		ds := Gangs("p.yaml", []any{job(vocab.KAISchedulerName, 1, nil, corev1.Toleration{Operator: corev1.TolerationOpExists})})
		require.True(t, anyContains(messages(ds, diag.Warning), "tolerates every taint ({operator: Exists} without a key), node.kubernetes.io/unschedulable and not-ready included"))
	})
	t.Run("one run, two schedulers", func(t *testing.T) {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "sandbox"}}
		ds := Gangs("p.yaml", []any{job(vocab.KAISchedulerName, 1, nil, keyed), dep})
		require.True(t, anyContains(messages(ds, diag.Warning), "the run's pods go to 2 schedulers: default-scheduler (Deployment/sandbox); kai-scheduler (RayJob/r)"))
	})
}

// check's gang is the run fn/analyse/placement places (placement.RunsOf):
// its PodGroup, the run-wide required level and each pod set's minMember
// and required level, as data, not prose.
func TestGangsOf(t *testing.T) {
	owner := map[string]string{vocab.KAITopologyAnnotation: "gb300-topology", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}
	type shape struct {
		name      string
		count     int64
		minMember int64
		required  string
	}
	cases := []struct {
		name     string
		job      *rayv1.RayJob
		gang     bool
		members  int64
		required string
		shapes   []shape
	}{
		{name: "each worker group kept in a clique alone", job: job(vocab.KAISchedulerName, 2, nil, keyed), gang: true, members: 3,
			shapes: []shape{{"RayJob/r head", 1, 1, ""}, {"RayJob/r worker group gpu-segment-0", 1, 1, "nvidia.com/gpu.clique"}, {"RayJob/r worker group gpu-segment-1", 1, 1, "nvidia.com/gpu.clique"}}},
		{name: "a run-wide level binds every pod", job: job(vocab.KAISchedulerName, 1, owner, keyed), gang: true, members: 2, required: "nvidia.com/gpu.clique",
			shapes: []shape{{"RayJob/r head", 1, 1, ""}, {"RayJob/r worker group gpu-segment-0", 1, 1, "nvidia.com/gpu.clique"}}},
		{name: "no KAI: no gang", job: job("", 2, nil, keyed),
			shapes: []shape{{"RayJob/r head", 1, 0, ""}, {"RayJob/r worker group gpu-segment-0", 1, 0, ""}, {"RayJob/r worker group gpu-segment-1", 1, 0, ""}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reports := GangsOf([]any{c.job})
			require.Len(t, reports, 1)
			r := reports[0]
			require.NoError(t, r.Err)
			require.Equal(t, c.gang, r.KAI)
			require.Equal(t, c.gang, r.Run.Gang)
			require.Equal(t, c.members, r.Run.PodGroup.MinMember)
			require.Equal(t, c.required, r.Run.Required)
			var got []shape
			for _, s := range r.Run.Shapes {
				got = append(got, shape{s.Name(), s.Count, s.MinMember, s.Required})
			}
			require.Equal(t, c.shapes, got)
		})
	}
	bad := GangsOf([]any{job(vocab.KAISchedulerName, 1, map[string]string{vocab.KAIRequiredPlacementAnnotation: "x"}, keyed)})
	require.Len(t, bad, 1)
	require.True(t, bad[0].KAI)
	require.Error(t, bad[0].Err, "KAI's pod-grouper refuses a placement without a topology")
	require.False(t, bad[0].Run.Gang, "no gang is made of it")
}
