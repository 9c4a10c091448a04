package cli

import (
	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// rendererKeys are the recipe keys the checks read.
var rendererKeys = []string{
	"cluster.gpus_per_node", "cluster.num_nodes", "cluster.segment_size",
	"policy.megatron_cfg.enabled", "policy.dtensor_cfg.enabled",
	"policy.generation.colocated.enabled",
	"policy.generation.colocated.resources.num_nodes",
	"policy.generation.colocated.resources.gpus_per_node",
}

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
			out := tree.NewMap()
			out.Set("infra", res.Profile.Tree)
			if res.Recipe != nil {
				keys := tree.NewMap()
				for _, k := range rendererKeys {
					if v, ok, dyn := res.Recipe.Value(k); ok {
						keys.Set(k, v)
					} else if dyn {
						keys.Set(k, "<set in the pod by a shell variable>")
					}
				}
				rm := tree.NewMap()
				rm.Set("file", res.Recipe.File)
				files := make([]any, len(res.Recipe.Files))
				for i, s := range res.Recipe.Files {
					files[i] = s
				}
				rm.Set("defaultsChain", files)
				rm.Set("keys", keys)
				out.Set("recipe", rm)
			}
			y, err := tree.ToYAML(out)
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
