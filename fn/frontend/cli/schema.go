package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/profile"
)

// schemaCmd prints the profile's JSON Schema (profiles/profile.schema.json)
// or its key reference (docs/profiles.md), both generated from fn/engine/load/profile.
func schemaCmd() *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "schema profile [-o json|markdown]",
		Short: "Print the JSON Schema of an infra profile (or its key reference as Markdown)",
		Long: `Print the JSON Schema of an infra profile, generated from the Go schema the
loader decodes into; profiles/profile.schema.json is this output. Editors that
run yaml-language-server complete and check a profile whose first line is
  # yaml-language-server: $schema=<path to profile.schema.json>
The RayCluster and Deployment specs are left open in the schema (their
KubeRay / Kubernetes schemas are in fn/analyse/schema/crds); the loader checks them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] != "profile" {
				return usageError{fmt.Errorf("unknown schema %q; expected profile", args[0])}
			}
			out, err := profile.Reference(format)
			if err != nil && !slices.Contains(profile.ReferenceFormats, format) {
				return usageError{err}
			}
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		},
	}
	c.Flags().StringVarP(&format, "output", "o", "json", "output format: json (JSON Schema) or markdown (key reference)")
	completeValues(c, "output", profile.ReferenceFormats...)
	return c
}
