package placement

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// PodRequests is the pod's requests as the API server defaults them before
// anyone counts them: a container limit without a request is its request
// (core/v1 defaulting), then component-helpers' PodRequests (init
// containers, sidecars, overhead).
func PodRequests(pod *corev1.Pod) corev1.ResourceList {
	p := pod.DeepCopy()
	defaultRequests := func(cs []corev1.Container) {
		for i := range cs {
			r := &cs[i].Resources
			names := make([]string, 0, len(r.Limits))
			for n := range r.Limits {
				names = append(names, string(n))
			}
			sort.Strings(names)
			for _, n := range names {
				if _, ok := r.Requests[corev1.ResourceName(n)]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[corev1.ResourceName(n)] = r.Limits[corev1.ResourceName(n)]
				}
			}
		}
	}
	defaultRequests(p.Spec.Containers)
	defaultRequests(p.Spec.InitContainers)
	return resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
}

// maxQuantity bounds a value of a cluster's (a quota, an allocatable): 10^18 (1E) of any unit is more than
// any cluster holds (an exabyte of memory, a million million GPUs).
var maxQuantity = resource.MustParse("1E")

// InRange refuses a quantity of the server's no cluster has: negative, or
// over maxQuantity. shown is the value as the answer wrote it.
func InRange(q resource.Quantity, shown string) error {
	switch {
	case q.Sign() < 0:
		return fmt.Errorf("is %s: negative, expected a quantity from 0 to %s", shown, maxQuantity.String())
	case q.Cmp(maxQuantity) > 0:
		return fmt.Errorf("is %s: absurd, expected a quantity from 0 to %s", shown, maxQuantity.String())
	}
	return nil
}
