package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/policy"
)

// policyCmd prints the started-run ValidatingAdmissionPolicy and its
// binding, a platform object installed once per cluster (docs/gitops.md,
// "The started-run policy").
func policyCmd() *cobra.Command {
	var o policy.Options
	var format string
	c := &cobra.Command{
		Use:   "policy [--kuberay-user U]... [--kueue-user U]... [-o yaml]",
		Short: "Print the admission policy that refuses edits of a started run",
		Long: `Print a ValidatingAdmissionPolicy and its binding (kube-apiserver's own CEL,
no webhook) that refuse, on a started run's RayJob or RayCluster, the edits
KubeRay or Kueue never apply or that restart it: the entrypoint, the pod
templates (and with them the recipe), a Kueue run's worker counts, the
queue label. A stop (spec.suspend: true), a deletion and the controllers'
own writes pass. The controllers are named by the usernames the API server
authenticates them as; the defaults are
  --kuberay-user ` + policy.DefaultKubeRayUser + `
  --kueue-user   ` + policy.DefaultKueueUser + `
(repeat a flag to name several). Install it with
  nrl-k8s policy | kubectl apply --server-side -f -
The repository ships the default output as ` + policy.File + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "yaml" {
				return usageError{fmt.Errorf("-o %q: expected yaml", format)}
			}
			b, err := policy.YAML(o)
			if err != nil {
				return usageError{err}
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
	c.Flags().StringArrayVar(&o.KubeRayUsers, "kuberay-user", nil, "KubeRay operator's username (repeatable; default "+policy.DefaultKubeRayUser+")")
	c.Flags().StringArrayVar(&o.KueueUsers, "kueue-user", nil, "Kueue manager's username (repeatable; default "+policy.DefaultKueueUser+")")
	c.Flags().StringVarP(&format, "output", "o", "yaml", "yaml")
	completeValues(c, "output", "yaml")
	return c
}
