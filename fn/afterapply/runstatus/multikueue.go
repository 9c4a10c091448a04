package runstatus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
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
