package kueue

import (
	"strings"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Ray objects in a Kueue queue are judged as Kueue's webhooks judge them,
// and the info names the Workload's PodSets and pods.
func TestCheckObjects(t *testing.T) {
	queued := metav1.ObjectMeta{Name: "r", Labels: map[string]string{vocab.KueueQueueLabel: "q"}}
	groups := func(names ...string) rayv1.RayClusterSpec {
		var s rayv1.RayClusterSpec
		for _, n := range names {
			s.WorkerGroupSpecs = append(s.WorkerGroupSpecs, rayv1.WorkerGroupSpec{GroupName: n, Replicas: ptr.To[int32](2), NumOfHosts: 1})
		}
		return s
	}
	job := func(spec *rayv1.RayClusterSpec, mut func(*rayv1.RayJob)) *rayv1.RayJob {
		j := &rayv1.RayJob{ObjectMeta: queued, Spec: rayv1.RayJobSpec{RayClusterSpec: spec, ShutdownAfterJobFinishes: true}}
		if mut != nil {
			mut(j)
		}
		return j
	}
	seven, six := groups("a", "b", "c", "d", "e", "f", "g"), groups("a", "b", "c", "d", "e", "f")
	auto := groups("a")
	auto.EnableInTreeAutoscaling = ptr.To(true)
	podLabel := groups("a")
	podLabel.WorkerGroupSpecs[0].Template.Labels = map[string]string{vocab.KueuePriorityClassLabel: "p"}
	headLabel := groups("a")
	headLabel.HeadGroupSpec.Template.Labels = map[string]string{vocab.KueueQueueLabel: "q"}
	headLabel.WorkerGroupSpecs[0].Template.Labels = map[string]string{vocab.KueueQueueLabel: "q"}
	const rj, rc = "output RayJob/r spec.rayClusterSpec", "output RayCluster/r spec"
	for _, tc := range []struct {
		name string
		obj  any
		want []string
		info string // a part of the Workload info, when there is one
	}{
		{"job", job(ptr.To(groups("a")), nil), []string{"info " + rj}, "one Workload of 3 pods (PodSets: head 1, a 2)"},
		{"job, no queue", &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: rayv1.RayJobSpec{RayClusterSpec: ptr.To(groups("head"))}}, nil, ""},
		{"job, no cluster spec", job(nil, nil), nil, ""},
		{"job, selector and spec", job(ptr.To(groups("a")), func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"c": "x"} }),
			[]string{"error output RayJob/r spec.clusterSelector"}, ""},
		{"job, selector alone", job(nil, func(j *rayv1.RayJob) { j.Spec.ClusterSelector = map[string]string{"c": "x"} }),
			[]string{"warning output RayJob/r metadata.labels." + vocab.KueueQueueLabel}, ""},
		{"job, kept after finish", job(ptr.To(groups("a")), func(j *rayv1.RayJob) { j.Spec.ShutdownAfterJobFinishes = false }),
			[]string{"error output RayJob/r spec.shutdownAfterJobFinishes", "info " + rj}, ""},
		{"job, autoscaling", job(&auto, nil), []string{"error " + rj + ".enableInTreeAutoscaling", "info " + rj}, ""},
		{"job, submitter, 6 groups", job(&six, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.K8sJobMode }),
			[]string{"info " + rj}, "of 14 pods (PodSets: head 1, a 2, b 2, c 2, d 2, e 2, f 2, submitter 1)"},
		{"job, submitter, 7 groups", job(&seven, func(j *rayv1.RayJob) { j.Spec.SubmissionMode = rayv1.K8sJobMode }),
			[]string{"error " + rj + ".workerGroupSpecs", "info " + rj}, ""},
		{"job, pod label", &rayv1.RayJob{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: rayv1.RayJobSpec{RayClusterSpec: &podLabel}},
			[]string{"warning " + rj + ".workerGroupSpecs[0].template.metadata.labels." + vocab.KueuePriorityClassLabel}, ""},
		{"cluster, pod labels, one warning", &rayv1.RayCluster{ObjectMeta: queued, Spec: headLabel},
			[]string{"warning " + rc + ".headGroupSpec.template.metadata.labels." + vocab.KueueQueueLabel, "info " + rc}, ""},
		{"cluster, 7 groups", &rayv1.RayCluster{ObjectMeta: queued, Spec: seven}, []string{"info " + rc}, "of 15 pods"},
		{"cluster, 8 groups and head name", &rayv1.RayCluster{ObjectMeta: queued, Spec: groups("a", "b", "c", "d", "e", "f", "g", "head")},
			[]string{"error " + rc + ".workerGroupSpecs", "error " + rc + ".workerGroupSpecs[7].groupName", "info " + rc}, ""},
		{"cluster, no queue", &rayv1.RayCluster{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: groups("head")}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := Integration{}.CheckObjects("out.yaml", []any{tc.obj})
			require.Equal(t, tc.want, findings(ds))
			if tc.info != "" {
				require.True(t, strings.Contains(ds[len(ds)-1].Message, tc.info), ds[len(ds)-1].Message)
			}
		})
	}
}
