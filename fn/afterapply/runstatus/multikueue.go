package runstatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
)

// followDispatch says, on a manager cluster, where a dispatched run's Pods
// are: MultiKueue copies the job object to a worker, whose KubeRay makes
// them there, so none are here.
func followDispatch(r *Report) {
	if len(r.Pods) > 0 {
		return
	}
	if a, ok := dispatchedTo(r); ok {
		r.Summary += fmt.Sprintf("; %s was dispatched by MultiKueue to worker cluster %s: its Pods are there", a.Object, a.Worker)
	}
}

// holdGrace is how long an evicted Workload of a dispatched RayJob may
// keep its quota before status calls the run stuck: while the worker
// answers, MultiKueue deactivates its copy and mirrors the Suspended status
// back within seconds.
const holdGrace = 30 * time.Second

// heldAfterEviction says when a dispatched RayJob's Workload was evicted on
// the manager but keeps its quota for good. Kueue v0.17.0 releases the
// quota of an evicted Workload only once its job reads inactive
// (pkg/controller/jobframework/reconciler.go, "handle eviction";
// pkg/controller/jobs/rayjob/rayjob_controller.go IsActive: neither New nor
// Suspended). On a manager no KubeRay runs: the RayJob's status is
// MultiKueue's copy of the worker's (rayjob_multikueue_adapter.go
// copyJobStatus). When that worker stops answering after its status was
// copied (any run that started), the copy changes only if another worker
// admits the run's copy (MultiKueue then mirrors that one, suspended):
// with no room elsewhere the Workload is never requeued
// (kubernetes-sigs/kueue#15380, open in December 2026).
func heldAfterEviction(r *Report, now time.Time) {
	if r.Verdict != Queued { // the evicted Workload is what holds the run back
		return
	}
	for _, j := range r.RayJobs {
		if j.ManagedBy != vocab.MultiKueueControllerName || j.Deleting || !mirroredActive(j.JobDeploymentStatus) {
			continue
		}
		for _, a := range r.Admissions {
			if a.Object != "RayJob/"+j.Name || a.State != AdmissionEvicted || !a.HoldsQuota || a.EvictedAt.IsZero() || now.Sub(a.EvictedAt) < holdGrace {
				continue
			}
			r.Verdict = Stuck
			r.Summary = fmt.Sprintf("RayJob %s: Kueue evicted its Workload %s %s ago (%s) but the Workload keeps its quota: "+
				"Kueue requeues it once this RayJob reads inactive, and its status here (%s) is MultiKueue's copy of a worker's, "+
				"last from the worker that ran it, which no longer reports (Kueue v0.17.0, kubernetes-sigs/kueue#15380). "+
				"It changes only when that worker answers again or another worker admits the run's copy; "+
				"deleting this RayJob on the manager (its Workload with it) and letting Git recreate it queues the run afresh",
				clean(j.Name), clean(a.Name), now.Sub(a.EvictedAt).Round(time.Second), clean(strings.Trim(a.Reason+": "+a.Message, ": ")), orDash(j.JobDeploymentStatus))
			return
		}
	}
}

// mirroredActive: a RayJob status Kueue counts as active (IsActive) that is
// not final.
func mirroredActive(s string) bool {
	switch rayv1.JobDeploymentStatus(s) {
	case rayv1.JobDeploymentStatusNew, rayv1.JobDeploymentStatusSuspended, rayv1.JobDeploymentStatusComplete, rayv1.JobDeploymentStatusFailed:
		return false
	}
	return true
}

// dispatchedTo is the admission of a run MultiKueue dispatched from this
// cluster (a manager: the run has no Pods here), if any.
func dispatchedTo(r *Report) (Admission, bool) {
	if len(r.Pods) > 0 {
		return Admission{}, false
	}
	for _, a := range r.Admissions {
		if a.Worker != "" {
			return a, true
		}
	}
	return Admission{}, false
}

// WorkerRun is a dispatched run as the worker MultiKueue chose reports it.
type WorkerRun struct {
	// Cluster is the worker's MultiKueueCluster name (the manager's
	// Workload's status.clusterName).
	Cluster string `json:"cluster"`
	// Report is the run on the worker: its RayJob, Pods and problems.
	Report *Report `json:"report,omitempty"`
	// Note says why the worker was not read: no connection was given for
	// it, or it did not answer.
	Note string `json:"note,omitempty"`
}

// Follow reads, on the worker MultiKueue dispatched the run to, the run as
// Collect reads it on one cluster, through the connection the user gave
// for that worker (workers, keyed by MultiKueueCluster name: the manager's
// answer only picks among the user's own connections, so no credential
// goes where the manager says). The worker's verdict and summary become
// the run's: it runs there. A worker not given, or not answering, is said
// in the report, never an error: the manager's report stands.
func Follow(ctx context.Context, r *Report, workers map[string]*kube.Conn, now time.Time) {
	a, ok := dispatchedTo(r)
	if !ok {
		return
	}
	r.Worker = &WorkerRun{Cluster: a.Worker}
	c := workers[a.Worker]
	if c == nil {
		r.Worker.Note = fmt.Sprintf("not read: no --worker %s=CONTEXT was given", a.Worker)
		return
	}
	wr, err := Collect(ctx, c, r.Namespace, r.Run, now)
	if err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		r.Worker.Note = "not read: the worker did not answer: " + scheduler.Bound(first)
		return
	}
	r.Worker.Report = &wr
	if wr.Verdict == NotFound {
		r.Worker.Note = "the run is not (or no longer) on the worker: " + wr.Summary
		return
	}
	r.Verdict = wr.Verdict
	r.Summary = fmt.Sprintf("%s runs on worker cluster %s: %s", a.Object, a.Worker, wr.Summary)
}

// text is the worker's section of the report's text, its lines
// indented under a heading that names the worker.
func (w *WorkerRun) text() string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "On worker cluster %s (MultiKueue dispatched the run there):\n", clean(w.Cluster))
	if w.Note != "" {
		fmt.Fprintf(&b, "  %s\n", clean(w.Note))
	}
	if w.Report != nil && w.Report.Verdict != NotFound {
		for line := range strings.Lines(w.Report.Text()) {
			b.WriteString("  " + line)
		}
	}
	return b.String()
}
