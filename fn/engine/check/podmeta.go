package check

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/workload"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// PodMetadata judges the metadata of the pods KubeRay creates from the
// rendered objects, with the API server's own rules (apimachinery's
// ValidateLabels, ValidateAnnotations and name rules): a RayJob the API
// server admits can still carry a worker label value of 64 characters, a
// groupName KubeRay copies into each pod's ray.io/group label and name, or
// 256 KiB of annotations, and then every pod KubeRay creates is refused
// (FailedToCreate*Pod Events) while the RayJob waits.
func PodMetadata(file string, docs []rendered.Doc) diag.List {
	var ds diag.List
	objs := make([]any, len(docs))
	for i, d := range docs {
		objs[i] = d
		if d.Obj != nil {
			objs[i] = d.Obj
		}
	}
	read, err := workload.Objects(objs)
	if err != nil {
		ds.Errorf(file, "", "pods not judged: %v", err)
		return ds
	}
	pods, _ := workload.Pods(read) // an object that does not decode is Output's error already
	for _, p := range pods {
		where := "output " + p.Object + "." + p.Path + ".metadata"
		if p.Path == "" {
			where = "output " + p.Object + ".metadata"
		}
		meta := field.NewPath("metadata")
		for _, k := range tree.SortedKeys(p.Meta.Labels) {
			for _, e := range metav1validation.ValidateLabels(map[string]string{k: p.Meta.Labels[k]}, meta.Child("labels").Key(k)) {
				ds.Errorf(file, where, "KubeRay creates the %s pods with this label, which the API server refuses: %s; expected %s", p.Role, e.Error(), labelFix(k))
			}
		}
		for _, e := range apivalidation.ValidateAnnotations(p.Meta.Annotations, meta.Child("annotations")) {
			ds.Errorf(file, where, "KubeRay creates the %s pods with these annotations, which the API server refuses: %s; expected valid annotation keys, at most 256 KiB together", p.Role, e.Error())
		}
		if p.GenerateName != "" {
			for _, msg := range apivalidation.NameIsDNSSubdomain(p.GenerateName+"xxxxx", false) {
				ds.Errorf(file, where, "KubeRay names the %s pods %q plus 5 characters, which the API server refuses: %s; expected lower-case letters, digits and '-' in the RayCluster and group names", p.Role, p.GenerateName, msg)
			}
		}
	}
	return ds
}

// labelFix says where a pod label comes from.
func labelFix(key string) string {
	switch key {
	case vocab.RayGroupLabel:
		return "a groupName of at most 63 characters that is a valid label value (KubeRay copies it into every pod's ray.io/group label)"
	case vocab.RayClusterLabel, vocab.RayIdentifierLabel:
		return "a shorter RayCluster or RayJob name (KubeRay copies it into every pod's " + key + " label)"
	}
	return "a label value of at most 63 characters, alphanumerics with '-', '_' or '.' inside, in the pod template's metadata.labels"
}
