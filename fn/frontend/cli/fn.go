package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// fnCmd is the KRM function. kustomize runs it as an exec function with
// `exec: {path: nrl-k8s, args: [fn]}` and the container image's entrypoint
// is `nrl-k8s fn`, so the binary needs no wrapper script and no
// argument-less mode that guesses from stdin. The two modes are those of
// kyaml's command.Build (ResourceList on stdin; standalone with files),
// run by krm.Execute instead of framework.Execute.
func fnCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "fn [FUNCTION_CONFIG [RESOURCES.yaml|- ...]]",
		Short: "Run as a KRM function: a ResourceList on stdin, the rendered ResourceList on stdout",
		Long: `Run as a KRM function (kustomize exec/container function, kpt fn render).

With no arguments, read a ResourceList on stdin and write it back with the
rendered objects and the findings as results; exit 1 when a result is an
error. With arguments (standalone mode, for trying it out), the first is the
function config (a NemoRLRun) and the rest are files of input items
("-" for stdin); only the items are written.

Input files arrive as ConfigMaps annotated ` + vocab.FilesDirAnnotation + `: DIR (each
data key a file in DIR) or ` + vocab.FileAnnotation + `: PATH (one key). A NemoRLRun's
paths are relative to its own file, as render-all reads them: kpt and the
generator mode give the function each run's file, and under kustomize the
nrl-run-files ConfigMap that kustomize-inputs writes says where it is. See
docs/krm.md.

Generator mode (kustomize ` + "`generators:`" + `, the way for many runs): kustomize gives a
generator only its own config, so --files ROOT reads the recipes and profiles
below ROOT instead (confined to it, as render-all reads a repository; ROOT
itself inside the git work tree holding the kustomization) and
--runs FILE adds the NemoRLRuns of FILE (repeatable); relative paths are
relative to the working directory, which kustomize sets to the
kustomization's directory.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	var files string
	var runs []string
	c.Flags().StringVar(&files, "files", "", "generator mode: read input files below this directory (the package root) when no ConfigMap carries them")
	c.Flags().StringArrayVar(&runs, "runs", nil, "generator mode: a file of NemoRLRuns to render too (repeatable; needs --files, read inside it)")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		var opts krm.Options
		if len(runs) > 0 && files == "" {
			return usageError{fmt.Errorf("--runs needs --files (the package root the runs' files and inputs are read below)")}
		}
		if files != "" {
			var err error
			if opts, err = krm.Generator(files, runs); err != nil {
				return usageError{err}
			}
			if err := krm.KustomizationRefuses("."); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "nrl-k8s fn: "+err.Error())
				return exitError{ExitError}
			}
		}
		in, err := krm.ReadCapped(cmd.InOrStdin(), len(args) == 0 || slices.Contains(args[1:], "-"))
		if err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), err)
			return exitError{ExitError}
		}
		rw := &kio.ByteReadWriter{Reader: in, Writer: cmd.OutOrStdout(), KeepReaderAnnotations: true}
		if len(args) > 0 {
			if err := krm.Standalone(rw, in, args); err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return exitError{ExitUsage}
			}
		}
		if err := krm.ExecuteWith(rw, cmd.ErrOrStderr(), opts); err != nil {
			// Printing is ours: Main would print a returned error again.
			fmt.Fprintln(cmd.ErrOrStderr(), strings.TrimRight(err.Error(), "\n"))
			return exitError{ExitError}
		}
		return nil
	}
	return c
}
