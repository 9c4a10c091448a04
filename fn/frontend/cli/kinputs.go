package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krminputs"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
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
			base := kdir
			if kptDir != "" {
				base = kptDir
			}
			if root == "" {
				root = base
			}
			// The one rule for repository files (source): the runs and
			// every file they read inside --root, tracked by git, no link
			// out of it; writes never follow a link.
			disk, err := source.ConfineRepo(root, untracked)
			if err != nil {
				return usageError{fmt.Errorf("--root: %w", err)}
			}
			runs, err := krminputs.ReadRuns(disk, args)
			if err != nil {
				return err
			}
			dirs, err := krminputs.Collect(disk, root, runs)
			if err != nil {
				return err
			}
			runFiles, err := krminputs.RunFiles(root, runs)
			if err != nil {
				return err
			}
			if kptDir != "" {
				return kptInputs(cmd, disk, dirs, runFiles, root, kptDir, write, check, untracked)
			}
			block, err := krminputs.KustomizeBlock(dirs, runFiles, root, kdir)
			if err != nil {
				return err
			}
			if !write && !check {
				_, err := fmt.Fprint(cmd.OutOrStdout(), block)
				return err
			}
			wdisk, err := source.ConfineRepo(kdir, untracked)
			if err != nil {
				return usageError{fmt.Errorf("-k: %w", err)}
			}
			file := filepath.Join(kdir, "kustomization.yaml")
			cur, err := wdisk.ReadFile(filepath.ToSlash(file))
			if err != nil {
				return err
			}
			next, err := krminputs.ReplaceBlock(string(cur), block)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			if next == string(cur) {
				return nil
			}
			if check {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: the inputs block is stale; run nrl-k8s kustomize-inputs --write\n%s",
					file, renderall.UnifiedDiff(filepath.ToSlash(file), filepath.ToSlash(file), cur, []byte(next)))
				return exitError{ExitError}
			}
			return wdisk.WriteFile(file, []byte(next))
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

func kptInputs(cmd *cobra.Command, disk source.Disk, dirs []krminputs.Dir, runFiles map[string]string, root, pkg string, write, check, untracked bool) error {
	files, err := krminputs.KptFiles(disk, dirs, runFiles, root)
	if err != nil {
		return err
	}
	names := tree.SortedKeys(files)
	if !write && !check {
		for _, n := range names {
			if _, err := fmt.Fprintf(cmd.OutOrStdout(), "---\n%s", files[n]); err != nil {
				return err
			}
		}
		return nil
	}
	wdisk, err := source.ConfineRepo(pkg, untracked)
	if err != nil {
		return usageError{fmt.Errorf("--kpt: %w", err)}
	}
	stale, err := krminputs.SyncKpt(wdisk, pkg, files, check)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s\nrun nrl-k8s kustomize-inputs --kpt %s --write\n", strings.Join(stale, "\n"), filepath.ToSlash(pkg))
		return exitError{ExitError}
	}
	return nil
}
