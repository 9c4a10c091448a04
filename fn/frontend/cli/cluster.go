package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/afterapply/kube"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Exit codes of the commands that read a live cluster (preflight, status).
const (
	// ExitCluster: usage, kubeconfig or connection errors (as ExitUsage).
	ExitCluster = 2
	// ExitAccess: the cluster refused the credentials (401) or the reads
	// (403): nothing can be told about the objects.
	ExitAccess = 4
	// ExitServer: the API server failed (5xx, 429) or its answer was no
	// answer (too large, a page ignoring limit).
	ExitServer = 5
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

// clusterError prints a read's error (escaped: it quotes the server's
// answer) and returns the exit code its kind has.
func clusterError(stderr io.Writer, err error) error {
	code := ExitCluster
	switch {
	case errors.Is(err, kube.ErrAccess):
		code = ExitAccess
	case errors.Is(err, kube.ErrServer):
		code = ExitServer
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		err = fmt.Errorf("stopped before the cluster answered: %w", err)
	}
	fmt.Fprintf(stderr, "error: %s\n", safetext.Inline(err.Error())) // one line: it quotes the server
	return exitError{code}
}

// validRunRef refuses a namespace or run name that no object can have,
// before any request: pasted into a path or a label selector, "a/b",
// "../x", "x,y" or "a b" would read something else.
func validRunRef(namespace, run string) error {
	if err := validNamespace(namespace); err != nil {
		return err
	}
	if run == "" {
		return errors.New("RUN is empty; expected a run name (its app.kubernetes.io/instance label)")
	}
	errs := validation.IsDNS1123Subdomain(run)
	errs = append(errs, validation.IsValidLabelValue(run)...)
	if len(errs) > 0 {
		return fmt.Errorf("RUN %q: expected a run name, an object name usable as a label value (%s)", run, strings.Join(errs, "; "))
	}
	return nil
}

func validNamespace(namespace string) error {
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("-n %q: expected a namespace name (%s)", namespace, strings.Join(errs, "; "))
	}
	return nil
}
