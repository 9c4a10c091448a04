package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/runlogs"
)

// errLogTime is the cause when logs without --follow runs out of time.
var errLogTime = errors.New("the logs were not read within --timeout; the API server sent them too slowly")

func logsCmd() *cobra.Command {
	var cf clusterFlags
	var o runlogs.Options
	var timeout time.Duration
	c := &cobra.Command{
		Use:   "logs RUN [-f] [--role head|worker] [-n NAMESPACE] [--container C] [--tail N]",
		Short: "Print the logs of a run's Ray Pods, each line prefixed with its Pod (read-only)",
		Long: `Read, never change, the logs of the Pods the run's RayClusters own (the RayCluster a
RayJob created included; the same rule status reads them by), head and workers, or
one --role (KubeRay's ray.io/node-type label). Each line is prefixed with its Pod's
name and escaped (control characters and terminal escapes are printed as Go escapes),
and cut at 16 KiB. Without --follow the Pods are read one after another, at most
64 MiB in all and within --timeout; with --follow every Pod is streamed at once until
interrupted or until the Pods go.

Exit codes: 0 read; 2 usage, kubeconfig or connection errors (a redirect is refused,
never followed); 3 the run has no such Pods; 4 the cluster refused the credentials
(401) or the reads (403: logs needs list on rayjobs, rayclusters and pods, and get on
pods/log); 5 the API server failed, or sent the logs too slowly for --timeout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Role != "" && o.Role != "head" && o.Role != "worker" {
				return usageError{fmt.Errorf("--role %s: expected head or worker", o.Role)}
			}
			if o.Tail < -1 {
				return usageError{fmt.Errorf("--tail %d: expected a count of lines, or -1 for all", o.Tail)}
			}
			conn, err := cf.connect()
			if err != nil {
				return err
			}
			if o.Namespace == "" {
				o.Namespace = conn.Namespace
			}
			if err := validRunRef(o.Namespace, args[0]); err != nil {
				return usageError{err}
			}
			o.Run, o.Out, o.Log = args[0], cmd.OutOrStdout(), cmd.ErrOrStderr()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			if !o.Follow && timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeoutCause(ctx, timeout, errLogTime)
				defer cancel()
			}
			err = runlogs.Print(ctx, conn, o)
			switch {
			case errors.Is(err, runlogs.ErrNoPods):
				fmt.Fprintf(cmd.ErrOrStderr(), "error: %s\n", err)
				return exitError{ExitNotFound}
			case errors.Is(err, errLogTime):
				fmt.Fprintf(cmd.ErrOrStderr(), "error: %s\n", err)
				return exitError{ExitServer}
			case err != nil:
				return clusterError(cmd.ErrOrStderr(), err)
			}
			return nil
		},
	}
	cf.register(c)
	c.Flags().StringVarP(&o.Namespace, "namespace", "n", "", "namespace of the run (default: the kubeconfig context's)")
	c.Flags().BoolVarP(&o.Follow, "follow", "f", false, "stream the logs until interrupted or the Pods go")
	c.Flags().StringVar(&o.Role, "role", "", "head or worker (default: both)")
	c.Flags().StringVarP(&o.Container, "container", "c", "", "container to read (default: each Pod's first, the Ray container)")
	c.Flags().Int64Var(&o.Tail, "tail", -1, "lines from the end of each Pod's log (-1: all)")
	c.Flags().DurationVar(&timeout, "timeout", time.Minute, "without --follow, give up after this long")
	_ = c.RegisterFlagCompletionFunc("role", cobra.FixedCompletions([]string{"head", "worker"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}
