// Package krminputs lists the files a set of NemoRLRuns reads (each run's
// recipe, profile and user defaults with their whole `defaults:` chains)
// and writes them as the KRM function's inputs: the configMapGenerator
// block of a kustomization, or the ConfigMaps of a kpt package. Adding a
// run to a kustomization is then one line plus `nrl-k8s kustomize-inputs`.
package krminputs

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/krm"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/lazyre"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Dir is one ConfigMap: the files of one directory, relative to the root.
type Dir struct {
	Name  string   // ConfigMap name
	Path  string   // slash path relative to the root (the files-dir annotation)
	Files []string // base names, sorted
}

// Run is one NemoRLRun and the file it was read from (its paths are
// relative to that file's directory).
type Run struct {
	Spec *runspec.NemoRLRun
	File string // as given on the command line
}

// ReadRuns reads the NemoRLRuns of each file through src (a confined
// source.Disk in the CLI: the run files are the repository's too). A file
// may hold several documents; other kinds are skipped, as the function
// passes them through.
func ReadRuns(src source.Source, files []string) ([]Run, error) {
	var runs []Run
	for _, f := range files {
		data, err := src.ReadFile(filepath.ToSlash(filepath.Clean(f)))
		if err != nil {
			return nil, err
		}
		nodes, err := kio.FromBytes(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		found := 0
		for _, n := range nodes {
			if n.GetKind() != runspec.Kind {
				continue
			}
			s, err := n.String()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			r, err := runspec.ParseNode(f, []byte(s))
			if err != nil {
				return nil, err
			}
			if err := r.Validate(); err != nil {
				return nil, fmt.Errorf("%s: %w", f, err)
			}
			runs = append(runs, Run{Spec: r, File: f})
			found++
		}
		if found == 0 {
			return nil, fmt.Errorf("%s: no %s in the file; expected the runs the inputs are for", f, runspec.Kind)
		}
	}
	return runs, nil
}

// RunFiles maps each run's name to its file's slash path relative to root
// (the package root of the files-dir annotations): the KRM function reads a
// run's paths relative to its file, and kustomize passes runs without their
// file paths. A run file outside root is an error.
func RunFiles(root string, runs []Run) (map[string]string, error) {
	out := map[string]string{}
	for _, r := range runs {
		rel, err := below(root, r.File)
		if err != nil {
			return nil, fmt.Errorf("run %s: its file %s: %w", r.Spec.Metadata.Name, r.File, err)
		}
		if prev, dup := out[r.Spec.Metadata.Name]; dup && prev != rel {
			return nil, fmt.Errorf("run %s is in %s and in %s; expected one run per name", r.Spec.Metadata.Name, prev, rel)
		}
		out[r.Spec.Metadata.Name] = rel
	}
	return out, nil
}

// below is file as a slash path relative to root, refused when it leaves
// root.
func below(root, file string) (string, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	absFile, err := filepath.Abs(file)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(absRoot, absFile)
	if err != nil || rel == ".." || strings.HasPrefix(filepath.ToSlash(rel), "../") {
		return "", fmt.Errorf("is not below the package root %s; expected every run file inside it", root)
	}
	return filepath.ToSlash(rel), nil
}

// Collect lists every file the runs read through src, grouped by
// directory. root is the package root the ConfigMaps' files-dir
// annotations are relative to; each run's paths are relative to its own
// file. The CLI's src is confined to root (source.ConfineRepo), so a
// defaults: chain cannot reach a file outside it.
func Collect(src source.Source, root string, runs []Run) ([]Dir, error) {
	l := recipe.NewLoader(src)
	files := map[string]bool{}
	runFiles, err := RunFiles(root, runs)
	if err != nil {
		return nil, err
	}
	for _, run := range runs {
		r := run.Spec
		runFile := runFiles[r.Metadata.Name]
		for _, p := range []struct{ field, file string }{
			{"spec.recipe", r.Spec.Recipe}, {"spec.profile", r.Spec.Profile}, {"spec.defaults", r.Spec.Defaults},
		} {
			if p.file == "" {
				continue
			}
			rel, err := relative(runFile, p.file)
			if err != nil {
				return nil, fmt.Errorf("run %s: %s: %w", r.Metadata.Name, p.field, err)
			}
			m, err := l.Load(path.Join(filepath.ToSlash(root), rel))
			if err != nil {
				return nil, fmt.Errorf("run %s: %s: %w", r.Metadata.Name, p.field, err)
			}
			for _, f := range m.Files {
				fr, err := filepath.Rel(root, filepath.FromSlash(f))
				if err != nil || strings.HasPrefix(filepath.ToSlash(fr), "../") {
					return nil, fmt.Errorf("run %s: %s: %s is outside the root %s; expected every file of the defaults chain below it", r.Metadata.Name, p.field, f, root)
				}
				files[filepath.ToSlash(fr)] = true
			}
		}
	}
	byDir := map[string][]string{}
	for f := range files {
		byDir[path.Dir(f)] = append(byDir[path.Dir(f)], path.Base(f))
	}
	var out []Dir
	names := map[string]string{RunFilesName: "(the run-files ConfigMap)"}
	for d, fs := range byDir {
		sort.Strings(fs)
		n := Name(d)
		if other, dup := names[n]; dup {
			return nil, fmt.Errorf("directories %s and %s would both be ConfigMap %s; rename one", other, d, n)
		}
		names[n] = d
		out = append(out, Dir{Name: n, Path: d, Files: fs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// RunFilesName is the ConfigMap saying where each run's file is.
const RunFilesName = "nrl-run-files"

// relative is p, a path in the run file runFile (relative to the root),
// as a path relative to the root; absolute paths and paths leaving the
// root are refused: the function sees only the package.
func relative(runFile, p string) (string, error) {
	if path.IsAbs(filepath.ToSlash(p)) || filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is absolute; expected a path relative to the run's file %s", p, runFile)
	}
	c := source.Join(runFile, p)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("%q, relative to the run's file %s, is not below the package root; expected a path inside it", p, runFile)
	}
	return c, nil
}

var nonName = lazyre.New(`[^a-z0-9]+`)

// Name is the ConfigMap of a directory: nrl- and its path segments, leaving
// out NeMo-RL's examples/configs (recipes/examples/configs/recipes/llm →
// nrl-recipes-llm) and a segment seen already.
func Name(dir string) string {
	var segs []string
	seen := map[string]bool{}
	for _, s := range strings.Split(dir, "/") {
		s = strings.Trim(nonName().ReplaceAllString(strings.ToLower(s), "-"), "-")
		if s == "" || s == "examples" || s == "configs" || seen[s] {
			continue
		}
		seen[s] = true
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		return "nrl-files"
	}
	return "nrl-" + strings.Join(segs, "-")
}

// Markers delimit the generated block in a kustomization.
const (
	BeginMarker = "# BEGIN nrl-k8s kustomize-inputs: generated, do not edit (nrl-k8s kustomize-inputs --write)"
	EndMarker   = "# END nrl-k8s kustomize-inputs"
)

// KustomizeBlock is the configMapGenerator block, markers included. Paths
// in `files:` are relative to the kustomization's directory kdir. The last
// ConfigMap says where each run's file is (runFiles, from RunFiles).
func KustomizeBlock(dirs []Dir, runFiles map[string]string, root, kdir string) (string, error) {
	// Absolute both, so that a relative root and an absolute -k (or the
	// other way round) relate.
	absK, err := filepath.Abs(kdir)
	if err != nil {
		return "", err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(BeginMarker + "\nconfigMapGenerator:\n")
	for _, d := range dirs {
		fmt.Fprintf(&b, "- name: %s\n  files:\n", d.Name)
		for _, f := range d.Files {
			p, err := filepath.Rel(absK, filepath.Join(absRoot, filepath.FromSlash(d.Path), f))
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&b, "  - %s\n", filepath.ToSlash(p))
		}
		fmt.Fprintf(&b, "  options:\n    disableNameSuffixHash: true\n    annotations:\n      %s: %s\n      %s: \"true\"\n",
			vocab.FilesDirAnnotation, d.Path, vocab.LocalConfigAnnotation)
	}
	fmt.Fprintf(&b, "- name: %s\n  literals:\n", RunFilesName)
	for _, n := range tree.SortedKeys(runFiles) {
		fmt.Fprintf(&b, "  - %s=%s\n", n, runFiles[n])
	}
	fmt.Fprintf(&b, "  options:\n    disableNameSuffixHash: true\n    annotations:\n      %s: \"true\"\n      %s: \"true\"\n",
		vocab.RunFilesAnnotation, vocab.LocalConfigAnnotation)
	b.WriteString(EndMarker + "\n")
	return b.String(), nil
}

// ReplaceBlock puts block in place of the marked block of a kustomization.
func ReplaceBlock(kustomization, block string) (string, error) {
	i := strings.Index(kustomization, BeginMarker)
	j := strings.Index(kustomization, EndMarker)
	if i < 0 || j < i {
		return "", fmt.Errorf("no generated block: put the lines\n  %s\n  %s\nwhere configMapGenerator goes (and no other configMapGenerator)", BeginMarker, EndMarker)
	}
	end := j + len(EndMarker)
	if end < len(kustomization) && kustomization[end] == '\n' {
		end++
	}
	return kustomization[:i] + block + kustomization[end:], nil
}

// KptFiles are the ConfigMaps of a kpt package: file name (in the package's
// inputs/ folder) → bytes, each input read through src.
func KptFiles(src source.Source, dirs []Dir, runFiles map[string]string, root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	cm, err := krm.RunFilesConfigMap(RunFilesName, runFiles)
	if err != nil {
		return nil, err
	}
	s, err := cm.String()
	if err != nil {
		return nil, err
	}
	out[RunFilesName+".yaml"] = []byte(s)
	for _, d := range dirs {
		files := map[string][]byte{}
		for _, f := range d.Files {
			b, err := src.ReadFile(path.Join(filepath.ToSlash(root), d.Path, f))
			if err != nil {
				return nil, err
			}
			files[f] = b
		}
		cm, err := krm.FilesConfigMap(d.Name, d.Path, files)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Path, err)
		}
		s, err := cm.String()
		if err != nil {
			return nil, err
		}
		out[d.Name+".yaml"] = []byte(s)
	}
	return out, nil
}

// Generated reports whether a kpt input file is one of ours (a files
// ConfigMap), so --check can name stale ones.
func Generated(data []byte) bool {
	return bytes.Contains(data, []byte(vocab.FilesDirAnnotation+":")) || bytes.Contains(data, []byte(vocab.RunFilesAnnotation+":"))
}

// SyncKpt brings a kpt package's inputs/ folder to files (name → the input
// ConfigMap a run needs), through wdisk (the package's confined disk): it
// writes what is stale or missing and removes the ConfigMaps this command
// generated that no run needs any more. With check it changes nothing and
// returns what it would have changed.
func SyncKpt(wdisk source.Disk, pkg string, files map[string][]byte, check bool) (stale []string, err error) {
	names := tree.SortedKeys(files)
	inputs := filepath.Join(pkg, "inputs")
	if err := wdisk.CheckDir(inputs); err != nil {
		return nil, err
	}
	for _, n := range names {
		f := filepath.Join(inputs, n)
		cur, err := wdisk.ReadFile(filepath.ToSlash(f))
		if err == nil && string(cur) == string(files[n]) {
			continue
		}
		if check {
			stale = append(stale, fmt.Sprintf("%s: stale or missing", filepath.ToSlash(f)))
			continue
		}
		if err := wdisk.WriteFile(f, files[n]); err != nil {
			return nil, err
		}
	}
	// Generated ConfigMaps that no run needs any more.
	entries, _ := os.ReadDir(inputs)
	for _, e := range entries {
		f := filepath.Join(inputs, e.Name())
		if _, want := files[e.Name()]; want || !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		if b, err := wdisk.ReadFile(filepath.ToSlash(f)); err != nil || !Generated(b) {
			continue
		}
		if check {
			stale = append(stale, fmt.Sprintf("%s: no run reads these files any more", filepath.ToSlash(f)))
			continue
		}
		if err := wdisk.RemoveFile(f); err != nil {
			return nil, err
		}
	}
	return stale, nil
}
