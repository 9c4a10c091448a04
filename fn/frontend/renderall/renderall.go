// Package renderall renders a repository of runs into its committed output
// tree and tells whether that tree is stale. A repository is
//
//	DIR/runs/<run>/run.yaml   a NemoRLRun; metadata.name is <run>
//	DIR/manifests/<run>.yaml  the run's render: exactly `nrl-k8s render`'s bytes
//	DIR/manifests/workers/<run>.yaml  for a run MultiKueue dispatches, its
//	                          worker bundle; manifests/<run>.yaml then holds
//	                          the manager's objects (workers.go)
//	DIR/flux/<run>/, DIR/flux-runs/<run>.yaml  with --flux, the run's Flux
//	                          Kustomization and what it builds (flux.go);
//	                          DIR/flux-workers/<run>.yaml its worker bundle's
//
// One file per run, not per object: a reviewer reads one file per run, and it
// is byte-identical to what the CLI, the KRM function and the chart emit for
// the same run, so a PR diff shows precisely what would be applied.
//
// Discover reads the runs, Render runs each through pipeline.Render and Compare
// is a pure function from (committed tree, render) to drift; the CLI adapter
// does the remaining I/O.
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

	"github.com/pmezard/go-difflib/difflib"
	yaml "go.yaml.in/yaml/v3"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/rendered"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/vocab"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/batch"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/recipe"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/pipeline"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/runrequest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// Layout names inside a runs repository.
const (
	RunsDir      = "runs"
	RunFile      = "run.yaml"
	ManifestsDir = "manifests"
	// Ext is the extension of one run's output file.
	Ext = ".yaml"
)

// RunEntry is one runs/<run>/run.yaml. Spec is nil when the file could not be
// read or parsed; the run still counts (its committed output is kept, not
// reported as an orphan) and Diags says why.
type RunEntry struct {
	Name string
	// Path is the slash path of run.yaml; the run's spec paths resolve
	// against it.
	Path  string
	Spec  *runspec.NemoRLRun
	Diags diag.List
	// RecipeRoot is the recipe root for a run whose spec names none
	// (render-all --recipe-root), a path in the same form as Path.
	RecipeRoot string
}

// DefaultRecipeRoot gives every run dir as its recipe root where its spec
// names none (spec.recipeRoot, relative to the run file, wins).
func DefaultRecipeRoot(runs []RunEntry, dir string) {
	for i := range runs {
		runs[i].RecipeRoot = dir
	}
}

// Discover lists root/runs/*/run.yaml in name order, reading run files
// through src (a confined source.Disk in the CLI). A missing runs/
// directory is an error (rendering an empty set would delete every committed
// manifest); a directory without run.yaml, an unreadable or invalid run file
// and a metadata.name that is not the directory name are the run's Diags,
// and so is a symlink where a run directory belongs. Entries that are not
// directories (a README) and hidden directories are ignored.
func Discover(src source.Source, root string) ([]RunEntry, error) {
	root = filepath.ToSlash(filepath.Clean(root))
	runsDir := path.Join(root, RunsDir)
	if c, ok := src.(dirChecker); ok {
		// A runs/ that is a link (or sits below one) would list the
		// runner's directories as run names.
		if err := c.CheckDir(filepath.FromSlash(runsDir)); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(filepath.FromSlash(runsDir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not found; expected a runs repository with %s/<run>/%s files", runsDir, RunsDir, RunFile)
		}
		return nil, err
	}
	var runs []RunEntry
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type()&fs.ModeSymlink != 0 {
			r := RunEntry{Name: e.Name(), Path: path.Join(runsDir, e.Name(), RunFile)}
			r.Diags.Errorf(path.Join(runsDir, e.Name()), "", "is a symlink; expected a directory holding %s (links are not followed)", RunFile)
			runs = append(runs, r)
			continue
		}
		if !e.IsDir() {
			continue
		}
		runs = append(runs, discoverRun(src, runsDir, e.Name()))
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Name < runs[j].Name })
	return runs, nil
}

