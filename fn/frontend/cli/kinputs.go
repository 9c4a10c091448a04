package cli

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krminputs"
)

// kustomizeInputsCmd writes (or checks) the KRM function's input ConfigMaps
// for a set of runs: the configMapGenerator block of a kustomization, or
// the inputs/ ConfigMaps of a kpt package.
func kustomizeInputsCmd() *cobra.Command {
	var kdir, kptDir, root string
	var write, check, untracked bool
	c := &cobra.Command{
		Use:   "kustomize-inputs RUN... [-k DIR | --kpt DIR] [--root DIR] [--write | --check]",
		Short: "Write or check the input ConfigMaps (every file of every run's defaults chain) for kustomize or kpt",
		Long: `List every file the runs read (recipe, profile and user defaults, each with
its whole defaults: chain), one ConfigMap per directory, in the shape the KRM
function takes (docs/krm.md).

RUN files hold NemoRLRuns (several documents each allowed); their spec paths
are relative to the run file's directory, as for render-all. --root is the
package root (default: the kustomization or kpt directory): the files-dir
annotations are relative to it and nothing outside it is read. A last
ConfigMap, nrl-run-files, says where each run's file is below --root, since
kustomize gives the function its runs without their file paths.

Kustomize (-k DIR, default .): prints the configMapGenerator block; --write
replaces the block between the markers in DIR/kustomization.yaml, --check
exits 1 with a diff when it is stale.
Kpt (--kpt DIR): prints the ConfigMaps; --write writes DIR/inputs/<name>.yaml,
--check exits 1 when one is stale, missing or no longer needed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if write && check {
				return usageError{errors.New("--write and --check are exclusive")}
			}
			if kptDir != "" && cmd.Flags().Changed("kustomization") {
				return usageError{errors.New("-k and --kpt are exclusive")}
			}
			mode := krminputs.Print
			switch {
			case write:
				mode = krminputs.Write
			case check:
				mode = krminputs.Check
			}
			err := krminputs.Execute(krminputs.Options{
				RunFiles: args, Kustomization: kdir, Kpt: kptDir, Root: root,
				Mode: mode, IncludeUntracked: untracked,
				Stdout: cmd.OutOrStdout(), Stderr: cmd.ErrOrStderr(),
			})
			if errors.Is(err, krminputs.ErrStale) {
				return exitError{ExitError}
			}
			if fe, ok := errors.AsType[*krminputs.FlagError](err); ok {
				return usageError{fe}
			}
			return err
		},
	}
	c.Flags().StringVarP(&kdir, "kustomization", "k", ".", "kustomization directory")
	c.Flags().StringVar(&kptDir, "kpt", "", "kpt package directory (inputs go to DIR/inputs/)")
	c.Flags().StringVar(&root, "root", "", "package root: the ConfigMaps' files-dir paths are relative to it, nothing outside it is read (default: the kustomization or kpt directory)")
	c.Flags().BoolVar(&write, "write", false, "write the inputs in place")
	c.Flags().BoolVar(&check, "check", false, "exit 1 when the committed inputs differ from what the runs need")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "in a git work tree, also read files git does not track")
	return c
}
