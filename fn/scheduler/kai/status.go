package kai

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// PodGroups are KAI's PodGroups: what status lists.
var PodGroups = schema.GroupVersionResource{Group: vocab.KAIGroup, Version: vocab.KAIPodGroupVersion, Resource: "podgroups"}

// StatusReads: the run's PodGroups, by the run's own selector (KAI copies
// the top owner's labels, the run's instance label among them, onto the
// PodGroup: KAI-Scheduler pkg/podgrouper/podgrouper/plugins/defaultgrouper
// default_grouper.go CalcPodGroupLabels).
func (Integration) StatusReads() []scheduler.StatusRead {
	return []scheduler.StatusRead{{
		Resource: PodGroups,
		Selector: func(run string, _ []string) (string, bool) { return run, true },
		Admission: func(u *unstructured.Unstructured, _ map[string]string) (scheduler.Admission, bool) {
			return podGroupAdmission(u), true
		},
	}}
}

// podGroupAdmission reads a KAI PodGroup's scheduling conditions
// (KAI-Scheduler pkg/apis/scheduling/v2alpha2 podgroup_types.go): the last
// one says why the gang is not placed.
func podGroupAdmission(pg *unstructured.Unstructured) scheduler.Admission {
	a := scheduler.Admission{Kind: "PodGroup", Name: pg.GetName(), State: scheduler.AdmissionScheduled}
	a.Queue, _, _ = unstructured.NestedString(pg.Object, "spec", "queue")
	for _, ref := range pg.GetOwnerReferences() {
		a.Object = ref.Kind + "/" + ref.Name
	}
	list, _, _ := unstructured.NestedSlice(pg.Object, "status", "schedulingConditions")
	if len(list) > 0 {
		m, _ := list[len(list)-1].(map[string]any)
		if s, _ := m["status"].(string); s != "False" {
			a.State = scheduler.AdmissionUnschedulable
			a.Reason, _ = m["reason"].(string)
			a.Message, _ = m["message"].(string)
			if reasons, ok := m["reasons"].([]any); ok && a.Message == "" {
				var parts []string
				for _, r := range reasons {
					if rm, ok := r.(map[string]any); ok {
						parts = append(parts, fmt.Sprint(rm["message"]))
					}
				}
				a.Message = strings.Join(parts, "; ")
			}
		}
	}
	return a
}