// RepoRoot is the directory that confines what render-all reads for dir:
// the nearest enclosing directory with a .git entry (a git work tree or a
// linked worktree), else dir itself.
func RepoRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

func discoverRun(src source.Source, runsDir, name string) RunEntry {
	r := RunEntry{Name: name, Path: path.Join(runsDir, name, RunFile)}
	ds := &r.Diags
	if err := runspec.ValidateName(r.Name); err != nil {
		ds.Errorf(path.Join(runsDir, r.Name), "", "run directory name %v", err)
		return r
	}
	if r.Name == "kustomization" {
		ds.Errorf(path.Join(runsDir, r.Name), "", "run directory name %q would write manifests/kustomization.yaml, which kustomize reads as an overlay's kustomization; expected another name", r.Name)
		return r
	}
	data, err := src.ReadFile(r.Path)
	if err != nil {
		if errors.Is(err, source.ErrNotFound) {
			ds.Errorf(r.Path, "", "not found; expected every directory under %s/ to hold a %s %s", RunsDir, runspec.Kind, RunFile)
		} else {
			ds.Errorf(r.Path, "", "%v", strings.TrimPrefix(err.Error(), r.Path+": "))
		}
		return r
	}
	spec, err := runspec.Parse(r.Path, data)
	if err != nil {
		// Parse already names the file.
		*ds = append(*ds, diag.Diagnostic{Severity: diag.Error, Message: err.Error()})
		return r
	}
	if spec.Metadata.Name != r.Name {
		ds.Errorf(r.Path, "metadata.name", "found %q; expected %q, the name of the run's directory (it names the output file)", spec.Metadata.Name, r.Name)
		return r
	}
	r.Spec = spec
	return r
}

// Result is the render of a repository.
type Result struct {
	// Runs are all discovered run names, sorted, rendered or not.
	Runs []string
	// Files maps a run name to its output; a run that failed has no entry.
	// For a run MultiKueue dispatches it is the manager's documents (empty
	// for a stopped one), and Workers holds the rest.
	Files map[string][]byte
	// Workers maps a run MultiKueue dispatches to its worker bundle.
	Workers map[string][]byte
	// Diags are each run's findings, warnings too, sorted.
	Diags map[string]diag.List
	// Removed are the runs declared state: removed (runspec.Removed): no
	// output, and not failed.
	Removed map[string]bool
}

// Failed reports the runs that have no output and are not removed.
func (r *Result) Failed() []string {
	var out []string
	for _, n := range r.Runs {
		if _, ok := r.Files[n]; !ok && !r.Removed[n] {
			out = append(out, n)
		}
	}
	return out
}

// Render renders every run on every core, reading recipes and profiles from
// src. Each worker has its own loader, so a base recipe shared by many runs
// is parsed once per worker. A run that fails (nil Spec, or errors from the
// pipeline) gets no output; the others still render. The result does not
// depend on scheduling: each run's output is a function of its inputs.
func Render(src source.Source, runs []RunEntry) *Result {
	type out struct {
		data split
		ok   bool
		ds   diag.List
	}
	outs, err := batch.Render(src, len(runs), func(l *recipe.Loader, i int) batch.Output[out] {
		ds := append(diag.List(nil), runs[i].Diags...)
		data, ids, ok := renderRun(l, runs[i], &ds)
		return batch.Output[out]{Value: out{data, ok, ds}, IDs: ids, Bytes: len(data.manager) + len(data.workers)}
	})
	if err != nil {
		// Every run fails alike: which ones rendered before the budget
		// ran out depends on scheduling, and output must not.
		outs = make([]batch.Output[out], len(runs))
		for i, r := range runs {
			outs[i].Value.ds.Errorf(r.Path, "", "%v", err)
		}
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.Name
	}
	collisions := batch.Collisions(names, outs)
	res := &Result{Files: map[string][]byte{}, Workers: map[string][]byte{}, Diags: map[string]diag.List{}, Removed: map[string]bool{}}
	for i, r := range runs {
		o := outs[i].Value
		res.Runs = append(res.Runs, r.Name)
		if removed(r) && !o.ds.HasErrors() {
			res.Removed[r.Name] = true
		}
		for _, m := range collisions[i] {
			o.ds.Errorf(r.Path, "", "%s", m)
		}
		if o.ok && !o.ds.HasErrors() {
			res.Files[r.Name] = o.data.manager
			if o.data.workers != nil {
				res.Workers[r.Name] = o.data.workers
			}
		}
		if len(o.ds) > 0 {
			res.Diags[r.Name] = o.ds.Sorted()
		}
	}
	return res
}

