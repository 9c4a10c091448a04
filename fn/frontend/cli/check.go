package cli

import (
	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
)

func checkCmd() *cobra.Command {
	var f runFlags
	var repoRoot string
	var strict bool
	var format string
	c := &cobra.Command{
		Use:     "check RECIPE [OVERRIDES...] --infra INFRA",
		Aliases: []string{"validate"},
		Short:   "Validate a run and print a summary; exit 1 on errors",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := checkreport.Options{Format: checkreport.Format(format), Strict: strict}
			if err := opts.Check(); err != nil {
				return usageError{err}
			}
			res, err := f.run(args, func(req *pipeline.Request) {
				if repoRoot != "" {
					req.UploadSize = source.UploadSize(repoRoot)
				}
			})
			if err != nil {
				return err
			}
			if err := checkreport.Write(cmd.OutOrStdout(), res, opts); err != nil {
				return err
			}
			if res.Diags.HasErrors() {
				return exitError{ExitError}
			}
			return nil
		},
	}
	f.register(c)
	c.Flags().BoolVar(&strict, "strict", false, "also validate every rendered object against its kind's OpenAPI schema (KubeRay and ComputeDomain CRDs, k8s.io/api types)")
	c.Flags().StringVarP(&format, "output", "o", "text", "text (the summary and findings) or json (one object: findings, podSecurity, prerequisites)")
	c.Flags().StringVar(&repoRoot, "repo-root", "", "NeMo-RL checkout: measure the codeSource=upload working dir against Ray's 100 MiB cap")
	return c
}
