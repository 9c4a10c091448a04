package check

import (
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// KubeRay v1.5.0's admission rules for what we emit, restated: its
// controllers/ray/utils package would be the natural call, but it imports a
// controller-runtime that does not build against client-go v0.36.
const (
	maxRayClusterName = 53                    // utils.MaxRayClusterNameLength
	maxRayJobName     = maxRayClusterName - 6 // utils.MaxRayJobNameLength
)

func kubeRayAdmission(obj any) []string {
	var errs []string
	switch t := obj.(type) {
	case *rayv1.RayJob:
		errs = append(errs, nameRule("RayJob", t.Name, maxRayJobName)...)
		if t.Spec.RayClusterSpec == nil && len(t.Spec.ClusterSelector) == 0 {
			errs = append(errs, "one of spec.rayClusterSpec or spec.clusterSelector must be set")
		}
		if len(t.Spec.ClusterSelector) != 0 {
			if t.Spec.ClusterSelector["ray.io/cluster"] == "" {
				errs = append(errs, "spec.clusterSelector[ray.io/cluster] must name the cluster")
			}
			if t.Spec.SubmissionMode == rayv1.SidecarMode {
				errs = append(errs, "spec.clusterSelector is not supported with SidecarMode")
			}
		}
		if t.Spec.RayClusterSpec != nil {
			errs = append(errs, clusterSpecRules(t.Spec.RayClusterSpec)...)
		}
	case *rayv1.RayCluster:
		errs = append(errs, nameRule("RayCluster", t.Name, maxRayClusterName)...)
		errs = append(errs, clusterSpecRules(&t.Spec)...)
	}
	return errs
}

func nameRule(kind, name string, max int) []string {
	var errs []string
	if len(name) > max {
		errs = append(errs, fmt.Sprintf("%s name %q has %d characters; expected at most %d", kind, name, len(name), max))
	}
	for _, e := range validation.IsDNS1035Label(name) {
		errs = append(errs, fmt.Sprintf("%s name %q is not a DNS-1035 label: %s", kind, name, e))
	}
	return errs
}

func clusterSpecRules(spec *rayv1.RayClusterSpec) []string {
	var errs []string
	if len(spec.HeadGroupSpec.Template.Spec.Containers) == 0 {
		errs = append(errs, "headGroupSpec should have at least one container")
	}
	for _, g := range spec.WorkerGroupSpecs {
		if len(g.Template.Spec.Containers) == 0 {
			errs = append(errs, fmt.Sprintf("workerGroupSpec %q should have at least one container", g.GroupName))
		}
	}
	return errs
}
