package kai

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// KAI's defaults (KAI-Scheduler d5bc503a pkg/common/constants/constants.go):
// a Queue without spec.priority, and a PodGroup whose priority class the
// cluster does not have.
const (
	DefaultQueuePriority    = 100
	DefaultPodGroupPriority = 50
	// NonPreemptibleFrom is the priority from which a PodGroup that does
	// not say is non-preemptible (pkg/common/podgroup/preemptible.go).
	NonPreemptibleFrom = 100
)

// QueueOf reads a KAI Queue (scheduling.run.ai/v2, pkg/apis/scheduling/v2
// queue_types.go and resources.go): quota, limit and overQuotaWeight per
// resource, GPUs in units, CPU in millicores, memory in megabytes (10^6
// bytes); an absent value is 0, as KAI reads it (an absent limit admits
// nothing of that resource).
func QueueOf(u *unstructured.Unstructured) (Queue, error) {
	q := Queue{Name: u.GetName(), Priority: DefaultQueuePriority}
	q.Parent, _, _ = unstructured.NestedString(u.Object, "spec", "parentQueue")
	if p, ok, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "priority"); ok {
		n, ok := number(p)
		if !ok || n < -1e9 || n > 1e9 || n != float64(int(n)) {
			return q, fmt.Errorf("Queue %s spec.priority is %v; expected an integer", q.Name, p)
		}
		q.Priority = int(n)
	}
	for _, f := range []struct {
		key   string
		scale float64
		set   func(*Resources, float64)
	}{
		{"gpu", 1, func(r *Resources, v float64) { r.GPU = v }},
		{"cpu", 1, func(r *Resources, v float64) { r.CPU = v }},
		{"memory", 1e6, func(r *Resources, v float64) { r.Memory = v }},
	} {
		for _, field := range []struct {
			name string
			into *Resources
		}{{"quota", &q.Deserved}, {"limit", &q.Limit}, {"overQuotaWeight", &q.OverQuota}} {
			v, found, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "resources", f.key, field.name)
			if !found {
				continue
			}
			n, ok := number(v)
			if !ok || n < Unlimited {
				return q, fmt.Errorf("Queue %s spec.resources.%s.%s is %v; expected a number, -1 for unlimited", q.Name, f.key, field.name, v)
			}
			if n != Unlimited {
				n *= f.scale
			}
			f.set(field.into, n)
		}
	}
	return q, nil
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int64:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// JobOf reads a PodGroup (scheduling.run.ai/v2alpha2) as the model weighs
// it: its queue, its priority (priority maps its spec.priorityClassName to
// the PriorityClass's value; an unknown class is KAI's default), its
// preemptibility and status.resourcesStatus, which KAI's podgroup
// controller keeps (pkg/podgroupcontroller/controllers/metadata/pod.go:
// the containers' requests of its running pods, and of its active ones).
// It is named by the object KAI grouped ("RayJob x", its namespace too
// when not ns).
func JobOf(pg *unstructured.Unstructured, ns string, priority func(class string) (int32, bool)) (Job, error) {
	j := Job{Name: "PodGroup " + pg.GetName(), Priority: DefaultPodGroupPriority, Created: pg.GetCreationTimestamp().Time}
	if refs := pg.GetOwnerReferences(); len(refs) > 0 {
		j.Name = refs[0].Kind + " " + refs[0].Name
	}
	if pg.GetNamespace() != ns {
		j.Name = strings.Replace(j.Name, " ", " "+pg.GetNamespace()+"/", 1)
	}
	j.Queue, _, _ = unstructured.NestedString(pg.Object, "spec", "queue")
	class, _, _ := unstructured.NestedString(pg.Object, "spec", "priorityClassName")
	if p, ok := priority(class); ok && class != "" {
		j.Priority = p
	}
	pre, _, _ := unstructured.NestedString(pg.Object, "spec", "preemptibility")
	j.Preemptible = Preemptible(pre, j.Priority)
	var err error
	for _, f := range []struct {
		field string
		into  *Resources
	}{{"allocated", &j.Allocated}, {"requested", &j.Requested}} {
		m, _, _ := unstructured.NestedMap(pg.Object, "status", "resourcesStatus", f.field)
		list := corev1.ResourceList{}
		for k, v := range m {
			s, ok := v.(string)
			q, perr := resource.ParseQuantity(s)
			if !ok || perr != nil || q.Sign() < 0 {
				err = fmt.Errorf("PodGroup %s/%s status.resourcesStatus.%s[%s] is %v; expected a quantity", pg.GetNamespace(), pg.GetName(), f.field, k, v)
				continue
			}
			list[corev1.ResourceName(k)] = q
		}
		*f.into = FromList(list)
	}
	return j, err
}

// Preemptible is KAI's CalculatePreemptibility: spec.preemptibility when
// it says, else below NonPreemptibleFrom.
func Preemptible(preemptibility string, priority int32) bool {
	switch preemptibility {
	case "preemptible":
		return true
	case "non-preemptible":
		return false
	}
	return priority < NonPreemptibleFrom
}

// GPU is the resource KAI counts as GPUs.
const GPU = corev1.ResourceName("nvidia.com/gpu")

// FromList is a resource list in the model's units.
func FromList(l corev1.ResourceList) Resources {
	cpu, mem, gpu := l[corev1.ResourceCPU], l[corev1.ResourceMemory], l[GPU]
	return Resources{GPU: gpu.AsApproximateFloat64(), CPU: float64(cpu.MilliValue()), Memory: mem.AsApproximateFloat64()}
}
