package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
)

// The kustomize plugin form of generator mode (docs/krm.md, "Generator
// mode as a kustomize plugin"). kustomize runs a KRM function's output
// through kyaml once more before it keeps it (it parses the function's
// ResourceList, writes the items back to YAML and parses that again), which
// for many runs costs as much as the whole build of the same objects from a
// file. A kustomize exec plugin's standard output is parsed once, as a
// resources file is. The plugin is this binary under the name kustomize
// looks up for the generator's kind:
// <plugin home>/nemo-rl.nvidia.com/v1alpha1/nemorlrungenerator/NemoRLRunGenerator.
const (
	PluginAPIVersion = "nemo-rl.nvidia.com/v1alpha1"
	PluginKind       = "NemoRLRunGenerator"
)

// IsKustomizePlugin says whether the process was started under the plugin's
// name (kustomize execs the file in its plugin home, a link to this binary).
func IsKustomizePlugin(argv0 string) bool { return filepath.Base(argv0) == PluginKind }

// PluginPath is where kustomize looks for the plugin below a plugin home.
func PluginPath(home string) string {
	group, version, _ := strings.Cut(PluginAPIVersion, "/")
	return filepath.Join(home, group, version, strings.ToLower(PluginKind), PluginKind)
}

// generatorConfig is the NemoRLRunGenerator kustomize hands the plugin: the
// same two settings as `nrl-k8s fn --files ROOT --runs FILE...`.
type generatorConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	// Files is the package root the runs' recipe and profile paths are
	// relative to (read only below it).
	Files string `json:"files"`
	// Runs are the files of NemoRLRun documents.
	Runs []string `json:"runs"`
	// Warnings is what a warning does: fail (the default) stops the build
	// with every diagnostic, because kustomize shows a plugin's stderr only
	// when it fails; ignore builds anyway (nrl-k8s check and render-all
	// --check still show them).
	Warnings string `json:"warnings,omitempty"`
}

// KustomizePlugin is the process as a kustomize exec generator plugin:
// args[0] is the file kustomize wrote the generator's config to; the
// rendered objects go to stdout as a plain YAML stream, diagnostics to
// stderr; 1 when a run fails (kustomize stops the build and prints stderr).
func KustomizePlugin(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintf(stderr, "nrl-k8s %s: expected one argument, the generator config file kustomize passes; got %d (argsOneLiner and argsFromFile are not used: set files and runs in the config)\n", PluginKind, len(args))
		return ExitUsage
	}
	cfg, err := readGeneratorConfig(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "nrl-k8s %s: %v\n", PluginKind, err)
		return ExitUsage
	}
	where := fmt.Sprintf("%s %q", PluginKind, cfg.Metadata.Name)
	opts, err := krm.GeneratorNamed(cfg.Files, cfg.Runs, where+" files", func(i int) string { return fmt.Sprintf("%s runs[%d]", where, i) })
	opts.FailOnWarning = cfg.Warnings != "ignore"
	if err != nil {
		fmt.Fprintf(stderr, "nrl-k8s: %v\n", err)
		return ExitUsage
	}
	if err := krm.KustomizationRefuses("."); err != nil {
		fmt.Fprintf(stderr, "nrl-k8s %s %s: %v\n", PluginKind, cfg.Metadata.Name, err)
		return ExitError
	}
	// No input items and no function config: the writer writes the plain
	// stream of the rendered documents (no ResourceList, no reader
	// annotations), which kustomize reads as it reads a resources file.
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(nil), Writer: stdout, OmitReaderAnnotations: true}
	// A successful build's findings are not written: kustomize keeps an
	// exec plugin's stderr only to show it when the plugin fails, and then
	// every finding is in the error below.
	if err := krm.ExecuteWith(rw, nil, opts); err != nil {
		fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
		if opts.FailOnWarning {
			fmt.Fprintf(stderr, "nrl-k8s: %s: failed on the findings above: kustomize shows a plugin's messages only when it fails, so a warning stops the build; fix it, or set warnings: ignore in the generator to build anyway (nrl-k8s check shows them)\n", where)
		}
		return ExitError
	}
	return 0
}

// readGeneratorConfig reads the config strictly: an unknown or misspelt key
// is an error naming it, never ignored.
func readGeneratorConfig(file string) (generatorConfig, error) {
	var cfg generatorConfig
	data, err := os.ReadFile(file)
	if err != nil {
		return cfg, err
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, fmt.Errorf("the generator config: %w; expected apiVersion, kind, metadata, files, runs and warnings", err)
	}
	where := fmt.Sprintf("%s %q", PluginKind, cfg.Metadata.Name)
	switch {
	case cfg.APIVersion != PluginAPIVersion || cfg.Kind != PluginKind:
		return cfg, fmt.Errorf("the generator config is a %s %s; expected apiVersion %s, kind %s", cfg.APIVersion, cfg.Kind, PluginAPIVersion, PluginKind)
	case cfg.Files == "":
		return cfg, fmt.Errorf("%s: files is empty; expected the package root the runs' recipe and profile paths are relative to (relative to the kustomization, e.g. files: ../..)", where)
	case len(cfg.Runs) == 0:
		return cfg, fmt.Errorf("%s: runs is empty; expected the files of NemoRLRun documents to render, e.g. runs: [runs.yaml]", where)
	}
	for i, r := range cfg.Runs {
		if r == "" {
			return cfg, fmt.Errorf("%s: runs[%d] is empty; expected a file of NemoRLRun documents", where, i)
		}
	}
	if cfg.Warnings != "" && cfg.Warnings != "fail" && cfg.Warnings != "ignore" {
		return cfg, fmt.Errorf("%s: warnings is %q; expected fail (the default) or ignore", where, cfg.Warnings)
	}
	return cfg, nil
}

// kustomizePluginCmd installs the plugin: a symbolic link to this binary
// where kustomize looks for the NemoRLRunGenerator kind.
func kustomizePluginCmd() *cobra.Command {
	var home string
	c := &cobra.Command{
		Use:   "kustomize-plugin --plugin-home DIR",
		Short: "Install this binary as kustomize's NemoRLRunGenerator plugin (generator mode for many runs)",
		Long: `Link this binary into a kustomize plugin home as the exec plugin of the
` + PluginKind + ` kind (` + PluginAPIVersion + `), the fastest form of generator
mode: kustomize parses the plugin's output once. Then, in a kustomization:

  generators: [runs-generator.yaml]

  # runs-generator.yaml
  apiVersion: ` + PluginAPIVersion + `
  kind: ` + PluginKind + `
  metadata: {name: runs}
  files: .            # the package root the runs' paths are relative to
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
			path := PluginPath(home)
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
