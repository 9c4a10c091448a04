package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// KustomizePlugin is the process as a kustomize exec generator plugin:
// args[0] is the file kustomize wrote the generator's config to; the
// rendered objects go to stdout as a plain YAML stream, diagnostics to
// stderr; 1 when a run fails (kustomize stops the build and prints stderr).
func KustomizePlugin(args []string, stdout, stderr io.Writer) int {
	err := krm.RunPlugin(krm.PluginOptions{Args: args, Dir: ".", Stdout: stdout})
	if err == nil {
		return ExitOK
	}
	fmt.Fprintln(stderr, err)
	if errors.Is(err, krm.ErrPluginUsage) {
		return ExitUsage
	}
	return ExitError
}

// kustomizePluginCmd installs the plugin: a symbolic link to this binary
// where kustomize looks for the NemoRLRunGenerator kind.
func kustomizePluginCmd() *cobra.Command {
	var home string
	c := &cobra.Command{
		Use:   "kustomize-plugin --plugin-home DIR",
		Short: "Install this binary as kustomize's NemoRLRunGenerator plugin (generator mode for many runs)",
		Long: `Link this binary into a kustomize plugin home as the exec plugin of the
` + krm.PluginKind + ` kind (` + vocab.APIVersion + `), the fastest form of generator
mode: kustomize parses the plugin's output once. Then, in a kustomization:

  generators: [runs-generator.yaml]

  # runs-generator.yaml
  apiVersion: ` + vocab.APIVersion + `
  kind: ` + krm.PluginKind + `
  metadata: {name: runs}
  files: .            # the package root: nothing outside it is read
  runs: [runs.yaml]   # files of NemoRLRun documents

  KUSTOMIZE_PLUGIN_HOME=DIR kustomize build --enable-alpha-plugins DIR

kustomize's default plugin home is $XDG_CONFIG_HOME/kustomize/plugin
(~/.config/kustomize/plugin). See docs/krm.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if home == "" {
				return usageError{errors.New("--plugin-home is required: the folder kustomize reads plugins from (KUSTOMIZE_PLUGIN_HOME, default $XDG_CONFIG_HOME/kustomize/plugin)")}
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			if self, err = filepath.EvalSymlinks(self); err != nil {
				return err
			}
			path := krm.PluginPath(home)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			if old, err := os.Readlink(path); err == nil && old == self {
				fmt.Fprintln(cmd.OutOrStdout(), path)
				return nil
			}
			if _, err := os.Lstat(path); err == nil {
				if err := os.Remove(path); err != nil {
					return err
				}
			}
			if err := os.Symlink(self, path); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	c.Flags().StringVar(&home, "plugin-home", "", "kustomize plugin home (KUSTOMIZE_PLUGIN_HOME; kustomize's default is $XDG_CONFIG_HOME/kustomize/plugin)")
	return c
}
