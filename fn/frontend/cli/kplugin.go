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

// KustomizePlugin is the process as kustomize's exec generator plugin
// (krm.PluginMain, which the lean binary fn/cmd/nrl-krm runs too).
func KustomizePlugin(args []string, stdout, stderr io.Writer) int {
	return krm.PluginMain(args, stdout, stderr)
}

// kustomizePluginCmd installs the plugin: a symbolic link where kustomize
// looks for the NemoRLRunGenerator kind, to nrl-krm when it sits beside
// this binary (`make build` and `go install` of both put it there: the
// same plugin without the CLI's start-up), else to this binary.
func kustomizePluginCmd() *cobra.Command {
	var home string
	c := &cobra.Command{
		Use:   "kustomize-plugin --plugin-home DIR",
		Short: "Install this binary as kustomize's NemoRLRunGenerator plugin (generator mode for many runs)",
		Long: `Link nrl-krm (the KRM function alone) when it is beside this binary, else
this binary, into a kustomize plugin home as the exec plugin of the
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
			self = pluginBinary(self)
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

// leanName is the KRM function's own binary (fn/cmd/nrl-krm).
const leanName = "nrl-krm"

// pluginBinary is the binary the plugin link names: nrl-krm beside self
// (a regular executable file, symbolic links resolved), else self.
func pluginBinary(self string) string {
	lean, err := filepath.EvalSymlinks(filepath.Join(filepath.Dir(self), leanName))
	if err != nil {
		return self
	}
	if fi, err := os.Stat(lean); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return self
	}
	return lean
}
