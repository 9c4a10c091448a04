// Package runstatus explains a run on a live cluster, read-only: every
// object of the run found by its app.kubernetes.io/instance label (which
// KubeRay copies from a RayJob onto the RayCluster it creates and onto the
// Pods), the RayClusters and Pods KubeRay made, and the reason a run that is
// not progressing is stuck. KubeRay leaves that reason only in Events on the
// RayCluster (FailedToCreateWorkerPod: Pod Security, a missing
// ServiceAccount) and in Pod conditions (Unschedulable), never in the
// RayJob's status; this is where a user finds it.
//
// The label is the run's identity (docs/run-identity.md): it is the same on
// runs applied by kubectl, kustomize, kpt and Helm. app.kubernetes.io/managed-by
// is not (Helm rewrites it), so it is never used to find objects.
//
// On a MultiKueue manager a dispatched run's Pods are on a worker: Follow
// reads the run there too, through a connection the user gave for it
// (multikueue.go).
package runstatus

import (
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verdict is the run's state in one word.
type Verdict string

const (
	Deleting    Verdict = "deleting"    // a RayJob or RayCluster of the run has a deletionTimestamp
	Running     Verdict = "running"     // the job runs, or the clusters are ready
	Succeeded   Verdict = "succeeded"   // the RayJob completed
	Progressing Verdict = "progressing" // starting, no known obstacle
	Suspended   Verdict = "suspended"
	Stopped     Verdict = "stopped" // its spec stops it (runparams.StateFromSpec)
	Queued      Verdict = "queued"  // held by Kueue or KAI until it is admitted or placed
	Stuck       Verdict = "stuck"   // not progressing, with a known cause
	Failed      Verdict = "failed"  // the RayJob failed
	NotFound    Verdict = "not found"
)

// Exit codes a script can use.
const (
	ExitOK       = 0 // running, succeeded, progressing, queued, suspended or deleting
	ExitProblem  = 1 // failed, or stuck with a known cause
	ExitNotFound = 3 // nothing of the run in the namespace
)

// Exit is the verdict's exit code.
func (v Verdict) Exit() int {
	switch v {
	case Stuck, Failed:
		return ExitProblem
	case NotFound:
		return ExitNotFound
	}
	return ExitOK
}

// Report is what status prints.
type Report struct {
	Run         string       `json:"run"`
	Namespace   string       `json:"namespace"`
	Verdict     Verdict      `json:"verdict"`
	Summary     string       `json:"summary"`
	RayJobs     []RayJob     `json:"rayJobs,omitempty"`
	RayClusters []RayCluster `json:"rayClusters,omitempty"`
	Pods        []Pod        `json:"pods,omitempty"`
	// PodPhases counts the run's Pods by phase.
	PodPhases   map[string]int `json:"podPhases,omitempty"`
	Services    []Object       `json:"services,omitempty"`
	Claims      []Claim        `json:"resourceClaims,omitempty"`
	Deployments []Deployment   `json:"deployments,omitempty"`
	Others      []Object       `json:"otherObjects,omitempty"`
	// Admissions are Kueue's Workloads and KAI's PodGroups of the run.
	Admissions []Admission `json:"admissions,omitempty"`
	// Problems are the causes found, newest last.
	Problems []Problem `json:"problems,omitempty"`
	// Worker is the run on the worker cluster MultiKueue dispatched it to
	// (on a manager, with Follow).
	Worker *WorkerRun `json:"worker,omitempty"`
	// podsUnread: the run's Pods were not read (a listing), so the
	// summary says nothing of them.
	podsUnread bool
}

// RayJob is a RayJob's state.
type RayJob struct {
	Name                string `json:"name"`
	JobDeploymentStatus string `json:"jobDeploymentStatus"`
	JobStatus           string `json:"jobStatus,omitempty"`
	Reason              string `json:"reason,omitempty"`
	Message             string `json:"message,omitempty"`
	RayClusterName      string `json:"rayClusterName,omitempty"`
	ClusterSelector     string `json:"clusterSelector,omitempty"`
	// ManagedBy is spec.managedBy: MultiKueue's name on a manager, whose
	// copy's status is the worker's, mirrored.
	ManagedBy string `json:"managedBy,omitempty"`
	// Stopped: the spec stops it (runparams.StateFromSpec: suspended
	// without a Kueue queue), whatever vocab.StateAnnotation says.
	Stopped bool `json:"stopped,omitempty"`
	// Cleanup, for a finished RayJob that shuts its cluster down: "done"
	// (the RayCluster is gone), "pending" (within ttlSecondsAfterFinished)
	// or "overdue".
	Cleanup string `json:"cleanup,omitempty"`
	Deletion
}

// Deletion says an object is being deleted: its deletionTimestamp is set,
// so its status (Running, ready) is what it was, not what it will be.
// Finalizers are what the deletion waits on.
type Deletion struct {
	Deleting   bool     `json:"deleting,omitempty"`
	Finalizers []string `json:"finalizers,omitempty"`
}

func deletionOf(m metav1.ObjectMeta) Deletion {
	if m.DeletionTimestamp == nil {
		return Deletion{}
	}
	return Deletion{Deleting: true, Finalizers: append([]string(nil), m.Finalizers...)}
}

// text is ", being deleted" and the finalizers, for an object's line.
func (d Deletion) text() string {
	if !d.Deleting {
		return ""
	}
	if len(d.Finalizers) == 0 {
		return ", being deleted"
	}
	return ", being deleted (finalizers " + clean(strings.Join(d.Finalizers, ", ")) + ")"
}

// RayCluster is a RayCluster's state.
type RayCluster struct {
	Name          string      `json:"name"`
	State         string      `json:"state,omitempty"`
	Reason        string      `json:"reason,omitempty"`
	ReadyWorkers  int32       `json:"readyWorkers"`
	DesiredWorker int32       `json:"desiredWorkers"`
	Conditions    []Condition `json:"conditions,omitempty"`
	// CreatedBy is the RayJob that created the cluster, if any.
	CreatedBy string `json:"createdBy,omitempty"`
	// Stopped: as RayJob.Stopped.
	Stopped bool `json:"stopped,omitempty"`
	Deletion
}

// Condition is a status condition.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Pod is one Pod of the run.
type Pod struct {
	Name     string `json:"name"`
	Cluster  string `json:"cluster,omitempty"`
	NodeType string `json:"nodeType,omitempty"`
	Group    string `json:"group,omitempty"`
	Phase    string `json:"phase"`
	Ready    bool   `json:"ready"`
	// Waiting says why a Pending pod waits, when the API shows it.
	Waiting string `json:"waiting,omitempty"`
	// Blocked: the wait will not end by itself (the scheduler found no
	// node, an image cannot be pulled, a container keeps crashing). A
	// claim not yet allocated is a normal step of starting, not a block.
	Blocked bool `json:"blocked,omitempty"`
}

// blockingWaits are container waiting reasons that need someone to act.
var blockingWaits = map[string]bool{
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "CrashLoopBackOff": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// Claim is a DRA ResourceClaim of the run's Pods.
type Claim struct {
	Name      string `json:"name"`
	Pod       string `json:"pod"`
	Allocated bool   `json:"allocated"`
}

// Deployment is a Deployment of the run.
type Deployment struct {
	Name      string `json:"name"`
	Ready     int64  `json:"readyReplicas"`
	Desired   int64  `json:"replicas"`
	Available bool   `json:"available"`
}

// Object is any other object of the run.
type Object struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Info string `json:"info,omitempty"`
}

// Problem is one known cause.
type Problem struct {
	Object  string `json:"object"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func selectorText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ",")
}

func orDash(s string) string {
	if s == "" {
		return "New"
	}
	return clean(s)
}
