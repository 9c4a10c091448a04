package manifest

import (
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Each kind's stopped form: suspended, scaled to zero, left out, or kept
// as it is; whatever stays carries the stopped state.
func TestStop(t *testing.T) {
	meta := func(kind, name string, labels map[string]string) (metav1.TypeMeta, metav1.ObjectMeta) {
		return metav1.TypeMeta{Kind: kind}, metav1.ObjectMeta{Name: name, Labels: labels}
	}
	kueue := map[string]string{vocab.KueueQueueLabel: "q"}
	job := func(labels map[string]string, selector map[string]string) *rayv1.RayJob {
		tm, om := meta("RayJob", "j", labels)
		return &rayv1.RayJob{TypeMeta: tm, ObjectMeta: om, Spec: rayv1.RayJobSpec{ClusterSelector: selector}}
	}
	cluster := func(labels map[string]string) *rayv1.RayCluster {
		tm, om := meta("RayCluster", "c", labels)
		return &rayv1.RayCluster{TypeMeta: tm, ObjectMeta: om}
	}
	tm, om := meta("Deployment", "d", nil)
	dep := &appsv1.Deployment{TypeMeta: tm, ObjectMeta: om, Spec: appsv1.DeploymentSpec{Replicas: ptr[int32](2)}}
	tm, om = meta("ConfigMap", "cm", nil)
	cm := &corev1.ConfigMap{TypeMeta: tm, ObjectMeta: om}
	tm, om = meta("Pod", "p", nil)
	pod := &corev1.Pod{TypeMeta: tm, ObjectMeta: om}
	for _, tc := range []struct {
		name string
		obj  any
		kept func(any) bool // the stopped form, nil: left out
		note string
	}{
		{"RayJob", job(nil, nil), func(o any) bool { return o.(*rayv1.RayJob).Spec.Suspend }, "RayJob j: spec.suspend: true (KubeRay deletes its cluster and keeps the RayJob as the run's record)"},
		{"RayJob Kueue admits", job(kueue, nil), nil, "RayJob j: left out (Kueue admits it and owns spec.suspend; deleting it stops the run and frees its quota)"},
		{"RayJob on a RayCluster", job(nil, map[string]string{"ray.io/cluster": "c"}), nil, "RayJob j: left out (a job submitted to a RayCluster cannot be suspended; its cluster is)"},
		{"RayCluster", cluster(nil), func(o any) bool { return *o.(*rayv1.RayCluster).Spec.Suspend }, "RayCluster c: spec.suspend: true (KubeRay deletes its Pods)"},
		{"RayCluster Kueue admits", cluster(kueue), nil, "RayCluster c: left out (Kueue admits it and owns spec.suspend; deleting it stops the run and frees its quota)"},
		{"Deployment", dep, func(o any) bool { return *o.(*appsv1.Deployment).Spec.Replicas == 0 }, "Deployment d: spec.replicas: 0"},
		{"Pod", pod, nil, "Pod p: left out (a Pod cannot be suspended)"},
		{"ConfigMap", cm, func(any) bool { return true }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, notes := Stop([]any{tc.obj})
			if tc.note == "" {
				require.Empty(t, notes)
			} else {
				require.Equal(t, []string{tc.note}, notes)
			}
			if tc.kept == nil {
				require.Empty(t, out)
				return
			}
			require.Len(t, out, 1)
			require.True(t, tc.kept(out[0]))
			require.Equal(t, "stopped", out[0].(object).GetAnnotations()[vocab.StateAnnotation])
		})
	}
}
