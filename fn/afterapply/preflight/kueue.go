package preflight

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

// What a LocalQueue line checks, read as Kueue v0.17.0 defines the objects
// (apis/kueue/v1beta2 localqueue_types.go and clusterqueue_types.go; the
// module is not linked here, so the fields are read by name): the
// LocalQueue's spec.clusterQueue exists; every resource the run's pods
// request is covered by one of its spec.resourceGroups (Kueue never admits
// a Workload asking for an uncovered resource); the run fits the nominal
// quota of the flavors covering it (a run larger than the whole quota is
// never admitted, unless it can borrow from a cohort); and how much of the
// quota is free now (status.flavorsReservation), so a run that has to
// wait says so.

// localQueueLine judges a found LocalQueue against the pods of the objects
// that name it.
func localQueueLine(ctx context.Context, c *kube.Conn, in Input, l Line, lq *unstructured.Unstructured) (Line, error) {
	cqName, _, _ := unstructured.NestedString(lq.Object, "spec", "clusterQueue")
	if cqName == "" {
		l.State, l.Detail = Missing, "has no spec.clusterQueue: Kueue admits nothing from it"
		return l, nil
	}
	cq, out, err := c.Get(ctx, kube.KueueClusterQueues, "", cqName)
	if kube.Stops(err) {
		return l, err
	}
	if out != kube.Found {
		st, d := verdict(out, err)
		l.State, l.Detail = st, fmt.Sprintf("points at ClusterQueue %s: %s; its Workloads stay pending", cqName, d)
		if st == Missing {
			l.Detail = fmt.Sprintf("points at ClusterQueue %s, which does not exist: its Workloads stay pending", cqName)
		}
		return l, passUnreachable(err)
	}
	need := queueDemand(in.Pods, l.ReferencedBy)
	quota := readQuota(cq)
	cohort, _, _ := unstructured.NestedString(cq.Object, "spec", "cohortName")
	if cohort == "" {
		cohort, _, _ = unstructured.NestedString(cq.Object, "spec", "cohort")
	}
	l.State = OK
	var notes []string
	for _, name := range sortedNames(need) {
		want := need[name]
		q, covered := quota[name]
		switch {
		case !covered:
			l.State = Missing
			notes = append(notes, fmt.Sprintf("ClusterQueue %s covers no %s (the run asks %s): Kueue never admits it; expected %s among a resource group's coveredResources", cqName, name, want.String(), name))
		case want.Cmp(q.nominal) > 0 && cohort == "":
			l.State = Missing
			notes = append(notes, fmt.Sprintf("the run asks %s %s, more than ClusterQueue %s's whole nominal quota %s and it is in no cohort to borrow from: Kueue never admits it", want.String(), name, cqName, q.nominal.String()))
		case want.Cmp(q.nominal) > 0:
			notes = append(notes, fmt.Sprintf("the run asks %s %s, more than ClusterQueue %s's nominal quota %s: admitted only by borrowing from cohort %s", want.String(), name, cqName, q.nominal.String(), cohort))
		default:
			free := q.nominal.DeepCopy()
			free.Sub(q.reserved)
			if want.Cmp(free) > 0 {
				left := nonNegative(free)
				notes = append(notes, fmt.Sprintf("needs %s %s, %s free of %s now: queued until other Workloads finish", want.String(), name, left.String(), q.nominal.String()))
			} else {
				left := nonNegative(free)
				notes = append(notes, fmt.Sprintf("%s %s of %s free", want.String(), name, left.String()))
			}
		}
	}
	l.Detail = fmt.Sprintf("ClusterQueue %s: %s", cqName, strings.Join(notes, "; "))
	return l, nil
}

// queueDemand sums the requests of every pod owned by an object that names
// the queue (ReferencedBy entries start with the object's "Kind/name"),
// each pod's requests as the API server defaults them (a limit without a
// request is the request), which is what Kueue's Workload counts.
func queueDemand(pods []PodShape, referencedBy []string) corev1.ResourceList {
	owners := map[string]bool{}
	for _, r := range referencedBy {
		owner, _, _ := strings.Cut(r, " ")
		owners[owner] = true
	}
	total := corev1.ResourceList{}
	for _, s := range pods {
		if !owners[s.Owner] {
			continue
		}
		for name, q := range podRequests(s.Pod) {
			if q.IsZero() {
				continue
			}
			q.Mul(s.Count)
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	return total
}

type flavorQuota struct{ nominal, reserved resource.Quantity }

// readQuota sums, per resource, the nominal quota of every flavor of every
// resource group, and what Workloads have reserved of it.
func readQuota(cq *unstructured.Unstructured) map[corev1.ResourceName]flavorQuota {
	out := map[corev1.ResourceName]flavorQuota{}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		covered, _, _ := unstructured.NestedStringSlice(gm, "coveredResources")
		for _, r := range covered {
			if _, ok := out[corev1.ResourceName(r)]; !ok {
				out[corev1.ResourceName(r)] = flavorQuota{}
			}
		}
		flavors, _, _ := unstructured.NestedSlice(gm, "flavors")
		for _, f := range flavors {
			fm, _ := f.(map[string]any)
			resources, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range resources {
				rm, _ := r.(map[string]any)
				name, _ := rm["name"].(string)
				q := out[corev1.ResourceName(name)]
				q.nominal.Add(quantityOf(rm["nominalQuota"]))
				out[corev1.ResourceName(name)] = q
			}
		}
	}
	usage, _, _ := unstructured.NestedSlice(cq.Object, "status", "flavorsReservation")
	for _, f := range usage {
		fm, _ := f.(map[string]any)
		resources, _, _ := unstructured.NestedSlice(fm, "resources")
		for _, r := range resources {
			rm, _ := r.(map[string]any)
			name, _ := rm["name"].(string)
			if q, ok := out[corev1.ResourceName(name)]; ok {
				q.reserved.Add(quantityOf(rm["total"]))
				out[corev1.ResourceName(name)] = q
			}
		}
	}
	return out
}

// quantityOf reads a quantity written as a string or a number; anything
// else (a hostile or broken answer) counts as zero.
func quantityOf(v any) resource.Quantity {
	switch t := v.(type) {
	case string:
		if q, err := resource.ParseQuantity(t); err == nil {
			return q
		}
	case int64:
		return *resource.NewQuantity(t, resource.DecimalSI)
	case float64:
		return *resource.NewMilliQuantity(int64(t*1000), resource.DecimalSI)
	}
	return resource.Quantity{}
}

func nonNegative(q resource.Quantity) resource.Quantity {
	if q.Sign() < 0 {
		return resource.Quantity{}
	}
	return q
}

// podRequests is the pod's requests as the API server defaults them before
// anyone counts them: a container limit without a request is its request
// (core/v1 defaulting), then component-helpers' PodRequests (init
// containers, sidecars, overhead).
func podRequests(pod *corev1.Pod) corev1.ResourceList {
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
	return podRequestsOf(p)
}
