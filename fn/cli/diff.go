package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/review"
)

func diffCmd() *cobra.Command {
	var output string
	c := &cobra.Command{
		Use:   "diff OLD NEW [--output text|markdown]",
		Short: "Summarise what changes between two renders (files or trees): GPUs, nodes, images, objects, DRA, scheduler, entrypoints",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "text" && output != "markdown" {
				return usageError{fmt.Errorf("--output %q: expected text or markdown", output)}
			}
			old, err := review.Load(args[0])
			if err != nil {
				return err
			}
			cur, err := review.Load(args[1])
			if err != nil {
				return err
			}
			s := review.Diff(old, cur)
			if output == "markdown" {
				_, err = fmt.Fprint(cmd.OutOrStdout(), s.Markdown())
			} else {
				_, err = fmt.Fprint(cmd.OutOrStdout(), s.Text())
			}
			return err
		},
	}
	c.Flags().StringVar(&output, "output", "text", "text or markdown (for a PR comment)")
	return c
}
