package scheduler

import (
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// StatusRead is one list the status command makes for an integration and
// how it reads what comes back: data the after-apply commands execute, so
// an integration talks to no cluster.
type StatusRead struct {
	// Resource is what is listed in the run's namespace.
	Resource schema.GroupVersionResource
	// Selector is the list's label selector, given the run's own selector
	// and the UIDs of its RayJobs and RayClusters (sorted, each one a
	// server could have made); ok false skips the list.
	Selector func(runSelector string, uids []string) (selector string, ok bool)
	// Admission reads one listed object; owners maps those UIDs to
	// "Kind/name". ok false: the object is none of the run's.
	Admission func(u *unstructured.Unstructured, owners map[string]string) (a Admission, ok bool)
}

// Admission is where a scheduler holds one of the run's objects: Kueue's
// Workload for a RayJob or RayCluster, or KAI's PodGroup.
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
	// a manager cluster; kueue/multikueue.go).
	Worker string `json:"worker,omitempty"`
	// HoldsQuota: evicted, yet the quota is still reserved (Kueue releases
	// it once the job reads inactive); EvictedAt is when it was evicted.
	HoldsQuota bool      `json:"holdsQuota,omitempty"`
	EvictedAt  time.Time `json:"-"`
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

// MaxReported bounds each text a cluster reports about another (a
// MultiKueue manager's admission check message, a worker's error): the
// manager relays what a worker told it, and neither is trusted to keep it
// short.
const MaxReported = 300

// Bound cuts s to MaxReported bytes at a rune boundary, marking the cut.
func Bound(s string) string {
	if len(s) <= MaxReported {
		return s
	}
	cut := MaxReported
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
