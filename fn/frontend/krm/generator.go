package krm

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// Options are what the generator mode adds to a ResourceList: under
// kustomize's `generators:` a function is given only its own config, so
// the files and further runs come from disk instead of items. The zero
// Options is the transformer/kpt function, which reads nothing from disk.
type Options struct {
	// Files reads the recipes and profiles no input ConfigMap carries, by
	// their package-root paths (nil: only ConfigMaps).
	Files source.Source
	// Runs are further NemoRLRuns, rendered as if they were items.
	Runs []*yaml.RNode
	// FailOnWarning makes a warning fail the render like an error: for a
	// caller whose diagnostics nobody sees unless it fails (kustomize shows
	// an exec plugin's stderr only then).
	FailOnWarning bool
}

// Generator builds the Options of `nrl-k8s fn --files ROOT --runs FILE...`
// (see NewGenerator) for the kustomization in the working directory.
func Generator(root string, runFiles []string) (Options, error) {
	return NewGenerator(GeneratorInputs{Root: root, RunFiles: runFiles, Dir: ".", RootName: "--files", RunName: func(int) string { return "--runs" }})
}

// GeneratorInputs are what a generator's config names: the package root
// and the run files, relative to Dir.
type GeneratorInputs struct {
	Root     string
	RunFiles []string
	// Dir is the kustomization's directory (kustomize starts the function
	// there). Root must stay inside the git work tree holding it, or
	// inside Dir when it is in none: a pull request edits the config, and
	// kustomize's load restrictor keeps a kustomization's own files inside
	// its root the same way.
	Dir string
	// RootName and RunName name the root and each run file in errors
	// (flags for the CLI, config fields for the kustomize plugin).
	RootName string
	RunName  func(i int) string
}

// NewGenerator builds the Options of a generator: files are read below the
// root only, as render-all reads a repository (regular files, symlinks
// resolved inside it, in a git work tree only the files git tracks); run
// files are read through the same confinement.
func NewGenerator(in GeneratorInputs) (Options, error) {
	runFiles, rootName, runName := in.RunFiles, in.RootName, in.RunName
	at := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(in.Dir, p)
	}
	root := at(in.Root)
	if err := insideRepository(in.Dir, root); err != nil {
		return Options{}, fmt.Errorf("%s %q: %w", rootName, in.Root, err)
	}
	disk, err := source.ConfineRepo(root, false)
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", rootName, err)
	}
	opts := Options{Files: under{root: disk.Root(), disk: disk}}
	for i, f := range runFiles {
		abs, err := filepath.Abs(at(f))
		if err != nil {
			return Options{}, err
		}
		data, err := disk.ReadFile(filepath.ToSlash(abs))
		if err != nil {
			return Options{}, fmt.Errorf("%s %s: %w", runName(i), f, err)
		}
		rel, err := disk.RelPath(abs)
		if err != nil {
			return Options{}, fmt.Errorf("%s %s: %w", runName(i), f, err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
		if err != nil {
			return Options{}, fmt.Errorf("%s %s: %w", runName(i), f, err)
		}
		for _, n := range nodes {
			if !isRun(n) {
				return Options{}, fmt.Errorf("%s %s: a %s %s; expected only %s documents", runName(i), f, n.GetKind(), n.GetName(), "NemoRLRun")
			}
			// The run's paths are relative to its file, and results name
			// it: its path below the package root, as kpt gives it.
			if err := n.PipeE(yaml.SetAnnotation(runFileAnnotation, rel)); err != nil {
				return Options{}, err
			}
			opts.Runs = append(opts.Runs, n)
		}
	}
	return opts, nil
}

// insideRepository refuses a package root (a path, dir joined already)
// outside the git work tree
// holding dir (outside dir itself when no work tree holds it). The root is
// judged after resolving links, and the message names no host path.
func insideRepository(dir, root string) error {
	bound, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if bound, err = filepath.EvalSymlinks(bound); err != nil {
		return err
	}
	what := "the kustomization's directory (it is in no git work tree)"
	if top, ok := source.WorkTreeOf(bound); ok {
		bound, what = top, "the git work tree holding the kustomization"
	}
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil || !source.Within(bound, abs) {
		return fmt.Errorf("is outside the repository: expected a directory inside %s, as kustomize's load restrictor keeps a kustomization's files inside its root; a recipe's defaults: would otherwise read host files into the build", what)
	}
	return nil
}

// runFileAnnotation carries a --runs file's path below the package root to
// the run (its paths are relative to it) and its results; it is a tool
// annotation (never copied to the run's objects).
const runFileAnnotation = "config.kubernetes.io/path"

// under reads relative slash paths below root through the confined disk.
type under struct {
	root string
	disk source.Disk
}

func (u under) ReadFile(name string) ([]byte, error) {
	if !filepath.IsAbs(filepath.FromSlash(name)) {
		name = filepath.ToSlash(filepath.Join(u.root, filepath.FromSlash(name)))
	}
	b, err := u.disk.ReadFile(name)
	if err != nil {
		// Messages name the package path, not this machine's root.
		return nil, errors.New(strings.ReplaceAll(err.Error(), filepath.ToSlash(u.root)+"/", ""))
	}
	return b, nil
}

// layered reads the input ConfigMaps' files first, then the disk.
type layered struct {
	mem  source.Memory
	disk source.Source
}

func (l layered) ReadFile(name string) ([]byte, error) {
	if b, ok := l.mem[name]; ok {
		return b, nil
	}
	return l.disk.ReadFile(name)
}

// KustomizationRefuses is the generator mode's guard for kustomize's own
// transformers: under `generators:` kustomize applies the kustomization's
// namePrefix, nameSuffix and template labels to the rendered objects, and
// without nrl-k8s's configuration it renames objects but not the
// references to them (a worker's claim template, a clusterSelector), which
// the cluster finds out only when pods do not start. dir is the
// kustomization's directory (the exec function's working directory); a
// directory without a kustomization file is not checked.
func KustomizationRefuses(dir string) error {
	var data []byte
	var name string
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err == nil {
			data, name = b, n
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if data == nil {
		return nil
	}
	var k struct {
		NamePrefix     string            `yaml:"namePrefix"`
		NameSuffix     string            `yaml:"nameSuffix"`
		CommonLabels   map[string]string `yaml:"commonLabels"`
		Configurations []string          `yaml:"configurations"`
		Labels         []struct {
			IncludeTemplates bool `yaml:"includeTemplates"`
		} `yaml:"labels"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	var uses []string
	if k.NamePrefix != "" {
		uses = append(uses, "namePrefix")
	}
	if k.NameSuffix != "" {
		uses = append(uses, "nameSuffix")
	}
	if len(k.CommonLabels) > 0 {
		uses = append(uses, "commonLabels")
	}
	for _, l := range k.Labels {
		if l.IncludeTemplates {
			uses = append(uses, "labels with includeTemplates")
			break
		}
	}
	if len(uses) == 0 {
		return nil
	}
	for _, c := range k.Configurations {
		if filepath.Base(c) == ConfigurationName {
			return nil
		}
	}
	return fmt.Errorf("%s: %s change the generated objects, and kustomize follows the references inside KubeRay and DRA objects only with nrl-k8s's configuration: expected `configurations: [PATH/kustomize/%s]` in %s (docs/krm.md, \"Generator mode\")",
		name, strings.Join(uses, ", "), ConfigurationName, name)
}

// ConfigurationName is the shipped transformer configuration's file name.
const ConfigurationName = "nrl-k8s.configuration.yaml"
