package renderall

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
)

// CheckOutDir refuses an output directory that is a symlink or not a
// directory; the default one (DIR/manifests) must also resolve inside the
// root, so a pull request cannot point render-all's writes elsewhere.
func CheckOutDir(disk source.Disk, out string, defaultOut bool) error {
	st, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: is a symlink; refused: the output directory must be a real directory (render-all never writes or deletes through a link)", out)
	case !st.IsDir():
		return fmt.Errorf("%s: not a directory; expected the output directory", out)
	}
	if !defaultOut || disk.Root() == "" {
		return nil
	}
	abs, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return err
	}
	resolved, err := filepath.EvalSymlinks(abs)
	if err != nil || !source.Within(disk.Root(), resolved) {
		return fmt.Errorf("%s: not inside the root %s; refused: the output directory must be in the repository", out, disk.Root())
	}
	return nil
}

// DescribeChange says what a drift is and what render-all would do about it.
func DescribeChange(c Change) string {
	switch c {
	case Stale:
		return "stale (differs from the render): render-all would rewrite it"
	case Missing:
		return "missing (the run renders, nothing is committed): render-all would write it"
	case Gone:
		return "the run is state: removed, so it renders no object: render-all would remove it"
	case Elsewhere:
		return "the run renders no object for this cluster (MultiKueue dispatches it, or no longer does): render-all would remove it"
	default:
		return "orphaned (its run no longer exists): render-all would remove it"
	}
}

// Orphans counts the drifts whose run no longer exists.
func Orphans(ds []Drift) int {
	n := 0
	for _, d := range ds {
		if d.Change == Orphan {
			n++
		}
	}
	return n
}

// Refused is an entry of the output directory render-all will neither
// read nor replace.
type Refused struct{ Name, What string }

// RefusedRun reports whether run's manifest is one of rs.
func RefusedRun(rs []Refused, run string) bool {
	for _, r := range rs {
		if r.Name == run {
			return true
		}
	}
	return false
}

// ReadManifests reads out/*.yaml keyed by run name. A missing directory is
// an empty tree (the first render-all creates it); other files and
// subdirectories are not ours and are left alone. A *.yaml entry that is a
// symlink or not a regular file is never read (its target could be any
// host file) and is returned as refused. In a git work tree a file git
// does not track is not committed: it is returned in untracked, unread.
func ReadManifests(disk source.Disk, out string) (map[string][]byte, []Refused, []string, error) {
	entries, err := os.ReadDir(out)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string][]byte{}, nil, nil, nil
		}
		return nil, nil, nil, err
	}
	files := map[string][]byte{}
	var refused []Refused
	var untracked []string
	var budget source.RenderBudget
	for _, e := range entries {
		if !IsManifestName(e.Name()) {
			continue
		}
		name := strings.TrimSuffix(e.Name(), Ext)
		if e.Type()&fs.ModeSymlink != 0 {
			refused = append(refused, Refused{Name: name, What: "is a symlink"})
			continue
		}
		if e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			refused = append(refused, Refused{Name: name, What: "is not a regular file"})
			continue
		}
		p := filepath.Join(out, e.Name())
		if abs, err := filepath.Abs(p); err != nil || !disk.Tracked(abs) {
			untracked = append(untracked, name)
			continue
		}
		if info, err := e.Info(); err == nil {
			if err := budget.Take(filepath.ToSlash(p), info.Size()); err != nil {
				return nil, nil, nil, err
			}
		}
		b, err := source.ReadLimited(filepath.ToSlash(p), p, source.MaxRenderSize)
		if err != nil {
			if errors.Is(err, source.ErrRefused) {
				refused = append(refused, Refused{Name: name, What: "is not a regular file"})
				continue
			}
			return nil, nil, nil, err
		}
		files[name] = b
	}
	return files, refused, untracked, nil
}

// DisplayDir is the output directory as diff headers show it: relative to
// the git work tree holding the runs repository (so `git apply` of the
// `--check` diff works from the repository root, and the paths are the same
// wherever CI runs), else to the runs repository, else as given.
func DisplayDir(root, out string) string {
	if abs, err := filepath.Abs(out); err == nil {
		root, out = RepoRoot(root), abs
	}
	rel, err := filepath.Rel(root, out)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path.Clean(filepath.ToSlash(out))
	}
	return filepath.ToSlash(rel)
}

