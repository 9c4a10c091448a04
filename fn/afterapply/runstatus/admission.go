package runstatus

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
)

// Admission is where a scheduler holds one of the run's objects, as its
// integration reads it (fn/scheduler).
type Admission = scheduler.Admission

// Admission states.
const (
	AdmissionQueued        = scheduler.AdmissionQueued
	AdmissionReserved      = scheduler.AdmissionReserved
	AdmissionAdmitted      = scheduler.AdmissionAdmitted
	AdmissionEvicted       = scheduler.AdmissionEvicted
	AdmissionPreempted     = scheduler.AdmissionPreempted
	AdmissionFinished      = scheduler.AdmissionFinished
	AdmissionUnschedulable = scheduler.AdmissionUnschedulable
	AdmissionScheduled     = scheduler.AdmissionScheduled
)

// admissions makes every scheduler integration's status reads
// (registry.StatusReads: Kueue's Workloads of the run's RayJobs and
// RayClusters by their UIDs, KAI's PodGroups by the run's selector). An
// API that is not served holds nothing: most clusters have one of the two
// at most. One RBAC refuses (403) is a Problem line; kube.List keeps only
// what the selector matches.
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
	for _, read := range registry.StatusReads() {
		selector, ok := read.Selector(sel, uids)
		if !ok {
			continue
		}
		items, err := k.list(read.Resource, selector)
		if err != nil {
			return err
		}
		for i := range items {
			if a, ok := read.Admission(&items[i], byUID); ok {
				k.r.Admissions = append(k.r.Admissions, a)
			}
		}
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

// describeAdmission is one admission's line.
func describeAdmission(a Admission) string {
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
