package scheduler

import "context"

// Dispatcher is an integration that dispatches a run from a manager
// cluster to worker clusters (Kueue's MultiKueue). Preflight asks it, on
// the manager, for the setup behind the run's queues.
type Dispatcher interface {
	// PreflightDispatch judges that setup: its lines, in the order read,
	// and what it says of the workers.
	PreflightDispatch(ctx context.Context, r Reader, run PreflightRun) (Workers, []Line, error)
}

// Workers is what a manager's dispatch setup says of the worker clusters.
type Workers struct {
	// Known: the setup named its workers; when false it says nothing of
	// any worker.
	Known bool
	// Unlisted is why a worker the setup does not name never gets the run.
	Unlisted string
	// Named are the workers it names: "" for one it dispatches to, else
	// why it does not.
	Named map[string]string
}

// WhyNot is why the setup does not dispatch to worker name ("" when it
// does, or when it names no worker at all).
func (w Workers) WhyNot(name string) string {
	if !w.Known {
		return ""
	}
	why, named := w.Named[name]
	if !named {
		return w.Unlisted
	}
	return why
}
