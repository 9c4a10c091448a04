package cli

import (
	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// fnCmd is the KRM function. kustomize runs it as an exec function with
// `exec: {path: nrl-k8s, args: [fn]}`, so the binary needs no wrapper script
// and no argument-less mode that guesses from stdin. Its flags and body are
// krm's (krm.Flags, krm.Run), which the lean binary fn/cmd/nrl-krm, the
// image's entrypoint, runs too: one code path, the same bytes.
func fnCmd() *cobra.Command {
	var inv krm.Invocation
	c := &cobra.Command{
		Use:           "fn " + krm.Usage,
		Short:         "Run as a KRM function: a ResourceList on stdin, the rendered ResourceList on stdout",
		Long:          krm.Help,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	krm.Flags(c.Flags(), &inv)
	c.RunE = func(cmd *cobra.Command, args []string) error {
		inv.Args = args
		if code := krm.Run(inv, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()); code != ExitOK {
			// krm.Run printed its diagnostics; Main would print an error again.
			return exitError{code}
		}
		return nil
	}
	return c
}
