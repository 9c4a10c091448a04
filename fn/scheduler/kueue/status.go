package kueue

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// Workloads are Kueue's Workloads: what status and preflight list.
var Workloads = schema.GroupVersionResource{Group: vocab.KueueGroup, Version: vocab.KueueVersion, Resource: "workloads"}

// StatusReads: the Workloads of the run's RayJobs and RayClusters, by
// their UIDs (Kueue labels a Workload with its job's); none to read
// without one.
func (Integration) StatusReads() []scheduler.StatusRead {
	return []scheduler.StatusRead{{
		Resource: Workloads,
		Selector: func(_ string, uids []string) (string, bool) {
			return vocab.KueueJobUIDLabel + " in (" + strings.Join(uids, ",") + ")", len(uids) > 0
		},
		Admission: func(u *unstructured.Unstructured, owners map[string]string) (scheduler.Admission, bool) {
			owner := owners[u.GetLabels()[vocab.KueueJobUIDLabel]]
			if owner == "" {
				return scheduler.Admission{}, false
			}
			return workloadAdmission(owner, u), true
		},
	}}
}

type condition struct {
	status, reason, message string
	since                   time.Time // lastTransitionTime; zero when unreadable
}

// conditions are an object's status.conditions by type.
func conditions(u *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		m, _ := c.(map[string]any)
		var cond condition
		typ, _ := m["type"].(string)
		cond.status, _ = m["status"].(string)
		cond.reason, _ = m["reason"].(string)
		cond.message, _ = m["message"].(string)
		if t, ok := m["lastTransitionTime"].(string); ok {
			cond.since, _ = time.Parse(time.RFC3339, t)
		}
		if typ != "" {
			out[typ] = cond
		}
	}
	return out
}

// workloadAdmission reads a Workload's conditions as Kueue sets them
// (apis/kueue/v1beta2 workload_types.go: QuotaReserved, Admitted,
// Evicted, Preempted, Finished), the most decisive first.
func workloadAdmission(owner string, wl *unstructured.Unstructured) scheduler.Admission {
	a := scheduler.Admission{Object: owner, Kind: "Workload", Name: wl.GetName()}
	a.Queue, _, _ = unstructured.NestedString(wl.Object, "spec", "queueName")
	conds := conditions(wl)
	set := func(state string, c condition) {
		a.State, a.Reason, a.Message = state, c.reason, c.message
	}
	switch {
	case conds["Finished"].status == "True":
		set(scheduler.AdmissionFinished, conds["Finished"])
	case conds["Preempted"].status == "True":
		set(scheduler.AdmissionPreempted, conds["Preempted"])
	case conds["Evicted"].status == "True":
		set(scheduler.AdmissionEvicted, conds["Evicted"])
		// Evicted, the quota stays reserved until the job reads inactive
		// (jobframework reconciler.go, "handle eviction").
		a.HoldsQuota = conds["QuotaReserved"].status == "True"
		a.EvictedAt = conds["Evicted"].since
	case conds["Admitted"].status == "True":
		set(scheduler.AdmissionAdmitted, conds["Admitted"])
		if cq, _, _ := unstructured.NestedString(wl.Object, "status", "admission", "clusterQueue"); cq != "" {
			a.Message = "by ClusterQueue " + cq
		}
	case conds["QuotaReserved"].status == "True":
		set(scheduler.AdmissionReserved, conds["QuotaReserved"])
	default:
		set(scheduler.AdmissionQueued, conds["QuotaReserved"])
		if a.Message == "" {
			a.Message = "no quota reserved yet"
		}
	}
	dispatch(&a, wl)
	return a
}
