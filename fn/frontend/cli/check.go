package cli

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/analyse/schema"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
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
					req.UploadSize = dirSizer(repoRoot)
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

// dirSizer sums file sizes under root for the given repo-relative paths,
// skipping what nrl-k8s's staging skips.
func dirSizer(root string) func([]string) (int64, error) {
	skip := map[string]bool{".gitignore": true, "__pycache__": true, ".venv": true, ".git": true, ".mypy_cache": true, ".pytest_cache": true, ".ruff_cache": true}
	return func(paths []string) (int64, error) {
		var total int64
		for _, p := range paths {
			full := filepath.Join(root, filepath.FromSlash(p))
			if _, err := os.Stat(full); err != nil {
				continue // missing paths are skipped, as in nrl-k8s
			}
			err := filepath.WalkDir(full, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				name := d.Name()
				if skip[name] || strings.HasSuffix(name, ".egg-info") {
					if d.IsDir() {
						return filepath.SkipDir
					}
					return nil
				}
				if strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo") || d.IsDir() {
					return nil
				}
				info, err := d.Info()
				if err != nil {
					return err
				}
				total += info.Size()
				return nil
			})
			if err != nil {
				return 0, err
			}
		}
		return total, nil
	}
}