// KustomizationFile is the overlay entry point render-all maintains beside
// the renders when asked (--kustomization).
const KustomizationFile = "kustomization" + Ext

// IsManifestName reports whether a file in manifests/ (or its workers/)
// is named as a run's manifest: <run>.yaml, but not kustomization.yaml,
// an overlay's entry point listing the renders and never a run (a run
// of that name is refused). The same in a checkout and at a revision.
func IsManifestName(name string) bool {
	return strings.HasSuffix(name, Ext) && name != KustomizationFile
}

// Shared is one object the manifests of several runs hold (a profile's
// shared deployment and its Service, byte-identical in each).
type Shared struct {
	Object string // Kind namespace/name
	Runs   []string
}

// SharedObjects lists the objects held by more than one of the manifests a
// kustomization would list (kustomizationRuns): render-all accepts them
// (they are one object), but kustomize refuses a resource given twice, so
// an overlay over the manifests would not build.
func SharedObjects(res *Result, committed map[string][]byte) []Shared {
	byID := map[string][]string{}
	for _, run := range kustomizationRuns(res, committed) {
		data, ok := res.Files[run]
		if !ok {
			data = committed[run]
		}
		seen := map[string]bool{}
		for _, id := range objectIDs(data) {
			if !seen[id] {
				seen[id] = true
				byID[id] = append(byID[id], run)
			}
		}
	}
	var out []Shared
	for id, runs := range byID {
		if len(runs) > 1 {
			out = append(out, Shared{Object: id, Runs: runs})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object < out[j].Object })
	return out
}

// header is what render-all reads of a rendered document: its type and
// identity.
type header struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
}

// headers are the documents of a manifest, up to the first that does not
// decode (render-all's own output always decodes).
func headers(data []byte) []header {
	var out []header
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var h header
		if err := dec.Decode(&h); err != nil {
			return out
		}
		out = append(out, h)
	}
}

// objectIDs are the documents of a manifest as kustomize tells them apart:
// group, kind, namespace and name.
func objectIDs(data []byte) []string {
	var ids []string
	for _, doc := range headers(data) {
		if doc.Kind == "" {
			continue
		}
		group, _, _ := strings.Cut(doc.APIVersion, "/")
		if !strings.Contains(doc.APIVersion, "/") {
			group = ""
		}
		id := doc.Kind + " " + doc.Metadata.Namespace + "/" + doc.Metadata.Name
		if group != "" {
			id = doc.Kind + "." + group + " " + doc.Metadata.Namespace + "/" + doc.Metadata.Name
		}
		ids = append(ids, id)
	}
	return ids
}

// kustomizationRuns are the runs whose manifest the kustomization lists:
// those that rendered and the failed ones whose committed file is kept, in
// name order (a removed run's file goes).
func kustomizationRuns(res *Result, committed map[string][]byte) []string {
	var runs []string
	for _, run := range res.Runs {
		if res.Removed[run] {
			continue
		}
		if data, ok := res.Files[run]; ok && len(data) == 0 {
			continue // no object for this cluster, no file
		}
		if _, ok := res.Files[run]; !ok {
			if _, kept := committed[run]; !kept {
				continue
			}
		}
		runs = append(runs, run)
	}
	return runs
}

// Kustomization is out/kustomization.yaml listing every run's manifest: the
// runs that rendered and the failed runs whose committed file is kept, in
// name order. An overlay (../overlays/<env>) names out/ as its base, so a
// new run joins every overlay without a hand edit.
func Kustomization(res *Result, committed map[string][]byte) []byte {
	var b strings.Builder
	b.WriteString("# Written by nrl-k8s render-all --kustomization: every run's manifest, so an\n")
	b.WriteString("# overlay naming this directory as a resource takes every run. Not edited by\n")
	b.WriteString("# hand: render-all rewrites it.\n")
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	runs := kustomizationRuns(res, committed)
	for _, run := range runs {
		b.WriteString("- " + run + Ext + "\n")
	}
	if len(runs) == 0 {
		return []byte(strings.Replace(b.String(), "resources:\n", "resources: []\n", 1))
	}
	return []byte(b.String())
}
