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

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
)

// ApplyExts are the extensions `kubectl apply -f DIR` reads in DIR
// (k8s.io/cli-runtime's resource.FileExtensions): every such file in the
// output directory is applied with the renders, whoever wrote it.
var ApplyExts = []string{".json", ".yaml", ".yml"}

// Strays lists the files of the output directory (names, sorted) that no
// run renders and that are not the kustomization render-all maintains, but
// that `kubectl apply -f out/` would apply: any *.yml or *.json, a *.yaml
// of no run (Foreign: one render-all wrote is an orphan, drift), and,
// unless kustomization is maintained, a kustomization.yaml holding
// anything but a Kustomization. Files git does not track are not the pull
// request's and are left out, as ReadManifests leaves them out.
func Strays(disk source.Disk, out string, res *Result, committed map[string][]byte, kustomization bool) ([]string, error) {
	entries, err := os.ReadDir(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	foreign := map[string]bool{}
	for _, n := range Foreign(committed, res) {
		foreign[n+Ext] = true
	}
	var strays []string
	for _, e := range entries {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		if e.IsDir() || !containsExt(ext) {
			continue
		}
		if abs, err := filepath.Abs(filepath.Join(out, name)); err != nil || !disk.Tracked(abs) {
			continue
		}
		switch {
		case foreign[name]:
		case name == KustomizationFile:
			if kustomization || onlyKustomization(filepath.Join(out, name)) {
				continue
			}
		case strings.HasSuffix(name, Ext):
			// A run's manifest (read, refused or untracked) or an orphan:
			// judged elsewhere.
			continue
		}
		strays = append(strays, name)
	}
	sort.Strings(strays)
	return strays, nil
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
// the pull request would have `kubectl apply -f` apply it; otherwise it is
// left alone.
func reportStrays(stderr io.Writer, shown string, strays []string, res *Result, committed map[string][]byte, check bool) {
	foreign := map[string]bool{}
	for _, n := range Foreign(committed, res) {
		foreign[n+Ext] = true
	}
	for _, name := range strays {
		what := "not a run's manifest (render-all writes <run>" + Ext + " and, with --kustomization, " + KustomizationFile + ")"
		if name == KustomizationFile {
			what = "holds objects other than a Kustomization, and render-all does not maintain it (no --kustomization)"
		}
		if n := strings.TrimSuffix(name, Ext); foreign[name] {
			what = fmt.Sprintf("no run %s/%s, and not written by render-all (objects without the %s: %s label)", RunsDir, n, manifest.ManagedByKey, manifest.ManagedByValue)
		}
		if check {
			fmt.Fprintf(stderr, "%s: %s; refused: `kubectl apply -f %s/` applies every %s file there, so no run's review covers it (remove it, or move it out of %s/)\n",
				path.Join(shown, name), what, shown, strings.Join(ApplyExts, ", "), shown)
			continue
		}
		fmt.Fprintf(stderr, "%s: %s; left alone (render-all --check refuses it)\n", path.Join(shown, name), what)
	}
}