// removed: the run is declared state: removed, and renders nothing.
func removed(r RunEntry) bool { return r.Spec != nil && r.Spec.IsRemoved() }

func renderRun(l *recipe.Loader, r RunEntry, ds *diag.List) (split, []rendered.Identity, bool) {
	if r.Spec == nil || ds.HasErrors() || removed(r) {
		return split{}, nil, false
	}
	req := runrequest.Of(r.Spec, r.Path)
	if req.RecipeRoot == "" && r.RecipeRoot != "" {
		req.RecipeRoot = path.Clean(filepath.ToSlash(r.RecipeRoot))
	}
	if in, ok := l.Src.(interface{ Inside(string) bool }); ok && req.RecipeRoot != "" && r.Spec.Spec.RecipeRoot != "" && !in.Inside(req.RecipeRoot) {
		ds.Errorf(r.Path, "spec.recipeRoot", "%s", runspec.RecipeRootOutside(r.Spec.Spec.RecipeRoot))
		return split{}, nil, false
	}
	if res, ok := l.Src.(resolver); ok {
		// A path the run names that the source refuses is reported at the
		// run file's field, before anything is read.
		for _, f := range []struct{ field, path string }{{"spec.recipe", req.Recipe}, {"spec.profile", req.Profile}, {"spec.defaults", req.UserDefaults}} {
			if f.path == "" {
				continue
			}
			if _, err := res.Resolve(f.path); err != nil && errors.Is(err, source.ErrRefused) {
				ds.Errorf(r.Path, f.field, "%v", err)
			}
		}
		if ds.HasErrors() {
			return split{}, nil, false
		}
	}
	pr := pipeline.Render(l, req)
	*ds = append(*ds, pr.Diags...)
	if pr.Diags.HasErrors() {
		return split{}, nil, false
	}
	data, err := splitRender(pr)
	if err != nil {
		ds.Errorf(r.Path, "", "emit: %v", err)
		return split{}, nil, false
	}
	// Identities only: the documents themselves are in data.
	return data, rendered.Identities(pr.Docs), true
}

// dirChecker is a source that judges a directory before it is listed
// (source.Disk).
type dirChecker interface {
	CheckDir(dir string) error
}

// resolver is a source that checks a path before reading it (source.Disk).
type resolver interface {
	Resolve(name string) (string, error)
}

// Change says how a committed file differs from the render.
type Change string

const (
	// Stale: the committed file differs from the render.
	Stale Change = "stale"
	// Missing: the run rendered but nothing is committed for it.
	Missing Change = "missing"
	// Orphan: a committed file whose run no longer exists.
	Orphan Change = "orphan"
	// Gone: a committed manifest of a run declared state: removed.
	Gone Change = "removed"
	// Elsewhere: the run renders no object for this file's cluster (a
	// stopped run MultiKueue dispatches has none for the manager; a run
	// it does not dispatch has no worker bundle).
	Elsewhere Change = "elsewhere"
)

// Drift is one output file that is not what render-all would write.
type Drift struct {
	Run    string
	Change Change
	// File is the display path, e.g. manifests/<run>.yaml.
	File string
	// Data is what the file should hold; nil for an Orphan (delete it).
	Data []byte
	// Diff is a unified diff from the committed file to Data (a/ and b/
	// prefixes, /dev/null for a side that does not exist), as git prints it.
	Diff string
}

