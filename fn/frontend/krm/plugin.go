package krm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
)

// The kustomize plugin form of generator mode (docs/md, "Generator
// mode as a kustomize plugin"). kustomize runs a KRM function's output
// through kyaml once more before it keeps it (it parses the function's
// ResourceList, writes the items back to YAML and parses that again), which
// for many runs costs as much as the whole build of the same objects from a
// file. A kustomize exec plugin's standard output is parsed once, as a
// resources file is. The plugin is this binary under the name kustomize
// looks up for the generator's kind:
// <plugin home>/nemo-rl.nvidia.com/v1alpha1/nemorlrungenerator/NemoRLRunGenerator.
// Its apiVersion is vocab.APIVersion.
const PluginKind = "NemoRLRunGenerator"

// IsKustomizePlugin says whether the process was started under the plugin's
// name (kustomize execs the file in its plugin home, a link to this binary).
func IsKustomizePlugin(argv0 string) bool { return filepath.Base(argv0) == PluginKind }

// PluginPath is where kustomize looks for the plugin below a plugin home.
func PluginPath(home string) string {
	group, version, _ := strings.Cut(vocab.APIVersion, "/")
	return filepath.Join(home, group, version, strings.ToLower(PluginKind), PluginKind)
}

// GeneratorConfig is the NemoRLRunGenerator kustomize hands the plugin: the
// same two settings as `nrl-k8s fn --files ROOT --runs FILE...`.
type GeneratorConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace,omitempty"`
		Labels      map[string]string `json:"labels,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	// Files is the package root: run files and what they name are read
	// only below it (a run's paths are relative to its file).
	Files string `json:"files"`
	// Runs are the files of NemoRLRun documents.
	Runs []string `json:"runs"`
	// Warnings is what a warning does: fail (the default) stops the build
	// with every diagnostic, because kustomize shows a plugin's stderr only
	// when it fails; ignore builds anyway (nrl-k8s check and render-all
	// --check still show them).
	Warnings string `json:"warnings,omitempty"`
}

// ReadGeneratorConfig reads the config strictly: an unknown or misspelt key
// is an error naming it, never ignored.
func ReadGeneratorConfig(file string) (GeneratorConfig, error) {
	var cfg GeneratorConfig
	data, err := os.ReadFile(file)
	if err != nil {
		return cfg, err
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return cfg, fmt.Errorf("the generator config: %w; expected apiVersion, kind, metadata, files, runs and warnings", err)
	}
	where := fmt.Sprintf("%s %q", PluginKind, cfg.Metadata.Name)
	switch {
	case cfg.APIVersion != vocab.APIVersion || cfg.Kind != PluginKind:
		return cfg, fmt.Errorf("the generator config is a %s %s; expected apiVersion %s, kind %s", cfg.APIVersion, cfg.Kind, vocab.APIVersion, PluginKind)
	case cfg.Files == "":
		return cfg, fmt.Errorf("%s: files is empty; expected the package root the runs' files and inputs are read below (relative to the kustomization, e.g. files: ../..)", where)
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

// PluginOptions are the kustomize exec plugin's inputs.
type PluginOptions struct {
	// Args are the plugin's arguments: kustomize passes one, the file it
	// wrote the generator's config to.
	Args []string
	// Dir is the kustomization's directory (kustomize starts the plugin
	// there).
	Dir string
	// Stdout receives the rendered objects as a plain YAML stream.
	Stdout io.Writer
}

// ErrPluginUsage marks a plugin error of its arguments or config, not of
// the runs it renders.
var ErrPluginUsage = errors.New("the plugin's arguments or config")

// pluginError is a plugin failure whose message is the whole text for
// stderr.
type pluginError struct {
	msg   string
	usage bool
}

func (e *pluginError) Error() string { return e.msg }
func (e *pluginError) Is(target error) bool {
	return e.usage && target == ErrPluginUsage
}

// RunPlugin renders the runs of the generator config to o.Stdout. An error
// (ErrPluginUsage for the arguments and config) carries every finding;
// kustomize shows it only because the plugin then fails.
func RunPlugin(o PluginOptions) error {
	if len(o.Args) != 1 {
		return &pluginError{fmt.Sprintf("nrl-k8s %s: expected one argument, the generator config file kustomize passes; got %d (argsOneLiner and argsFromFile are not used: set files and runs in the config)", PluginKind, len(o.Args)), true}
	}
	cfg, err := ReadGeneratorConfig(o.Args[0])
	if err != nil {
		return &pluginError{fmt.Sprintf("nrl-k8s %s: %v", PluginKind, err), true}
	}
	where := fmt.Sprintf("%s %q", PluginKind, cfg.Metadata.Name)
	opts, err := NewGenerator(GeneratorInputs{Root: cfg.Files, RunFiles: cfg.Runs, Dir: o.Dir,
		RootName: where + " files", RunName: func(i int) string { return fmt.Sprintf("%s runs[%d]", where, i) }})
	if err != nil {
		return &pluginError{fmt.Sprintf("nrl-k8s: %v", err), true}
	}
	opts.FailOnWarning = cfg.Warnings != "ignore"
	if err := KustomizationRefuses(o.Dir); err != nil {
		return &pluginError{fmt.Sprintf("nrl-k8s %s %s: %v", PluginKind, cfg.Metadata.Name, err), false}
	}
	// No input items and no function config: the writer writes the plain
	// stream of the rendered documents (no ResourceList, no reader
	// annotations), which kustomize reads as it reads a resources file.
	rw := &kio.ByteReadWriter{Reader: bytes.NewReader(nil), Writer: o.Stdout, OmitReaderAnnotations: true}
	// A successful build's findings are not written: kustomize keeps an
	// exec plugin's stderr only to show it when the plugin fails, and then
	// every finding is in the error.
	if err := ExecuteWith(rw, nil, opts); err != nil {
		msg := strings.TrimRight(err.Error(), "\n")
		if opts.FailOnWarning {
			msg += fmt.Sprintf("\nnrl-k8s: %s: failed on the findings above: kustomize shows a plugin's messages only when it fails, so a warning stops the build; fix it, or set warnings: ignore in the generator to build anyway (nrl-k8s check shows them)", where)
		}
		return &pluginError{msg, false}
	}
	return nil
}
