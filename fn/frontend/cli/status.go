package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runstatus"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

func statusCmd() *cobra.Command {
	var cf clusterFlags
	var namespace, format string
	var watch bool
	var interval, timeout time.Duration
	c := &cobra.Command{
		Use:   "status RUN [-n NAMESPACE] [--watch] [-o text|json]",
		Short: "Explain a run on the cluster: RayJob, RayClusters, Pods, and why it is stuck (read-only)",
		Long: `Read, never change, everything of the run labelled app.kubernetes.io/instance=RUN
(the run name: --name, a NemoRLRun's metadata.name, the Helm release name) and
what KubeRay created for it: the RayJob's jobDeploymentStatus and jobStatus,
each RayCluster's state and conditions, the Pods by phase with the reason a Pod
is missing or Pending (KubeRay's FailedToCreate* Events: Pod Security, a
missing ServiceAccount; Unschedulable; claims not allocated), DRA claims, the
head Service, and for a finished RayJob whether its RayCluster is gone.

Exit codes: 0 running, succeeded, progressing or suspended; 1 failed, or
stuck with a known cause; 2 usage, kubeconfig or connection errors (a
redirect is refused, never followed); 3 nothing of the run found in the
namespace; 4 the cluster refused the credentials (401) or the reads (403),
so whether the run exists cannot be told; 5 the API server failed (5xx, 429)
or answered what is not an answer. With --watch a failed poll is retried
(up to 3 in a row); when --timeout ends the watch, the last verdict decides.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("-o %s: expected text or json", format)}
			}
			conn, err := cf.connect()
			if err != nil {
				return err
			}
			if namespace == "" {
				namespace = conn.Namespace
			}
			if err := validRunRef(namespace, args[0]); err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			return runStatus(ctx, conn, cmd.OutOrStdout(), cmd.ErrOrStderr(), namespace, args[0], format, watch, interval)
		},
	}
	cf.register(c)
	c.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the run (default: the kubeconfig context's)")
	c.Flags().StringVarP(&format, "output", "o", "text", "text or json")
	c.Flags().BoolVarP(&watch, "watch", "w", false, "poll until the run succeeds (and its cluster is cleaned up) or fails; print each change")
	c.Flags().DurationVar(&interval, "interval", 5*time.Second, "poll interval with --watch")
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit); the last state decides the exit code")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// runStatus prints the report once, or with watch every time it changes
// until the verdict is final (succeeded with cleanup done, failed, not
// found) or ctx ends; then the last verdict decides the exit code. A stuck
// run is watched on: its cause (a Pending pod waiting for nodes) may clear.
// Within a watch, a poll the cluster did not answer (ErrServer,
// ErrUnreachable) is retried, maxFailedPolls in a row at most.
func runStatus(ctx context.Context, conn *kube.Conn, w, stderr io.Writer, ns, run, format string, watch bool, interval time.Duration) error {
	var last string
	var verdict *runstatus.Verdict
	failed := 0
	for {
		r, err := runstatus.Collect(ctx, conn, ns, run, time.Now())
		switch {
		case err != nil && ctx.Err() != nil && verdict != nil:
			// --timeout (or ^C) ended a poll: the last verdict decides.
			fmt.Fprintf(stderr, "status: stopped after %s; the last state decides the exit code\n", safetext.Inline(context.Cause(ctx).Error()))
			return exitCode(verdict.Exit())
		case err != nil && watch && kube.Stops(err) && failed+1 < maxFailedPolls:
			failed++
			fmt.Fprintf(stderr, "status: poll %d failed, retrying in %s: %s\n", failed, interval, safetext.Inline(err.Error()))
		case err != nil:
			return clusterError(stderr, err)
		default:
			failed = 0
			out, err := r.Format(format)
			if err != nil {
				return err
			}
			if out != last {
				if _, err := io.WriteString(w, out); err != nil {
					return err
				}
				last = out
			}
			verdict = &r.Verdict
			if !watch || r.Final() {
				return exitCode(r.Verdict.Exit())
			}
		}
		select {
		case <-ctx.Done():
			if verdict == nil {
				return clusterError(stderr, context.Cause(ctx))
			}
			return exitCode(verdict.Exit())
		case <-time.After(interval):
		}
	}
}

// maxFailedPolls is how many polls in a row may fail within a watch.
const maxFailedPolls = 3

func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code}
}
