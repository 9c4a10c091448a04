package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
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
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("-o %s: expected text (the summary) or json (one object: findings, podSecurity, prerequisites)", format)}
			}
			res, err := f.run(args, func(req *pipeline.Request) {
				if repoRoot != "" {
					req.UploadSize = source.UploadSize(repoRoot)
				}
			})
			if err != nil {
				return err
			}
			if strict && res.Docs != nil {
				// Only here: the CRDs are parsed on first use, so a plain
				// render or check pays nothing for them.
				res.Diags = append(res.Diags, schema.Validate(res.Profile.File, res.Docs)...)
			}
			w := cmd.OutOrStdout()
			facts := checkreport.FactsOf(res)
			if format == "json" {
				if err := checkreport.WriteJSON(w, res, facts); err != nil {
					return err
				}
			} else {
				if res.Profile != nil {
					checkreport.Summary(w, res)
				}
				facts.Print(w)
				fmt.Fprintln(w)
				checkreport.Findings(w, res.Diags)
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
