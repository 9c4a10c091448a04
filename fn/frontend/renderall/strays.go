package renderall

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// ApplyExts are the extensions `kubectl apply -f DIR` reads in DIR
// (k8s.io/cli-runtime's resource.FileExtensions): every such file in the
// output directory is applied with the renders, whoever wrote it.
var ApplyExts = []string{".json", ".yaml", ".yml"}

// Stray is a file of the output tree no run renders that a sync would
// apply: its path below the output directory (slash-separated) and why
// it is one.
type Stray struct {
	Path string
	// nested: below a subfolder, which no run writes; link: a symlink;
	// foreign: a run's file (a manifest or a worker bundle) of no run
	// that render-all did not write (Foreign).
	nested, link, foreign bool
}

// Strays lists the files of the output directory (sorted by path) that no
// run renders and that are not the kustomization render-all maintains, but
// that a sync of the directory would apply: at its top, any *.yml or
// *.json, a *.yaml of no run (Foreign: one render-all wrote is an orphan,
// drift), unless kustomization is maintained a kustomization.yaml holding
// anything but a Kustomization, and any symlink (render-all writes none;
// a *.yaml one is refused as a run's manifest); and every file at any
// depth below a subfolder, whatever its name, since a Flux Kustomization
// (or kustomize, or `kubectl apply -R`) on the directory applies those
// too and no run writes there, but for the worker bundles (workers: as
// ReadManifests reads WorkersDir), judged as the manifests at the top are.
// Files git does not track are not the pull request's and are left out,
// as ReadManifests leaves them out.
func Strays(disk source.Disk, out string, res *Result, committed, workers map[string][]byte, kustomization bool) ([]Stray, error) {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Keyed by path below out: one rule for both folders of runs' files.
	foreign := map[string]bool{}
	for _, n := range Foreign(committed, res) {
		foreign[n+Ext] = true
	}
	for _, n := range Foreign(workers, res) {
		foreign[WorkersDir+"/"+n+Ext] = true
	}
	var strays []Stray
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			nested, err := straysBelow(disk, out, name, foreign)
			if err != nil {
				return nil, err
			}
			strays = append(strays, nested...)
			continue
		}
		if !tracked(disk, filepath.Join(out, name)) {
			continue
		}
		link := e.Type()&fs.ModeSymlink != 0
		ext := strings.ToLower(filepath.Ext(name))
		switch {
		case link && IsManifestName(name):
			continue // refused as a run's manifest (ReadManifests)
		case link:
		case !containsExt(ext):
			continue
		case foreign[name]:
			strays = append(strays, Stray{Path: name, foreign: true})
			continue
		case name == KustomizationFile:
			if kustomization || onlyKustomization(filepath.Join(out, name)) {
				continue
			}
		case strings.HasSuffix(name, Ext):
			// A run's manifest (read, refused or untracked) or an orphan:
			// judged elsewhere.
			continue
		}
		strays = append(strays, Stray{Path: name, link: link})
	}
	sort.Slice(strays, func(i, j int) bool { return strays[i].Path < strays[j].Path })
	return strays, nil
}

// straysBelow is every tracked file, symlink or other entry below the
// subfolder dir of out, at any depth, none followed: no run writes there,
// but for the worker bundles at the top of WorkersDir (judged as a run's
// manifest is: by CompareWorkers, or a stray when foreign holds it).
func straysBelow(disk source.Disk, out, dir string, foreign map[string]bool) ([]Stray, error) {
	var strays []Stray
	err := filepath.WalkDir(filepath.Join(out, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !tracked(disk, p) {
			return nil
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if foreign[rel] {
			strays = append(strays, Stray{Path: rel, foreign: true})
			return nil
		}
		if name, ok := strings.CutPrefix(rel, WorkersDir+"/"); ok && !strings.Contains(name, "/") && IsManifestName(name) {
			return nil
		}
		strays = append(strays, Stray{Path: rel, nested: true, link: d.Type()&fs.ModeSymlink != 0})
		return nil
	})
	return strays, err
}

// tracked: git tracks the file p (a symlink as itself), so it is the
// pull request's.
func tracked(disk source.Disk, p string) bool {
	abs, err := filepath.Abs(p)
	return err == nil && disk.Tracked(abs)
}

func containsExt(ext string) bool {
	for _, e := range ApplyExts {
		if e == ext {
			return true
		}
	}
	return false
}

// onlyKustomization: every document of file is a kustomization (no kind,
// or kustomize's Kustomization), which `kubectl apply -f` cannot apply; a
// file it cannot read or parse is not.
func onlyKustomization(file string) bool {
	st, err := os.Lstat(file)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	data, err := source.ReadLimited(filepath.ToSlash(file), file, source.MaxRenderSize)
	if err != nil {
		return false
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
		if doc.Kind != "" && (doc.Kind != "Kustomization" || !strings.HasPrefix(doc.APIVersion, "kustomize.config.k8s.io/")) {
			return false
		}
	}
}

// reportStrays names each stray: under check it fails the command, since
// the pull request would have a sync of the directory apply it; otherwise
// it is left alone.
func reportStrays(stderr io.Writer, shown string, strays []Stray, check bool) {
	for _, st := range strays {
		name := st.Path
		what := "not a run's manifest (render-all writes <run>" + Ext + " and, with --kustomization, " + KustomizationFile + ")"
		applies := fmt.Sprintf("`kubectl apply -f %s/` applies every %s file there", path.Dir(path.Join(shown, name)), strings.Join(ApplyExts, ", "))
		switch {
		case st.foreign:
			what = fmt.Sprintf("no run %s/%s, and not written by render-all (objects without the %s: %s label)", RunsDir, strings.TrimSuffix(path.Base(name), Ext), vocab.ManagedByLabel, vocab.ManagedByValue)
		case st.nested:
			what = fmt.Sprintf("in a subfolder of %s/, where no run writes (render-all writes <run>%s at its top)", shown, Ext)
			applies = fmt.Sprintf("a Flux Kustomization on %s/ (or kustomize, or `kubectl apply -R`) applies the files of its subfolders", shown)
		case st.link:
			what = "a symlink, which render-all never writes"
			applies = fmt.Sprintf("a sync of %s/ applies what it points at", shown)
		case name == KustomizationFile:
			what = "holds objects other than a Kustomization, and render-all does not maintain it (no --kustomization)"
		}
		if st.nested && st.link {
			what += ", and a symlink"
		}
		shownPath := safetext.Inline(path.Join(shown, name))
		if check {
			fmt.Fprintf(stderr, "%s: %s; refused: %s, so no run's review covers it (remove it, or move it out of %s/)\n", shownPath, what, applies, shown)
			continue
		}
		fmt.Fprintf(stderr, "%s: %s; left alone (render-all --check refuses it)\n", shownPath, what)
	}
}
