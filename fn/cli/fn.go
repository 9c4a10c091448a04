package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework/command"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/krm"
)

func init() { extraCommands = append(extraCommands, fnCmd) }

// fnCmd is the KRM function. kustomize runs it as an exec function with
// `exec: {path: nrl-k8s, args: [fn]}` and the container image's entrypoint
// is `nrl-k8s fn`, so the binary needs no wrapper script and no
// argument-less mode that guesses from stdin.
func fnCmd() *cobra.Command {
	// Printing is ours: kyaml's printer writes the error without a newline,
	// and Main would print it a second time.
	c := command.Build(krm.Processor{}, command.StandaloneEnabled, true)
	c.Use = "fn [FUNCTION_CONFIG [RESOURCES.yaml|- ...]]"
	c.Short = "Run as a KRM function: a ResourceList on stdin, the rendered ResourceList on stdout"
	c.Long = `Run as a KRM function (kustomize exec/container function, kpt fn render).

With no arguments, read a ResourceList on stdin and write it back with the
rendered objects and the findings as results; exit 1 when a result is an
error. With arguments (standalone mode, for trying it out), the first is the
function config (a NemoRLRun) and the rest are files of input items
("-" for stdin); only the items are written.

Input files arrive as ConfigMaps annotated ` + krm.FilesDirAnnotation + `: DIR (each
data key a file in DIR) or ` + krm.FileAnnotation + `: PATH (one key). NemoRLRun
paths are relative to that package root. See docs/krm.md.`
	run := c.RunE
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if err := run(cmd, args); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), strings.TrimRight(err.Error(), "\n"))
			return exitError{ExitError}
		}
		return nil
	}
	return c
}
