package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/preflight"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// workerFlags are the worker clusters of a MultiKueue manager (--context):
// each a context of the user's own kubeconfig, named as the manager names
// the worker (its MultiKueueCluster). The manager's kubeconfig Secrets are
// never read: a worker is asked with the user's credentials for it.
type workerFlags struct{ specs []string }

const workerUsage = "a worker cluster of the MultiKueue manager --context names, as NAME=CONTEXT: NAME its MultiKueueCluster's name, CONTEXT your kubeconfig's context for it (repeatable; your credentials, never the manager's kubeconfig Secrets)"

func (f *workerFlags) register(c *cobra.Command) {
	c.Flags().StringArrayVar(&f.specs, "worker", nil, workerUsage)
}

// connect parses every --worker and connects to each (no request yet), from
// the kubeconfig the manager's connection reads. Errors are usage errors.
func (f *workerFlags) connect(cf *clusterFlags) ([]preflight.Worker, error) {
	var out []preflight.Worker
	seen := map[string]bool{}
	for _, spec := range f.specs {
		name, kctx, ok := strings.Cut(spec, "=")
		errs := validation.IsDNS1123Subdomain(name)
		if !ok || kctx == "" || len(errs) > 0 {
			why := "CONTEXT is empty"
			switch {
			case !ok:
				why = "no \"=\""
			case len(errs) > 0:
				why = "NAME: " + strings.Join(errs, "; ")
			}
			return nil, usageError{fmt.Errorf("--worker %q: %s; expected NAME=CONTEXT, NAME a MultiKueueCluster's name and CONTEXT a context of your kubeconfig", spec, why)}
		}
		if seen[name] {
			return nil, usageError{fmt.Errorf("--worker %s: given twice; expected each worker once", name)}
		}
		seen[name] = true
		c, err := kube.Connect(kube.Options{Kubeconfig: cf.kubeconfig, Context: kctx, UserAgent: "nrl-k8s/" + Version})
		if err != nil {
			return nil, usageError{fmt.Errorf("--worker %s=%s: %w", name, kctx, err)}
		}
		out = append(out, preflight.Worker{Name: name, Conn: c})
	}
	return out, nil
}

// byName is the workers keyed by their MultiKueueCluster names.
func byName(ws []preflight.Worker) map[string]*kube.Conn {
	out := map[string]*kube.Conn{}
	for _, w := range ws {
		out[w.Name] = w.Conn
	}
	return out
}

// preflightAcross asks a dispatched run of the manager (conn) and of each
// worker, and prints which workers can take it.
func preflightAcross(ctx context.Context, cmd *cobra.Command, conn *kube.Conn, workers []preflight.Worker, in preflight.Input, docs []rendered.Doc, format string, requireAll bool) error {
	a, err := preflight.RunAcross(ctx, conn, workers, in, docs)
	if err != nil {
		if kube.Stops(err) || errors.Is(err, kube.ErrAccess) {
			return clusterError(cmd.ErrOrStderr(), err)
		}
		return err
	}
	if err := preflight.WriteAcross(cmd.OutOrStdout(), a, format); err != nil {
		return err
	}
	if a.Failed(requireAll) {
		return exitError{ExitError}
	}
	return nil
}

// notDispatched refuses --worker for a run MultiKueue does not dispatch.
func notDispatched() error {
	return usageError{errors.New("--worker: the run is not dispatched by MultiKueue (no RayJob or RayCluster with spec.managedBy " + vocab.MultiKueueControllerName + "); expected workers only for a run with scheduler.dispatch: multikueue")}
}
