package check

import (
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kjson "sigs.k8s.io/json"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/emit"
)

// Output re-reads every emitted document strictly into its Kubernetes type
// (an unknown field fails) and runs KubeRay's own admission checks, so a
// manifest the operator or API server would reject never leaves the tool.
func Output(file string, docs []emit.Doc) diag.List {
	var ds diag.List
	for _, d := range docs {
		where := fmt.Sprintf("output %s/%s", d.Kind, d.Name)
		b, err := json.Marshal(d.Data)
		if err != nil {
			ds.Errorf(file, where, "%v", err)
			continue
		}
		nameRule := validation.IsDNS1123Subdomain
		if d.Kind == "Service" {
			// Service names are DNS labels (63 characters), not subdomains.
			nameRule = validation.IsDNS1035Label
		}
		for _, e := range nameRule(d.Name) {
			ds.Errorf(file, where+".metadata.name", "%q is not a valid object name: %s", d.Name, e)
		}
		var target any
		switch d.Kind {
		case "RayJob":
			target = &rayv1.RayJob{}
		case "RayCluster":
			target = &rayv1.RayCluster{}
		case "Deployment":
			target = &appsv1.Deployment{}
		case "Service":
			target = &corev1.Service{}
		case "Pod":
			target = &corev1.Pod{}
		case "ResourceClaimTemplate":
			target = &resourcev1.ResourceClaimTemplate{}
		default:
			continue // ComputeDomain: checked against its CRD schema in tests
		}
		strict, err := kjson.UnmarshalStrict(b, target)
		if err != nil {
			ds.Errorf(file, where, "does not decode as %s: %v", d.Kind, err)
			continue
		}
		for _, e := range strict {
			ds.Errorf(file, where, "%v", e)
		}
		for _, e := range kubeRayAdmission(target) {
			ds.Errorf(file, where, "KubeRay would reject it: %s", e)
		}
	}
	return ds
}
