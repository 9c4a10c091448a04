package cli

import (
	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
)

// Exit codes of the commands that read a live cluster (preflight, status).
const (
	// ExitCluster: usage, kubeconfig or connection errors (as ExitUsage).
	ExitCluster = 2
	// ExitNotFound: status found nothing of the run.
	ExitNotFound = 3
)

// clusterFlags select the cluster as kubectl does.
type clusterFlags struct {
	kubeconfig string
	context    string
}

func (f *clusterFlags) register(c *cobra.Command) {
	c.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, else ~/.kube/config, else the in-cluster service account)")
	c.Flags().StringVar(&f.context, "context", "", "kubeconfig context (default: the current context)")
}

// connect opens a read-only connection; its errors are usage errors
// (exit 2), as a wrong kubeconfig is for kubectl.
func (f *clusterFlags) connect() (*kube.Conn, error) {
	c, err := kube.Connect(kube.Options{Kubeconfig: f.kubeconfig, Context: f.context, UserAgent: "nrl-k8s/" + Version})
	if err != nil {
		return nil, usageError{err}
	}
	return c, nil
}
