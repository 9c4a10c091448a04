package registry

import (
	"fmt"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

type errs []string

func (e *errs) Errorf(field, format string, args ...any) {
	*e = append(*e, field+": "+fmt.Sprintf(format, args...))
}

func TestKinds(t *testing.T) {
	require.Equal(t, []string{"kai", "kueue", "default"}, Kinds(), "scheduler.kind's enumeration, in the profile schema's order")
	_, ok := Of("volcano")
	require.False(t, ok)
	for _, k := range Kinds() {
		s, ok := Of(k)
		require.True(t, ok, k)
		require.Equal(t, k, s.Kind())
	}
}

// Each integration judges its own keys, whichever kind is selected, in
// registry order.
func TestValidate(t *testing.T) {
	q := func(s string) *string { return &s }
	cases := []struct {
		name string
		p    scheduler.Profile
		want []string
	}{
		{name: "default needs no queue", p: scheduler.Profile{Kind: "default"}},
		{name: "kai needs a queue", p: scheduler.Profile{Kind: "kai"},
			want: []string{"scheduler.queue: infra.scheduler.queue is required when scheduler.kind=kai"}},
		{name: "kai's queue is a label value", p: scheduler.Profile{Kind: "kai", Queue: q("a b")},
			want: []string{`scheduler.queue: found "a b"; expected a queue name usable as the label value of kai.scheduler/queue: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{name: "KAI's topology under kueue, then Kueue's own keys", p: scheduler.Profile{Kind: "kueue", Queue: q("lab"), Suspend: true,
			Topology: &scheduler.Topology{Topology: "t", RequiredPlacement: "rack"}},
			want: []string{
				`scheduler.topology: is set but scheduler.kind is "kueue"; expected kind kai (KAI's pod-grouper is what reads it); with Kueue admitting, keep kind kai and name the LocalQueue in scheduler.kueue.queue`,
				"launch.rayjob.suspend: is true but scheduler.kind is kueue; expected false (unset): Kueue's webhook suspends the RayJob when it is created and unsuspends it on admission, while a suspend: true kept in Git sets spec.suspend again on every later apply of the same manifests, and KubeRay then deletes the admitted run's cluster",
			}},
		{name: "Kueue beside KAI names its LocalQueue", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{}},
			want: []string{"scheduler.kueue.queue: is empty; expected the LocalQueue in the run's namespace that admits the run"}},
		{name: "dispatch needs Kueue alone", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Dispatch: q("multikueue")},
			want: []string{`scheduler.dispatch: is set but scheduler.kind is "kai"; expected kind kueue with a queue (dispatch is how Kueue's admitted object reaches a cluster), or scheduler.kueue.dispatch beside KAI`}},
		{name: "dispatch names MultiKueue", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{Queue: "lab", Dispatch: q("argo")}},
			want: []string{`scheduler.kueue.dispatch: found "argo"; expected multikueue (Kueue's MultiKueue copies the admitted RayJob or RayCluster to a worker cluster), or unset to run on the cluster it is applied to`}},
		{name: "dispatch under kueue", p: scheduler.Profile{Kind: "kueue", Queue: q("lab"), Dispatch: q("multikueue")}},
		{name: "scheduler.kueue needs kind kai", p: scheduler.Profile{Kind: "default", Kueue: &scheduler.KueueBeside{Queue: "lab"}},
			want: []string{`scheduler.kueue: is set but scheduler.kind is "default"; expected kind kai (scheduler.kueue is Kueue's admission beside KAI's placement); for Kueue alone write scheduler: {kind: kueue, queue: Q}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got errs
			Validate(c.p, &got)
			require.Equal(t, errs(c.want), got)
		})
	}
}

// What the render writes for each way of naming a scheduler.
func TestRender(t *testing.T) {
	q := func(s string) *string { return &s }
	topo := &scheduler.Topology{Topology: "t", RequiredPlacement: "nvidia.com/gpu.clique"}
	cases := []struct {
		name        string
		p           scheduler.Profile
		set         map[string]string
		drop        []string
		owner       map[string]string
		annotations map[string]string
		podSched    string
		managedBy   string
	}{
		{name: "default", p: scheduler.Profile{Kind: "default"}},
		{name: "kai", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Topology: topo},
			set:         map[string]string{"kai.scheduler/queue": "rl"},
			annotations: map[string]string{"kai.scheduler/topology": "t", "kai.scheduler/topology-required-placement": "nvidia.com/gpu.clique"},
			podSched:    "kai-scheduler"},
		{name: "kueue alone drops KAI's queue label", p: scheduler.Profile{Kind: "kueue", Queue: q("lab"), WorkloadPriorityClass: q("high")},
			drop:  []string{"kai.scheduler/queue"},
			owner: map[string]string{"kueue.x-k8s.io/queue-name": "lab", "kueue.x-k8s.io/priority-class": "high"}},
		{name: "kueue beside kai", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{Queue: "lab"}},
			set:      map[string]string{"kai.scheduler/queue": "rl"},
			owner:    map[string]string{"kueue.x-k8s.io/queue-name": "lab"},
			podSched: "kai-scheduler"},
		{name: "kueue dispatched by MultiKueue", p: scheduler.Profile{Kind: "kueue", Queue: q("lab"), Dispatch: q("multikueue")},
			drop:      []string{"kai.scheduler/queue"},
			owner:     map[string]string{"kueue.x-k8s.io/queue-name": "lab"},
			managedBy: "kueue.x-k8s.io/multikueue"},
		{name: "kueue beside kai dispatched by MultiKueue", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{Queue: "lab", Dispatch: q("multikueue")}},
			set:       map[string]string{"kai.scheduler/queue": "rl"},
			owner:     map[string]string{"kueue.x-k8s.io/queue-name": "lab"},
			podSched:  "kai-scheduler",
			managedBy: "kueue.x-k8s.io/multikueue"},
		{name: "dispatch without Kueue's admission writes nothing", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Dispatch: q("multikueue")},
			set:      map[string]string{"kai.scheduler/queue": "rl"},
			podSched: "kai-scheduler"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.managedBy, OwnerManagedBy(c.p))
			set, drop, err := ProfileLabels(c.p)
			require.NoError(t, err)
			require.Equal(t, c.set, set)
			require.Equal(t, c.drop, drop)
			require.Equal(t, c.owner, OwnerLabels(c.p))
			require.Equal(t, c.annotations, OwnerAnnotations(c.p))
			pod := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"kai.scheduler/topology": "x"}}}
			require.NoError(t, Pod(c.p, "f", &pod))
			require.Equal(t, c.podSched, pod.Spec.SchedulerName)
			_, kept := pod.Annotations["kai.scheduler/topology"]
			require.Equal(t, c.p.Kind != "kueue", kept, "Kueue alone drops KAI's topology from a pod KAI does not place")
		})
	}
	_, _, err := ProfileLabels(scheduler.Profile{Kind: "kai", Queue: q("rl"), Labels: map[string]string{"kai.scheduler/queue": "other"}})
	require.Equal(t, &scheduler.FieldError{Field: "labels.kai.scheduler/queue", Msg: `is "other" but scheduler.queue is "rl"; expected one queue (drop the label: scheduler.queue sets it)`}, err)
	pod := corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: "volcano"}}
	err = Pod(scheduler.Profile{Kind: "kai", Queue: q("rl")}, "kuberay.training.headGroupSpec.template", &pod)
	require.Equal(t, &scheduler.FieldError{Field: "kuberay.training.headGroupSpec.template.spec.schedulerName", Msg: `is "volcano" but scheduler.kind is kai; expected kai-scheduler or no schedulerName`}, err)
}

// Kueue's webhooks, at check's Objects gate: an autoscaling RayCluster in a
// Kueue queue is refused; the same cluster in no queue is no Kueue matter.
func TestCheckObjects(t *testing.T) {
	cluster := func(labels map[string]string) *rayv1.RayCluster {
		return &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: labels},
			Spec: rayv1.RayClusterSpec{EnableInTreeAutoscaling: ptr.To(true)}}
	}
	cases := []struct {
		name   string
		labels map[string]string
		errors int
	}{
		{name: "queued: refused", labels: map[string]string{"kueue.x-k8s.io/queue-name": "lab"}, errors: 1},
		{name: "not queued", errors: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := CheckObjects("p.yaml", []any{cluster(c.labels)})
			var errs []string
			for _, d := range ds {
				if d.Severity == diag.Error {
					errs = append(errs, d.Field+": "+d.Message)
				}
			}
			require.Len(t, errs, c.errors, "%v", errs)
			if c.errors > 0 {
				require.Contains(t, errs[0], "output RayCluster/c spec.enableInTreeAutoscaling: is true on RayCluster/c in Kueue queue lab; Kueue's webhook refuses autoscaling")
			}
		})
	}
}

// Status reads go in API group order whatever the registry's: Kueue's
// Workloads, then KAI's PodGroups (their refused lists print that way).
func TestStatusReadsOrder(t *testing.T) {
	var got []string
	for _, r := range StatusReads() {
		got = append(got, r.Resource.Group+"/"+r.Resource.Resource)
	}
	require.Equal(t, []string{"kueue.x-k8s.io/workloads", "scheduling.run.ai/podgroups"}, got)
}

// The chart's queue knobs find Kueue's keys through the registry, however
// the profile names Kueue (and the top-level keys where it does not).
func TestAdmissionKeys(t *testing.T) {
	q := func(s string) *string { return &s }
	cases := []struct {
		name     string
		p        scheduler.Profile
		priority string
		selected bool
		beside   bool
	}{
		{name: "kueue alone", p: scheduler.Profile{Kind: "kueue", Queue: q("lab")}, priority: "scheduler.workloadPriorityClass", selected: true},
		{name: "kueue beside kai", p: scheduler.Profile{Kind: "kai", Queue: q("rl"), Kueue: &scheduler.KueueBeside{Queue: "lab"}}, priority: "scheduler.kueue.workloadPriorityClass", beside: true},
		{name: "kai alone", p: scheduler.Profile{Kind: "kai", Queue: q("rl")}, priority: "scheduler.kueue.workloadPriorityClass"},
		{name: "default", p: scheduler.Profile{Kind: "default"}, priority: "scheduler.workloadPriorityClass"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := AdmissionKeys(c.p)
			require.Equal(t, c.priority, got.PriorityClass)
			require.Equal(t, c.selected, got.Selected)
			require.Equal(t, c.beside, got.Beside)
		})
	}
}
