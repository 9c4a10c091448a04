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
	var wf workerFlags
	var namespace, format string
	var watch bool
	var interval, timeout time.Duration
	c := &cobra.Command{
		Use:   "status [RUN] [-n NAMESPACE] [--watch] [--worker NAME=CONTEXT...] [-o text|json]",
		Short: "Explain a run on the cluster: RayJob, RayClusters, Pods, and why it is stuck (read-only)",
		Long: `Read, never change, everything of the run labelled app.kubernetes.io/instance=RUN
(the run name: --name, a NemoRLRun's metadata.name, the Helm release name) that
the run owns (a RayCluster a RayJob created by that RayJob's UID, a Pod by its
RayCluster's; what fails is named, never reported as the run's), and what
KubeRay created for it: the RayJob's jobDeploymentStatus and jobStatus,
each RayCluster's state and conditions, the Pods by phase with the reason a Pod
is missing or Pending (KubeRay's FailedToCreate* Events: Pod Security, a
missing ServiceAccount; Unschedulable; claims not allocated), DRA claims, the
head Service, and for a finished RayJob whether its RayCluster is gone.

On a MultiKueue manager a dispatched run's Pods are on the worker its
Workload names (status.clusterName): with --worker NAME=CONTEXT (NAME the
MultiKueueCluster's name, CONTEXT your kubeconfig's context for it;
repeatable) status reads the run there too and reports it under "On worker
cluster NAME", its verdict deciding; a worker not given or not answering is
said, not an error.

Exit codes: 0 running, succeeded, progressing or suspended; 1 failed, or
stuck with a known cause; 2 usage, kubeconfig or connection errors (a
redirect is refused, never followed); 3 nothing of the run found in the
namespace; 4 the cluster refused the credentials (401) or the reads (403),
so whether the run exists cannot be told; 5 the API server failed (5xx, 429)
or answered what is not an answer. With --watch a failed poll is retried
(up to 3 in a row); when --timeout ends the watch, the last verdict decides.

Without RUN: the namespace's runs (the run labels of its RayJobs,
RayClusters and the objects a stopped Kueue run leaves, managed by nrl-k8s
or Helm), one line each, sorted, with the state their RayJobs and
RayClusters give (-o json: an array of {run, verdict, summary}); exit 0,
or 2, 4, 5 as above. At most 1000 runs are listed (more is said on stderr).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("-o %s: expected text or json", format)}
			}
			conn, err := cf.connect()
			if err != nil {
				return err
			}
			workers, err := wf.connect(&cf)
			if err != nil {
				return err
			}
			if namespace == "" {
				namespace = conn.Namespace
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			if len(args) == 0 {
				if watch || len(workers) > 0 {
					return usageError{fmt.Errorf("--watch, --worker: expected a RUN to watch or follow")}
				}
				return listRuns(ctx, cmd, conn, namespace, format)
			}
			if err := validRunRef(namespace, args[0]); err != nil {
				return usageError{err}
			}
			v, err := runstatus.Watch(ctx, conn, runstatus.WatchOptions{Namespace: namespace, Run: args[0], Format: format,
				Watch: watch, Interval: interval, Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr(), Workers: byName(workers)})
			if err != nil {
				return clusterError(cmd.ErrOrStderr(), err)
			}
			return exitCode(v.Exit())
		},
	}
	cf.register(c)
	wf.register(c)
	c.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace of the run (default: the kubeconfig context's)")
	c.Flags().StringVarP(&format, "output", "o", "text", "text or json")
	c.Flags().BoolVarP(&watch, "watch", "w", false, "poll until the run succeeds (and its cluster is cleaned up) or fails; print each change")
	c.Flags().DurationVar(&interval, "interval", 5*time.Second, "poll interval with --watch")
	c.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long (0: no limit); the last state decides the exit code")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// listRuns prints the namespace's runs (status without RUN).
func listRuns(ctx context.Context, cmd *cobra.Command, conn *kube.Conn, namespace, format string) error {
	if err := validNamespace(namespace); err != nil {
		return usageError{err}
	}
	l, err := runstatus.ListRuns(ctx, conn, namespace, time.Now())
	if err != nil {
		return clusterError(cmd.ErrOrStderr(), err)
	}
	out, err := l.Format(format)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(cmd.OutOrStdout(), out); err != nil {
		return err
	}
	for _, n := range l.Notes {
		fmt.Fprintf(cmd.ErrOrStderr(), "status: %s\n", safetext.Inline(n))
	}
	if len(l.Runs) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "status: no runs in namespace %s\n", namespace)
	}
	return nil
}

func exitCode(code int) error {
	if code == 0 {
		return nil
	}
	return exitError{code}
}
