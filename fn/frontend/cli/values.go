package cli

import (
	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/checkreport"
)

func valuesCmd() *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "values RECIPE [OVERRIDES...] --infra INFRA",
		Short: "Print the resolved profile and the recipe keys the renderer reads",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := f.run(args, nil)
			if err != nil {
				return err
			}
			printDiags(cmd.ErrOrStderr(), res.Diags)
			if res.Profile == nil {
				return exitError{ExitError}
			}
			y, err := checkreport.Values(res)
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(y); err != nil {
				return err
			}
			if res.Diags.HasErrors() {
				return exitError{ExitError}
			}
			return nil
		},
	}
	f.register(c)
	return c
}
