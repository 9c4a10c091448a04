package kai

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
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// job is a RayJob of groups one-pod GPU worker groups claiming one
// ComputeDomain, each template kept in one clique (unless bare), as the
// GB300 qwen3 profile renders with segmentSize 1.
func job(sched string, groups int, owner map[string]string, bare bool) *rayv1.RayJob {
	spec := &rayv1.RayClusterSpec{HeadGroupSpec: rayv1.HeadGroupSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: sched}}}}
	for i := range groups {
		w := rayv1.WorkerGroupSpec{GroupName: "gpu-segment-" + string(rune('0'+i)), Replicas: ptr.To[int32](1), Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{
				SchedulerName:  sched,
				ResourceClaims: []corev1.PodResourceClaim{{Name: vocab.ComputeDomainClaim}},
				Containers: []corev1.Container{{Name: "w", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}},
			},
		}}
		if !bare {
			w.Template.Annotations = map[string]string{vocab.KAITopologyAnnotation: "gb300-topology", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}
		}
		spec.WorkerGroupSpecs = append(spec.WorkerGroupSpecs, w)
	}
	return &rayv1.RayJob{TypeMeta: metav1.TypeMeta{APIVersion: "ray.io/v1", Kind: "RayJob"}, ObjectMeta: metav1.ObjectMeta{Name: "r", Annotations: owner}, Spec: rayv1.RayJobSpec{RayClusterSpec: spec}}
}

func queued(j *rayv1.RayJob) *rayv1.RayJob {
	j.Labels = map[string]string{vocab.KueueQueueLabel: "lab-queue"}
	return j
}

