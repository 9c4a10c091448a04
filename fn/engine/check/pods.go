package check

import (
	"fmt"
	"slices"
	"strings"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podRules are the API server's pod and workload rules that a profile's
// embedded specs can break and that a typed decode cannot see. (The API
// server's full pod validation lives in k8s.io/kubernetes, which is not a
// library; the real-server test tier checks the rest.)
func podRules(obj any) field.ErrorList {
	var errs field.ErrorList
	switch t := obj.(type) {
	case *rayv1.RayJob:
		if t.Spec.RayClusterSpec != nil {
			errs = append(errs, rayClusterPods(t.Spec.RayClusterSpec, field.NewPath("spec", "rayClusterSpec"))...)
		}
	case *rayv1.RayCluster:
		errs = append(errs, rayClusterPods(&t.Spec, field.NewPath("spec"))...)
	case *appsv1.Deployment:
		p := field.NewPath("spec")
		if t.Spec.Replicas != nil && *t.Spec.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), *t.Spec.Replicas, "must be greater than or equal to 0"))
		}
		errs = append(errs, podSpecRules(&t.Spec.Template.Spec, p.Child("template", "spec"))...)
	case *corev1.Pod:
		errs = append(errs, podSpecRules(&t.Spec, field.NewPath("spec"))...)
	}
	return errs
}

func rayClusterPods(spec *rayv1.RayClusterSpec, p *field.Path) field.ErrorList {
	errs := podSpecRules(&spec.HeadGroupSpec.Template.Spec, p.Child("headGroupSpec", "template", "spec"))
	for i, g := range spec.WorkerGroupSpecs {
		gp := p.Child("workerGroupSpecs").Index(i)
		for _, c := range []struct {
			name string
			v    *int32
		}{{"replicas", g.Replicas}, {"minReplicas", g.MinReplicas}, {"maxReplicas", g.MaxReplicas}, {"numOfHosts", &g.NumOfHosts}} {
			if c.v != nil && *c.v < 0 {
				errs = append(errs, field.Invalid(gp.Child(c.name), *c.v, "must be greater than or equal to 0"))
			}
		}
		errs = append(errs, podSpecRules(&g.Template.Spec, gp.Child("template", "spec"))...)
	}
	return errs
}

func podSpecRules(spec *corev1.PodSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if spec.Resources != nil {
		// Pod-level resources take only cpu, memory and hugepages; a
		// container's `resources:` block dedented by one level lands here.
		rp := p.Child("resources")
		for _, kind := range []struct {
			name string
			list corev1.ResourceList
		}{{"requests", spec.Resources.Requests}, {"limits", spec.Resources.Limits}} {
			for _, name := range sortedResources(kind.list) {
				if name != corev1.ResourceCPU && name != corev1.ResourceMemory && !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) {
					errs = append(errs, field.Invalid(rp.Child(kind.name).Key(string(name)), string(name),
						"pod-level resources take only cpu, memory and hugepages-<size>; is a container's resources: block indented one level too little?"))
				}
			}
		}
	}
	for i, c := range spec.ResourceClaims {
		// The API server refuses a pod claim with no source or two; KubeRay
		// would create no pod of the group (FailedToCreate* Events only).
		cp := p.Child("resourceClaims").Index(i)
		switch {
		case c.ResourceClaimTemplateName == nil && c.ResourceClaimName == nil:
			errs = append(errs, field.Required(cp, fmt.Sprintf("pod claim %q has no source; expected resourceClaimTemplateName (a claim per pod) or resourceClaimName (an existing shared claim): the API server refuses every pod built from it", c.Name)))
		case c.ResourceClaimTemplateName != nil && c.ResourceClaimName != nil:
			errs = append(errs, field.Invalid(cp, c.Name, "sets both resourceClaimTemplateName and resourceClaimName; expected exactly one (the API server refuses the pod)"))
		}
	}
	podClaims := make([]string, 0, len(spec.ResourceClaims))
	for _, c := range spec.ResourceClaims {
		podClaims = append(podClaims, c.Name)
	}
	for _, set := range []struct {
		name string
		list []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range set.list {
			cp := p.Child(set.name).Index(i)
			errs = append(errs, containerRules(&set.list[i], cp)...)
			// The API server refuses a container claim that names no pod
			// claim (the operator tier saw KubeRay's FailedToCreateWorkerPod
			// for it); a claim copied into a template whose pod does not
			// declare it is the usual cause.
			for j, c := range set.list[i].Resources.Claims {
				if !slices.Contains(podClaims, c.Name) {
					errs = append(errs, field.Invalid(cp.Child("resources", "claims").Index(j).Child("name"), c.Name,
						fmt.Sprintf("names no claim of the pod; expected one of its resourceClaims %v: the API server refuses every pod built from it", podClaims)))
				}
			}
		}
	}
	return errs
}

func containerRules(c *corev1.Container, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, kind := range []struct {
		name string
		list corev1.ResourceList
	}{{"requests", c.Resources.Requests}, {"limits", c.Resources.Limits}} {
		for _, name := range sortedResources(kind.list) {
			if q := kind.list[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Child("resources", kind.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for i, e := range c.Env {
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(p.Child("env").Index(i), e.Name, fmt.Sprintf("env %s sets both value and valueFrom; expected one", e.Name)))
		}
	}
	return errs
}

func sortedResources(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
