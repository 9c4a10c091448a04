package manifest

import (
	"fmt"
	"sort"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runparams"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// object is what every typed object the build makes is.
type object interface {
	metav1.Object
	runtime.Object
}

// Stop turns a run's objects into their stopped form (runparams.Stopped):
// the form in which no controller starts anything, so a GitOps sync that
// re-applies it, or re-creates an object deleted by hand, never starts the
// run again (docs/gitops.md, "A run's life in Git"). Per kind, the stop its
// controller honours:
//
//   - a RayJob or RayCluster: spec.suspend true. KubeRay deletes a
//     suspended RayJob's cluster and submitter (RayJob Suspending, then
//     Suspended) and a suspended RayCluster's Pods; the object stays, with
//     its status, as the run's record. A RayJob created suspended never
//     creates a cluster.
//   - one Kueue admits (kueue.x-k8s.io/queue-name): left out. Kueue owns
//     spec.suspend and starts a suspended job whose Workload is admitted
//     (jobframework's reconciler, "handle job is suspended"), and without
//     the label its admitted Workload keeps the quota; deleting the object
//     is the one stop Kueue honours (its Workload goes with it). The sync
//     deletes it by pruning.
//   - a RayJob submitted to a RayCluster (clusterSelector): left out;
//     KubeRay refuses suspend for it, and its cluster is suspended.
//   - the dev Pod: left out (a Pod cannot be suspended).
//   - a Deployment: replicas 0.
//
// Every other object (ConfigMaps, Services, DRA objects) stays as it is:
// none runs anything. The returned notes say, per object, what was done.
func Stop(objs []any) ([]any, []string) {
	out := make([]any, 0, len(objs))
	var notes []string
	for _, o := range objs {
		co, ok := o.(object)
		if !ok {
			out = append(out, o)
			continue
		}
		what := kindName(o, co)
		if reason := leftOutWhenStopped(o, co); reason != "" {
			notes = append(notes, what+": left out ("+reason+")")
			continue
		}
		if note := suspend(o); note != "" {
			notes = append(notes, what+": "+note)
		}
		annotations := co.GetAnnotations()
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[vocab.StateAnnotation] = string(runparams.Stopped)
		co.SetAnnotations(annotations)
		out = append(out, o)
	}
	sort.Strings(notes)
	return out, notes
}

// leftOutWhenStopped says why a stopped run renders no such object, "" to
// keep it.
func leftOutWhenStopped(o any, co object) string {
	switch v := o.(type) {
	case *rayv1.RayJob:
		if co.GetLabels()[vocab.KueueQueueLabel] != "" {
			return "Kueue admits it and owns spec.suspend; deleting it stops the run and frees its quota"
		}
		if len(v.Spec.ClusterSelector) > 0 {
			return "a job submitted to a RayCluster cannot be suspended; its cluster is"
		}
	case *rayv1.RayCluster:
		if co.GetLabels()[vocab.KueueQueueLabel] != "" {
			return "Kueue admits it and owns spec.suspend; deleting it stops the run and frees its quota"
		}
	case *corev1.Pod:
		return "a Pod cannot be suspended"
	}
	return ""
}

// suspend sets the stopped form of a kind that has one and says what it did.
func suspend(o any) string {
	switch v := o.(type) {
	case *rayv1.RayJob:
		v.Spec.Suspend = true
		return "spec.suspend: true (KubeRay deletes its cluster and keeps the RayJob as the run's record)"
	case *rayv1.RayCluster:
		v.Spec.Suspend = ptr(true)
		return "spec.suspend: true (KubeRay deletes its Pods)"
	case *appsv1.Deployment:
		v.Spec.Replicas = ptr[int32](0)
		return "spec.replicas: 0"
	}
	return ""
}

func kindName(o any, co object) string {
	kind := co.GetObjectKind().GroupVersionKind().Kind
	if kind == "" {
		kind = fmt.Sprintf("%T", o)
	}
	return kind + " " + co.GetName()
}
