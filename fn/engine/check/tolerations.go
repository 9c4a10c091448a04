package check

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/capacity"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Tolerations warns about key-less Exists tolerations on the run's pods:
// each Ray cluster's head and worker groups (the segments of one group
// once) and each Deployment. How the pods are scheduled together is the
// scheduler integrations' to say (fn/scheduler/..., CheckObjects).
func Tolerations(file string, objs []any) diag.List {
	var ds diag.List
	read, err := workload.Objects(objs)
	if err != nil {
		// Objects that do not decode are Output's finding.
		return nil
	}
	clusters, _ := workload.Clusters(read)
	for _, c := range clusters {
		clusterTolerations(&ds, file, c)
	}
	for _, o := range objs {
		if t, ok := o.(*appsv1.Deployment); ok {
			ref := "Deployment/" + t.Name
			keylessExists(&ds, file, "output "+ref+" spec.template.spec.tolerations", ref, t.Spec.Template.Spec.Tolerations)
		}
	}
	return ds
}

func clusterTolerations(ds *diag.List, file string, c workload.Cluster) {
	ref, spec := c.Object, c.Spec
	where := "output " + ref + " " + c.Path
	keylessExists(ds, file, where+".headGroupSpec.template.spec.tolerations", ref+" head", spec.HeadGroupSpec.Template.Spec.Tolerations)
	warned := map[string]bool{}
	for i := range spec.WorkerGroupSpecs {
		g := &spec.WorkerGroupSpecs[i]
		what := ref + " worker group " + capacity.GroupOf(g.GroupName)
		if !warned[what] {
			warned[what] = keylessExists(ds, file, fmt.Sprintf("%s.workerGroupSpecs[%d].template.spec.tolerations", where, i), what, g.Template.Spec.Tolerations)
		}
	}
}

// keylessExists warns about a toleration without a key and operator
// Exists: it tolerates every taint, cordon (node.kubernetes.io/unschedulable)
// and NotReady included.
func keylessExists(ds *diag.List, file, field, what string, tols []corev1.Toleration) bool {
	for _, t := range tols {
		if t.Key == "" && t.Operator == corev1.TolerationOpExists {
			ds.Warnf(file, field, "%s tolerates every taint ({operator: Exists} without a key), node.kubernetes.io/unschedulable and not-ready included: its pods are placed on cordoned and failing nodes; expected keyed tolerations, e.g. {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}", what)
			return true
		}
	}
	return false
}