// Every finding KAI's integration makes of the built objects: its
// severity, field and a part of its message, in the order made.
func TestCheckObjects(t *testing.T) {
	const at = "output RayJob/r spec.rayClusterSpec"
	clique := map[string]string{vocab.KAITopologyAnnotation: "gb300-topology", vocab.KAIRequiredPlacementAnnotation: "nvidia.com/gpu.clique"}
	one := job(vocab.KAISchedulerName, 1, nil, false)
	one.Spec.RayClusterSpec.WorkerGroupSpecs[0].Replicas = ptr.To[int32](4)
	type finding struct {
		sev       diag.Severity
		field, in string
	}
	for _, tc := range []struct {
		name string
		objs []any
		want []finding
	}{
		{"four one-pod groups under KAI: each kept in a clique alone", []any{job(vocab.KAISchedulerName, 4, nil, false)}, []finding{
			{diag.Info, at, "a PodGroup of 5 pods, all or nothing, with run-wide topology none"},
			{diag.Warning, at, "the ComputeDomain of RayJob/r spans 4 pods in worker groups gpu-segment-0, gpu-segment-1, gpu-segment-2, gpu-segment-3, and no required topology constraint keeps them in one domain"}}},
		// The PodGroup's constraint binds the CPU head too, as preflight
		// places it (fn/analyse/placement): a head whose nodes lack the
		// level keeps the whole gang waiting.
		{"a run-wide required placement keeps them together", []any{job(vocab.KAISchedulerName, 4, clique, false)}, []finding{
			{diag.Info, at, "run-wide topology required nvidia.com/gpu.clique (topology gb300-topology)"},
			{diag.Warning, at, "KAI's run-wide required placement (nvidia.com/gpu.clique) binds every pod of RayJob/r's PodGroup, the head's included: the head must run on a node carrying nvidia.com/gpu.clique, in the workers' domain, or KAI places none of the run (all or nothing); a CPU head's pool seldom carries a GPU level (preflight --nodes tells, on the cluster); expected the level required on the worker groups instead (their pod templates' kai.scheduler/topology-required-placement; one worker group, segmentSize at least its replicas, keeps them in one domain), unless the head's nodes are in the domain"}}},
		{"one group is kept together by its own constraint", []any{one}, []finding{{diag.Info, at, "a PodGroup of 5 pods"}}},
		{"a placement without a topology is what KAI refuses", []any{job(vocab.KAISchedulerName, 1, map[string]string{vocab.KAIRequiredPlacementAnnotation: "x"}, false)}, []finding{
			{diag.Error, at, "KAI's pod-grouper refuses a placement without a topology"}}},
		{"no gang scheduler: partial placement, a ComputeDomain nothing keeps together", []any{job("", 2, nil, false)}, []finding{
			{diag.Warning, at, "RayJob/r has 2 GPU pods and no gang scheduler (its pods go to default-scheduler)"},
			{diag.Warning, at, "the ComputeDomain of RayJob/r spans 2 pods in worker groups gpu-segment-0, gpu-segment-1, and nothing keeps them in one NVLink domain: its pods go to default-scheduler, which reads no topology, so"}}},
		{"Kueue admits the run whole; nothing keeps its ComputeDomain together", []any{queued(job("", 2, nil, false))}, []finding{
			{diag.Warning, at, "the ComputeDomain of RayJob/r spans 2 pods in worker groups gpu-segment-0, gpu-segment-1, and nothing keeps them in one NVLink domain: its pods go to default-scheduler, which reads no topology (Kueue, through LocalQueue lab-queue, admits the run against quota and places no pod)"}}},
		{"one GPU pod is its own gang", []any{job("", 1, nil, false)}, nil},
		{"one pod is in one domain", []any{queued(job("", 1, nil, false))}, nil},
		{"one run, two schedulers", []any{job(vocab.KAISchedulerName, 1, nil, false), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "sandbox"}}}, []finding{
			{diag.Info, at, "a PodGroup of 2 pods"},
			{diag.Warning, "", "the run's pods go to 2 schedulers: default-scheduler (Deployment/sandbox); kai-scheduler (RayJob/r)"}}},
		{"a ComputeDomain under KAI without topology, segments once", []any{job(vocab.KAISchedulerName, 2, nil, true)}, []finding{
			{diag.Warning, at + ".workerGroupSpecs[0].template.metadata.annotations", `worker group "gpu" claims a ComputeDomain spanning nodes but has no kai.scheduler/topology annotation`},
			{diag.Info, at, "a PodGroup of 3 pods, all or nothing, with run-wide topology none; subgroups (pods, topology that keeps each together): headgroup 1 (none), gpu-segment-0 1 (none), gpu-segment-1 1 (none)"},
			{diag.Warning, at, "the ComputeDomain of RayJob/r spans 2 pods"}}},
		{"a ComputeDomain on the default scheduler: no annotation would keep it", []any{job("", 1, nil, true)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Integration{}.CheckObjects("p.yaml", tc.objs)
			require.Len(t, ds, len(tc.want), "%v", ds)
			for i, w := range tc.want {
				require.Equal(t, w.sev, ds[i].Severity, ds[i].Message)
				require.Equal(t, "p.yaml", ds[i].File)
				require.Equal(t, w.field, ds[i].Field, ds[i].Message)
				require.True(t, strings.Contains(ds[i].Message, w.in), "%q lacks %q", ds[i].Message, w.in)
			}
		})
	}
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
		{name: "each worker group kept in a clique alone", job: job(vocab.KAISchedulerName, 2, nil, false), gang: true, members: 3,
			shapes: []shape{{"RayJob/r head", 1, 1, ""}, {"RayJob/r worker group gpu-segment-0", 1, 1, "nvidia.com/gpu.clique"}, {"RayJob/r worker group gpu-segment-1", 1, 1, "nvidia.com/gpu.clique"}}},
		{name: "a run-wide level binds every pod", job: job(vocab.KAISchedulerName, 1, owner, false), gang: true, members: 2, required: "nvidia.com/gpu.clique",
			shapes: []shape{{"RayJob/r head", 1, 1, ""}, {"RayJob/r worker group gpu-segment-0", 1, 1, "nvidia.com/gpu.clique"}}},
		{name: "no KAI: no gang", job: job("", 2, nil, false),
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
	bad := GangsOf([]any{job(vocab.KAISchedulerName, 1, map[string]string{vocab.KAIRequiredPlacementAnnotation: "x"}, false)})
	require.Len(t, bad, 1)
	require.True(t, bad[0].KAI)
	require.Error(t, bad[0].Err, "KAI's pod-grouper refuses a placement without a topology")
	require.False(t, bad[0].Run.Gang, "no gang is made of it")
}
