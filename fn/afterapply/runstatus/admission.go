package runstatus

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// Admission is where a queueing system holds one of the run's objects:
// Kueue's Workload for a RayJob or RayCluster, or KAI's PodGroup.
type Admission struct {
	// Object is the run's object ("RayJob/x"); Kind and Name the
	// queueing object's ("Workload", "PodGroup").
	Object string `json:"object"`
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	// State is queued, quota reserved, admitted, evicted, preempted,
	// finished (Kueue), or scheduled / unschedulable (KAI).
	State   string `json:"state"`
	Queue   string `json:"queue,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Worker is the worker cluster MultiKueue dispatched a Workload to (on
	// a manager cluster; multikueue.go).
	Worker string `json:"worker,omitempty"`
}

// Admission states.
const (
	AdmissionQueued        = "queued"
	AdmissionReserved      = "quota reserved"
	AdmissionAdmitted      = "admitted"
	AdmissionEvicted       = "evicted"
	AdmissionPreempted     = "preempted"
	AdmissionFinished      = "finished"
	AdmissionUnschedulable = "unschedulable"
	AdmissionScheduled     = "scheduled"
)

// admissions reads Kueue's Workloads of the run's RayJobs and RayClusters
// (by their UIDs) and KAI's PodGroups of the run (KAI copies the top
// owner's labels, the run's instance label among them, onto the PodGroup:
// KAI-Scheduler pkg/podgrouper/podgrouper/plugins/defaultgrouper
// default_grouper.go CalcPodGroupLabels). An API that is not served holds
// nothing: most clusters have one of the two at most. One RBAC refuses
// (403) is a Problem line; kube.List keeps only what the selector matches.
func (k *collector) admissions(sel string, owners []unstructured.Unstructured) error {
	byUID := map[string]string{}
	var uids []string
	for i := range owners {
		if uid := string(owners[i].GetUID()); uid != "" && validUID(uid) {
			byUID[uid] = owners[i].GetKind() + "/" + owners[i].GetName()
			uids = append(uids, uid)
		}
	}
	sort.Strings(uids)
	if len(uids) > 0 {
		items, err := k.list(kube.KueueWorkloads, vocab.KueueJobUIDLabel+" in ("+strings.Join(uids, ",")+")")
		if err != nil {
			return err
		}
		for i := range items {
			if owner := byUID[items[i].GetLabels()[vocab.KueueJobUIDLabel]]; owner != "" {
				k.r.Admissions = append(k.r.Admissions, workloadAdmission(owner, &items[i]))
			}
		}
	}
	items, err := k.list(kube.KAIPodGroups, sel)
	if err != nil {
		return err
	}
	for i := range items {
		k.r.Admissions = append(k.r.Admissions, podGroupAdmission(&items[i]))
	}
	sort.Slice(k.r.Admissions, func(i, j int) bool {
		a, b := k.r.Admissions[i], k.r.Admissions[j]
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Kind+"/"+a.Name < b.Kind+"/"+b.Name
	})
	return nil
}

// validUID: a UID is put in a label selector only if it is one a server
// could have made (no selector syntax from a hostile answer).
func validUID(s string) bool {
	if len(s) > 63 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}

type condition struct{ typ, status, reason, message string }

func conditionsOf(u *unstructured.Unstructured, path ...string) map[string]condition {
	out := map[string]condition{}
	list, _, _ := unstructured.NestedSlice(u.Object, path...)
	for _, c := range list {
		m, _ := c.(map[string]any)
		var cond condition
		cond.typ, _ = m["type"].(string)
		cond.status, _ = m["status"].(string)
		cond.reason, _ = m["reason"].(string)
		cond.message, _ = m["message"].(string)
		if cond.typ != "" {
			out[cond.typ] = cond
		}
	}
	return out
}

// workloadAdmission reads a Workload's conditions as Kueue sets them
// (apis/kueue/v1beta2 workload_types.go: QuotaReserved, Admitted,
// Evicted, Preempted, Finished), the most decisive first.
func workloadAdmission(owner string, wl *unstructured.Unstructured) Admission {
	a := Admission{Object: owner, Kind: "Workload", Name: wl.GetName()}
	a.Queue, _, _ = unstructured.NestedString(wl.Object, "spec", "queueName")
	conds := conditionsOf(wl, "status", "conditions")
	set := func(state string, c condition) {
		a.State, a.Reason, a.Message = state, c.reason, c.message
	}
	switch {
	case conds["Finished"].status == "True":
		set(AdmissionFinished, conds["Finished"])
	case conds["Preempted"].status == "True":
		set(AdmissionPreempted, conds["Preempted"])
	case conds["Evicted"].status == "True":
		set(AdmissionEvicted, conds["Evicted"])
	case conds["Admitted"].status == "True":
		set(AdmissionAdmitted, conds["Admitted"])
		if cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue"); cq != "" {
			a.Message = "by ClusterQueue " + cq
		}
	case conds["QuotaReserved"].status == "True":
		set(AdmissionReserved, conds["QuotaReserved"])
	default:
		set(AdmissionQueued, conds["QuotaReserved"])
		if a.Message == "" {
			a.Message = "no quota reserved yet"
		}
	}
	dispatch(&a, wl)
	return a
}

// podGroupAdmission reads a KAI PodGroup's scheduling conditions
// (KAI-Scheduler pkg/apis/scheduling/v2alpha2 podgroup_types.go): the last
// one says why the gang is not placed.
func podGroupAdmission(pg *unstructured.Unstructured) Admission {
	a := Admission{Kind: "PodGroup", Name: pg.GetName(), State: AdmissionScheduled}
	a.Queue, _, _ = unstructured.NestedString(pg.Object, "spec", "queue")
	for _, ref := range pg.GetOwnerReferences() {
		a.Object = ref.Kind + "/" + ref.Name
	}
	list, _, _ := unstructured.NestedSlice(pg.Object, "status", "schedulingConditions")
	if len(list) > 0 {
		m, _ := list[len(list)-1].(map[string]any)
		if s, _ := m["status"].(string); s != "False" {
			a.State = AdmissionUnschedulable
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

// waiting is the admission that holds the run back, if any.
func waiting(as []Admission) (Admission, bool) {
	for _, a := range as {
		switch a.State {
		case AdmissionQueued, AdmissionReserved, AdmissionEvicted, AdmissionPreempted, AdmissionUnschedulable:
			return a, true
		}
	}
	return Admission{}, false
}

func (a Admission) describe() string {
	s := fmt.Sprintf("%s %s %s", a.Object, a.Kind, a.State)
	if a.Queue != "" {
		s += " (queue " + a.Queue + ")"
	}
	if a.Worker != "" {
		s += " on worker cluster " + a.Worker
	}
	if d := strings.TrimSpace(strings.Trim(a.Reason+": "+a.Message, ": ")); d != "" {
		s += ": " + d
	}
	return s
}
