package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
)

func preflightCmd() *cobra.Command {
	var f runFlags
	var cf clusterFlags
	var wf workerFlags
	var files []string
	var format string
	var nodes, requireAll bool
	c := &cobra.Command{
		Use:   "preflight (RECIPE [OVERRIDES...] --infra INFRA | -f RENDERED.yaml) [--kubeconfig F] [--context C] [--worker NAME=CONTEXT...] [-o text|json]",
		Short: "Check, read-only, that the namespace holds what the run needs before it is applied",
		Long:  preflightLong,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("-o %s: expected text or json", format)}
			}
			docs, err := preflightDocs(cmd, &f, files, args)
			if err != nil {
				return err
			}
			conn, err := cf.connect()
			if err != nil {
				return err
			}
			in, err := preflight.InputOf(docs, f.namespace, conn.Namespace)
			if fe, ok := errors.AsType[*preflight.FlagError](err); ok {
				return usageError{fe.Err}
			}
			if err != nil {
				return err
			}
			for _, sp := range in.Spaces {
				if err := validNamespace(sp.Namespace); err != nil {
					return usageError{err}
				}
			}
			in.Nodes = nodes
			workers, err := wf.connect(&cf)
			if err != nil {
				return err
			}
			if preflight.Dispatched(docs) {
				return preflightAcross(cmd.Context(), cmd, conn, workers, in, docs, format, requireAll)
			}
			if len(workers) > 0 {
				return notDispatched()
			}
			rep, err := preflight.Run(cmd.Context(), conn, in)
			if err != nil {
				if kube.Stops(err) || errors.Is(err, kube.ErrAccess) {
					return clusterError(cmd.ErrOrStderr(), err)
				}
				return err
			}
			if err := preflight.Write(cmd.OutOrStdout(), rep, format); err != nil {
				return err
			}
			if rep.Failed(requireAll) {
				return exitError{ExitError}
			}
			return nil
		},
	}
	f.register(c)
	cf.register(c)
	wf.register(c)
	c.Flags().StringArrayVarP(&files, "filename", "f", nil, "rendered manifests to check instead of rendering RECIPE (repeatable; - for stdin)")
	c.Flags().StringVarP(&format, "output", "o", "text", "text or json")
	c.Flags().BoolVar(&nodes, "nodes", false, "also place every pod on the nodes, after what already runs, as its scheduler would (needs permission to list nodes, pods, ResourceSlices and ResourceClaims)")
	c.Flags().BoolVar(&requireAll, "require-all", false, "fail (exit 1) on a prerequisite that cannot be told too, not only on a missing one")
	_ = c.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// preflightDocs renders the run, or reads -f.
func preflightDocs(cmd *cobra.Command, f *runFlags, files, args []string) ([]rendered.Doc, error) {
	if len(files) > 0 {
		if len(args) > 0 {
			return nil, usageError{errors.New("give RECIPE [OVERRIDES] --infra INFRA or -f RENDERED.yaml, not both")}
		}
		return preflight.ReadRendered(cmd.InOrStdin(), files)
	}
	if len(args) == 0 {
		return nil, usageError{errors.New("missing RECIPE argument (or -f RENDERED.yaml)")}
	}
	res, err := f.run(args, nil)
	if err != nil {
		return nil, err
	}
	printDiags(cmd.ErrOrStderr(), res.Diags)
	if res.Diags.HasErrors() {
		return nil, exitError{ExitError}
	}
	return res.Docs, nil
}

// preflightLong is preflight's --help.
const preflightLong = `Ask the cluster, without changing anything, whether the run's prerequisites
hold: the namespace exists and the Pod Security level it enforces admits the
run's pods; every ServiceAccount, PersistentVolumeClaim (Bound), Secret (its
metadata only: no secret value is read) and ConfigMap the run references
exists; the APIs it uses are served (ray.io/v1 RayJob/RayCluster, the
ComputeDomain CRD, resource.k8s.io/v1); the DeviceClasses its claims name
exist (the ComputeDomain channel's included); every extended resource the
pods request (nvidia.com/gpu, rdma/*) has a source, a node that advertises
it or a DeviceClass with that extendedResourceName; the KAI queue exists;
with --nodes, every pod of the input (heads included; runs in one or several
namespaces, one after another) is placed on the nodes as the scheduler its
pods name would place it: node affinity, taints, cordon, every requested
resource and the DRA devices claimed on each node, after the pods already
bound and the claims already allocated; KAI's runs all or nothing, Kueue's
with their flavors' node labels. The run is rendered from RECIPE and INFRA as render
does, or read from -f (any rendered output: a committed manifest,
helm template, - for stdin).

A run MultiKueue dispatches (scheduler.dispatch: multikueue) is asked of two
kinds of cluster. The manager (--context): the namespace, the run's
LocalQueue and quota, the job object's API, and the MultiKueue setup behind
the queue: its ClusterQueue carries an AdmissionCheck with controllerName
kueue.x-k8s.io/multikueue, Active, naming a MultiKueueConfig whose
MultiKueueClusters are Active with their kubeconfig Secrets present (metadata
only). Each worker (--worker NAME=CONTEXT, NAME its MultiKueueCluster's name,
CONTEXT your kubeconfig's context for it; repeatable): every line above, as
for one cluster. The report ends with the workers that can take the run now
and why each other cannot (a missing line, quota it must queue for, not
listed or not Active on the manager, no answer). Exit 1 when the manager
misses something or no worker asked can take the run (with --require-all:
also when a line of any cluster is not ok or a worker cannot take it).

One line per prerequisite: ok, missing or cannot tell (with why: no
permission to read, a namespace without an enforce label). Exit 0 when none
is missing (with --require-all: when every one is ok), 1 when one is
missing, 2 on usage, kubeconfig or connection errors (a redirect is refused,
never followed), 4 when the cluster refuses the credentials (401), 5 when
the API server fails (5xx) or its answer is no answer.`
