package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/emit"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

func renderCmd() *cobra.Command {
	var f runFlags
	var out, format string
	c := &cobra.Command{
		Use:   "render RECIPE [OVERRIDES...] --infra INFRA [--mode rayjob|raycluster|dev] [-o yaml|json] [--output-file FILE]",
		Short: "Write every object the run needs as a YAML stream",
		Long: `Render a run: the RayJob (or RayClusters and the jobs submitted to them),
the DRA ComputeDomain / RoCE ResourceClaimTemplate its workers claim, and the
profile's Deployments and Services, in Helm's install order with sorted keys.
OVERRIDES are Hydra overrides: infra.* change the profile, the rest are
appended to the training driver call and checked against the cluster.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format); err != nil {
				return err
			}
			res, err := f.run(args, nil)
			if err != nil {
				return err
			}
			printDiags(cmd.ErrOrStderr(), res.Diags)
			if res.Diags.HasErrors() {
				return exitError{ExitError}
			}
			encode := emit.Stream
			if format == "json" {
				encode = emit.List
			}
			data, err := encode(res.Docs)
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), out, data)
		},
	}
	f.register(c)
	c.Flags().StringVarP(&format, "output", "o", "yaml", "output format: yaml (a stream of documents) or json (a v1 List), as kubectl's -o")
	completeValues(c, "output", "yaml", "json")
	c.Flags().StringVar(&out, "output-file", "", "write to FILE instead of stdout")
	return c
}

// checkFormat keeps -o a format, as in kubectl and helm; -o FILE was the
// output file before --output-file, and gets a message saying so.
func checkFormat(format string) error {
	switch format {
	case "yaml", "json":
		return nil
	}
	return usageError{fmt.Errorf("-o %s: -o is the output format (yaml or json), as in kubectl; to write a file use --output-file %s", format, format)}
}

func writeOutput(stdout io.Writer, file string, data []byte) error {
	if file == "" || file == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}

// printDiags writes findings, errors first, one per line.
func printDiags(w io.Writer, ds diag.List) {
	for _, d := range ds.Sorted() {
		fmt.Fprintln(w, d.String())
	}
}
