package runstatus

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// WatchOptions say what to report, how, and how often.
type WatchOptions struct {
	Namespace, Run string
	// Format is "text" or "json".
	Format string
	// Watch polls every Interval until the verdict is final; else one
	// report.
	Watch    bool
	Interval time.Duration
	// Out receives the reports, Log what the watch says about itself.
	Out, Log io.Writer
	// Workers are connections to the worker clusters of a MultiKueue
	// manager, by MultiKueueCluster name: a dispatched run is followed to
	// its worker (Follow).
	Workers map[string]*kube.Conn
}

// MaxFailedPolls is how many polls in a row may fail within a watch.
const MaxFailedPolls = 3

// Watch prints the report once, or with o.Watch every time it changes
// until the verdict is final (succeeded with cleanup done, failed, not
// found) or ctx ends: then the last verdict is returned, and decides the
// exit code. A stuck run is watched on: its cause (a Pending pod waiting
// for nodes) may clear. Within a watch, a poll the cluster did not answer
// (kube.Transient) is retried, MaxFailedPolls in a row at most. The error
// is the read's that ended the command, or ctx's cause when it ended
// before any verdict.
func Watch(ctx context.Context, c *kube.Conn, o WatchOptions) (Verdict, error) {
	var last string
	var verdict *Verdict
	failed := 0
	for {
		r, err := Collect(ctx, c, o.Namespace, o.Run, time.Now())
		if err == nil {
			Follow(ctx, &r, o.Workers, time.Now())
		}
		switch {
		case err != nil && ctx.Err() != nil && verdict != nil:
			// --timeout (or ^C) ended a poll: the last verdict decides.
			fmt.Fprintf(o.Log, "status: stopped after %s; the last state decides the exit code\n", safetext.Inline(context.Cause(ctx).Error()))
			return *verdict, nil
		case err != nil && o.Watch && kube.Transient(err) && failed+1 < MaxFailedPolls:
			failed++
			fmt.Fprintf(o.Log, "status: poll %d failed, retrying in %s: %s\n", failed, o.Interval, safetext.Inline(err.Error()))
		case err != nil:
			return "", err
		default:
			failed = 0
			out, err := r.Format(o.Format)
			if err != nil {
				return "", err
			}
			if out != last {
				if _, err := io.WriteString(o.Out, out); err != nil {
					return "", err
				}
				last = out
			}
			verdict = &r.Verdict
			if !o.Watch || r.Final() {
				return r.Verdict, nil
			}
		}
		select {
		case <-ctx.Done():
			if verdict == nil {
				return "", context.Cause(ctx)
			}
			return *verdict, nil
		case <-time.After(o.Interval):
		}
	}
}
