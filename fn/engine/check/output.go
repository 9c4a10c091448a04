package check

import (
	"encoding/json"
	"fmt"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/strictjson"
)

// MaxObjectBytes is etcd's default request limit (--max-request-bytes,
// 1.5 MiB): a bigger object is refused when it is stored, whatever the API
// server's own 3 MiB body limit allows.
const MaxObjectBytes = 3 << 19

// customObject reads the metadata of a kind we have no Go type for
// (ComputeDomain: its schema is checked by the API server tier of tests).
type customObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              json.RawMessage `json:"spec,omitempty"`
}

// Output re-reads every emitted document strictly into its Kubernetes type
// (an unknown field fails), validates its metadata with apimachinery's own
// rules, its pods with the API server's rules that a profile can break, and
// runs KubeRay's admission rules: a manifest the operator or the API server
// would refuse never leaves the tool.
func Output(file string, docs []rendered.Doc) diag.List {
	var ds diag.List
	for _, d := range docs {
		where := fmt.Sprintf("output %s/%s", d.Kind, d.Name)
		b, err := json.Marshal(d.Data)
		if err != nil {
			ds.Errorf(file, where, "%v", err)
			continue
		}
		if len(b) > MaxObjectBytes {
			ds.Errorf(file, where, "is %d bytes; expected at most %d (etcd's default request limit): look for a huge env value or entrypoint", len(b), MaxObjectBytes)
			continue
		}
		target, nameRule := typeOf(d.Kind)
		strict, err := strictjson.Unmarshal(b, d.Data, target)
		if err != nil {
			ds.Errorf(file, where, "does not decode as %s: %v", d.Kind, err)
			continue
		}
		for _, e := range strict {
			ds.Errorf(file, where, "%v", e)
		}
		meta := target.(metav1.Object)
		for _, e := range apivalidation.ValidateObjectMetaAccessor(meta, true, nameRule, field.NewPath("metadata")) {
			ds.Errorf(file, where+"."+e.Field, "%s", e.ErrorBody())
		}
		for _, e := range podRules(target) {
			ds.Errorf(file, where+"."+e.Field, "%s", e.ErrorBody())
		}
		for _, e := range KubeRayRules(target) {
			ds.Errorf(file, where, "KubeRay would reject it: %s", e)
		}
	}
	return ds
}

// typeOf is the Go type a kind decodes into and its object-name rule.
func typeOf(kind string) (any, apivalidation.ValidateNameFunc) {
	switch kind {
	case "RayJob":
		return &rayv1.RayJob{}, apivalidation.NameIsDNS1035Label
	case "RayCluster":
		return &rayv1.RayCluster{}, apivalidation.NameIsDNS1035Label
	case "Deployment":
		return &appsv1.Deployment{}, apivalidation.NameIsDNSSubdomain
	case "Service":
		// Service names are DNS labels (63 characters), not subdomains.
		return &corev1.Service{}, apivalidation.NameIsDNS1035Label
	case "Pod":
		return &corev1.Pod{}, apivalidation.NameIsDNSSubdomain
	case "ResourceClaimTemplate":
		return &resourcev1.ResourceClaimTemplate{}, apivalidation.NameIsDNSSubdomain
	case "ConfigMap":
		// launch.recipeSource=configMap (fn/engine/manifest/recipecm.go).
		return &corev1.ConfigMap{}, apivalidation.NameIsDNSSubdomain
	}
	return &customObject{}, apivalidation.NameIsDNSSubdomain
}