// Foreign lists the committed files of runs that no longer exist and that
// render-all did not write (Written is false): they are not orphans to
// delete but someone else's files, left alone and reported.
func Foreign(committed map[string][]byte, res *Result) []string {
	known := map[string]bool{}
	for _, n := range res.Runs {
		known[n] = true
	}
	var out []string
	for n, b := range committed {
		if !known[n] && !Written(b) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Written reports whether data is a file render-all wrote: one or more
// documents, every one labelled app.kubernetes.io/managed-by: nrl-k8s (the
// mark every rendered object carries). Only such files are ever deleted.
func Written(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	docs := 0
	for {
		var doc struct {
			Metadata struct {
				Labels map[string]any `yaml:"labels"`
			} `yaml:"metadata"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs > 0
		}
		if err != nil || doc.Metadata.Labels[vocab.ManagedByLabel] != vocab.ManagedByValue {
			return false
		}
		docs++
	}
}

// Compare lists the output files that differ from the render, in run order.
// committed maps a run name to its committed file's bytes; outDir is the
// output directory as shown in diff headers (e.g. "manifests"). Runs that
// failed are skipped: their committed file is neither stale nor an orphan,
// only unknown, and the failure itself already fails the command. A file
// without a run is an orphan only when render-all wrote it (Written); a
// removed run's file is Gone.
func Compare(outDir string, committed map[string][]byte, res *Result) []Drift {
	known := map[string]bool{}
	for _, n := range res.Runs {
		known[n] = true
	}
	var out []Drift
	names := make([]string, 0, len(committed)+len(res.Files))
	for n := range committed {
		names = append(names, n)
	}
	for n := range res.Files {
		if _, ok := committed[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		file := path.Join(outDir, n+Ext)
		old, hasOld := committed[n]
		cur, hasNew := res.Files[n]
		switch {
		case hasNew && len(cur) == 0:
			// A run with no object here has no file here.
			if hasOld {
				out = append(out, Drift{Run: n, Change: Elsewhere, File: file, Diff: UnifiedDiff("a/"+file, "/dev/null", old, nil)})
			}
		case hasOld && hasNew:
			if string(old) == string(cur) {
				continue
			}
			out = append(out, Drift{Run: n, Change: Stale, File: file, Data: cur, Diff: UnifiedDiff("a/"+file, "b/"+file, old, cur)})
		case hasNew:
			out = append(out, Drift{Run: n, Change: Missing, File: file, Data: cur, Diff: UnifiedDiff("/dev/null", "b/"+file, nil, cur)})
		case !known[n] && Written(old):
			out = append(out, Drift{Run: n, Change: Orphan, File: file, Diff: UnifiedDiff("a/"+file, "/dev/null", old, nil)})
		case res.Removed[n]:
			// Whoever wrote it, the run says it has no objects.
			out = append(out, Drift{Run: n, Change: Gone, File: file, Diff: UnifiedDiff("a/"+file, "/dev/null", old, nil)})
		}
	}
	return out
}

// UnifiedDiff is a unified diff with three lines of context, "" when a and
// b are equal.
func UnifiedDiff(fromFile, toFile string, a, b []byte) string {
	if string(a) == string(b) {
		return ""
	}
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: Lines(string(a)), B: Lines(string(b)),
		FromFile: fromFile, ToFile: toFile, Context: 3,
	})
	if err != nil {
		// Writing to a bytes.Buffer does not fail.
		return fmt.Sprintf("--- %s\n+++ %s\n(diff failed: %v)\n", fromFile, toFile, err)
	}
	return s
}

// Lines splits s into lines that keep their "\n". Unlike
// difflib.SplitLines it adds no empty line after a final newline, and an
// empty s has no lines, so creating or deleting a file diffs as +N or -N
// lines, nothing more.
func Lines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}
