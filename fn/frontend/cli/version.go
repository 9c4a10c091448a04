package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/buildinfo"
)

func versionCmd() *cobra.Command {
	var short bool
	var format string
	c := &cobra.Command{
		Use:   "version [--short] [-o json|yaml]",
		Short: "Print the version of nrl-k8s",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			bi := buildinfo.Read(Version)
			w := cmd.OutOrStdout()
			switch {
			case format != "":
				b, err := bi.Encode(format)
				if err != nil {
					return usageError{err}
				}
				_, err = w.Write(b)
				return err
			case short:
				_, err := fmt.Fprintln(w, bi.Version)
				return err
			}
			_, err := fmt.Fprintln(w, bi.String())
			return err
		},
	}
	c.Flags().BoolVar(&short, "short", false, "print the version only")
	c.Flags().StringVarP(&format, "output", "o", "", "json or yaml")
	completeValues(c, "output", "json", "yaml")
	return c
}
