package preflight

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/scheduler/registry"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// A run MultiKueue dispatches (rendered.Dispatched) is asked of two kinds
// of cluster: the manager, which queues the job object and must hold the
// namespace, the run's LocalQueue (with its quota) and a sound MultiKueue
// setup behind it (Kueue's scheduler.Dispatcher judges it); and each
// worker, which runs it and must hold everything the run needs, as one
// cluster does (Run). The worker lines are Run's own; what is added is the
// verdict: which workers can take the run now, and why each other cannot.

// Worker is one worker cluster: its MultiKueueCluster name on the manager
// and a connection made from the user's own kubeconfig, never from the
// manager's kubeconfig Secret.
type Worker struct {
	Name string
	Conn *kube.Conn
}

// Across is a dispatched run's preflight.
type Across struct {
	Manager Report         `json:"manager"`
	Workers []WorkerReport `json:"workers"`
	// Takers are the workers that can take the run now.
	Takers []string `json:"canTakeTheRun"`
}

// WorkerReport is one worker's lines and verdict.
type WorkerReport struct {
	Name string `json:"name"`
	Report
	// Error: the worker could not be asked (unreachable, refused, failed);
	// said, not fatal: the other workers may take the run.
	Error   string   `json:"error,omitempty"`
	CanTake bool     `json:"canTakeTheRun"`
	WhyNot  []string `json:"whyNot,omitempty"`
}

// Dispatched reports whether MultiKueue dispatches the run: one of its
// documents is a job object with MultiKueue's spec.managedBy.
func Dispatched(docs []rendered.Doc) bool {
	for _, d := range docs {
		if rendered.Dispatched(d) {
			return true
		}
	}
	return false
}

// RunAcross asks the manager, then each worker. The manager's errors end
// the command as Run's do; a worker's is that worker's verdict.
func RunAcross(ctx context.Context, manager *kube.Conn, workers []Worker, in Input, docs []rendered.Doc) (Across, error) {
	var a Across
	mIn := managerInput(in, docs)
	rep, err := Run(ctx, manager, mIn)
	if err != nil {
		return a, err
	}
	setup, lines, err := registry.PreflightDispatch(ctx, reader{manager.Budgeted(kube.MaxReportBytes), &cache{}}, mIn.run())
	if err != nil {
		return a, err
	}
	rep.Lines = append(rep.Lines, lines...)
	a.Manager = rep
	a.Workers = []WorkerReport{}
	a.Takers = []string{}
	for _, w := range workers {
		wr := WorkerReport{Name: w.Name}
		r, err := Run(ctx, w.Conn, in)
		if err != nil {
			wr.Error = scheduler.Bound(firstLine(err))
		} else {
			wr.Report = r
		}
		judgeWorker(&wr, setup)
		if wr.CanTake {
			a.Takers = append(a.Takers, w.Name)
		}
		a.Workers = append(a.Workers, wr)
	}
	return a, nil
}

// Failed: the manager misses something, or workers were asked and none
// can take the run now; with requireAll, any line of any cluster is not ok.
func (a Across) Failed(requireAll bool) bool {
	if a.Manager.Failed(requireAll) || len(a.Workers) > 0 && len(a.Takers) == 0 {
		return true
	}
	for _, w := range a.Workers {
		if requireAll && (!w.CanTake || w.Failed(true)) {
			return true
		}
	}
	return false
}

// managerInput is what the manager must hold: the namespace (no Pod
// Security line: no Pod runs there), the run's LocalQueues and
// WorkloadPriorityClasses (the quota is the manager's too: its Workload
// reserves it before MultiKueue dispatches), and the API of the job object.
func managerInput(in Input, docs []rendered.Doc) Input {
	m := Input{Namespace: in.Namespace, APIVersions: in.APIVersions, Pods: in.Pods, Queues: in.Queues, Priorities: in.Priorities}
	for _, sp := range in.Spaces {
		m.Spaces = append(m.Spaces, Space{Namespace: sp.Namespace})
	}
	jobAPIs := map[string]bool{}
	for _, d := range docs {
		if rendered.Dispatched(d) {
			av, _ := d.Data["apiVersion"].(string)
			group, _, _ := strings.Cut(av, "/")
			jobAPIs[resourceOf(d.Kind)+"."+group] = true
		}
	}
	for _, n := range in.Needs {
		if n.Kind == "LocalQueue" || n.Kind == "WorkloadPriorityClass" || n.Kind == "CustomResourceDefinition" && jobAPIs[n.Name] {
			m.Needs = append(m.Needs, n)
		}
	}
	return m
}

// judgeWorker says whether the worker can take the run now: it answered,
// the manager's setup dispatches to it (MultiKueue: its MultiKueueConfig
// lists it and its MultiKueueCluster is Active), nothing the run needs is
// missing there, and its LocalQueue's quota holds the run now (the
// LocalQueue line's Kueue prediction).
func judgeWorker(w *WorkerReport, s scheduler.Workers) {
	if w.Error != "" {
		w.WhyNot = append(w.WhyNot, "could not be asked: "+w.Error)
	}
	if why := s.WhyNot(w.Name); why != "" {
		w.WhyNot = append(w.WhyNot, why)
	}
	for _, l := range w.Lines {
		if l.State == Missing || l.Kind == "LocalQueue" && waitsForQuota(l) {
			w.WhyNot = append(w.WhyNot, lineRef(l)+": "+l.Detail)
		}
	}
	w.CanTake = len(w.WhyNot) == 0
}

// waitsForQuota: the LocalQueue line says the free quota does not hold the
// run and Kueue would neither borrow nor preempt for it (Line.Waits, set by
// the Kueue integration): the run is queued there.
func waitsForQuota(l Line) bool { return l.State == OK && l.Waits }

// lineRef is how a line names its object: "Kind namespace/name".
func lineRef(l Line) string {
	if l.Namespace != "" {
		return l.Kind + " " + l.Namespace + "/" + l.Name
	}
	return l.Kind + " " + l.Name
}

// WriteAcross writes the manager's lines, each worker's, and the verdict:
// which workers can take the run now and why each other cannot; or the
// report as JSON. Cluster text is escaped as Write escapes it.
func WriteAcross(w io.Writer, a Across, format string) error {
	if format == "json" {
		b, err := json.MarshalIndent(a, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	fmt.Fprintln(w, "MANAGER (MultiKueue queues the run here)")
	if err := Write(w, a.Manager, "text"); err != nil {
		return err
	}
	for _, wr := range a.Workers {
		fmt.Fprintf(w, "\nWORKER %s\n", safetext.Inline(wr.Name))
		if wr.Error != "" {
			fmt.Fprintf(w, "could not be asked: %s\n", safetext.Inline(wr.Error))
			continue
		}
		if err := Write(w, wr.Report, "text"); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if len(a.Workers) == 0 {
		_, err := fmt.Fprintln(w, "no worker asked: give each as --worker NAME=CONTEXT (NAME its MultiKueueCluster, CONTEXT yours for it)")
		return err
	}
	for _, wr := range a.Workers {
		if wr.CanTake {
			fmt.Fprintf(w, "worker %s can take the run now\n", safetext.Inline(wr.Name))
			continue
		}
		fmt.Fprintf(w, "worker %s cannot take the run now:\n", safetext.Inline(wr.Name))
		for _, why := range wr.WhyNot {
			fmt.Fprintf(w, "  %s\n", safetext.Inline(why))
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d workers can take the run now\n", len(a.Takers), len(a.Workers))
	return err
}
