package renderall

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/core/runspec"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// Options is one render-all invocation, as the CLI's flags set it.
type Options struct {
	// Disk confines what is read (and, for the default output directory,
	// written); Dir is the runs repository, Out the output directory.
	Disk source.Disk
	Dir  string
	Out  string
	// DefaultOut: Out is Dir/manifests, so writes are confined to the root
	// too (a user-given --out is theirs).
	DefaultOut bool
	// RecipeRoot is the recipe root of every run whose spec names none.
	RecipeRoot string
	// Check writes nothing and reports drift; Kustomization also keeps
	// Out/kustomization.yaml.
	Check, Kustomization bool
	// Base is the base the security gate judges against (Check only).
	Base BaseSpec
	// Rerun is the command line --check names to rewrite what is stale.
	Rerun string
	// Flux, when on, also keeps the runs' Flux files (flux.go).
	Flux Flux
	// Gate is the security gate (fn/frontend/review.SecurityGate, which
	// imports this package): whether the pull request must be refused.
	Gate func(stderr io.Writer, res *Result, base Base, prAllow []byte) (bool, error)
	// Getenv reads CI's environment (the base branch it names).
	Getenv         func(string) string
	Stdout, Stderr io.Writer
}

// BaseSpec is what the user said the base is: a checkout, a revision, or
// nothing (found from CI's environment or the upstream branch).
type BaseSpec struct{ Dir, Ref string }

// UsageError is an input the caller named that cannot be used as given
// (--base, --base-ref): the CLI's usage exit.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Run renders the repository and writes, or with Check compares, its
// output tree, then (with Check) runs the security gate. It prints its
// findings itself; failed reports a run that failed, a refused output
// file, drift under Check, a stale or unbuildable kustomization, or the
// gate's refusal.
func Run(o Options) (failed bool, err error) {
	stderr := o.Stderr
	if err := CheckOutDir(o.Disk, o.Out, o.DefaultOut); err != nil {
		return false, err
	}
	runs, err := Discover(o.Disk, o.Dir)
	if err != nil {
		return false, err
	}
	DefaultRecipeRoot(runs, o.RecipeRoot)
	res := Render(o.Disk, runs)
	// Prefixed with the run: one profile may serve several runs.
	for _, name := range res.Runs {
		for _, d := range res.Diags[name] {
			fmt.Fprintf(stderr, "%s: %s\n", name, d)
		}
	}
	committed, refused, untracked, err := ReadManifests(o.Disk, o.Out)
	if err != nil {
		return false, err
	}
	workers, wRefused, wUntracked, err := ReadManifests(o.Disk, filepath.Join(o.Out, WorkersDir))
	if err != nil {
		return false, err
	}
	shown := DisplayDir(o.Dir, o.Out)
	shownWorkers := path.Join(shown, WorkersDir)
	reportTree(stderr, shown, refused, untracked)
	reportTree(stderr, shownWorkers, wRefused, wUntracked)
	strays, err := Strays(o.Disk, o.Out, res, committed, workers, o.Kustomization)
	if err != nil {
		return false, err
	}
	reportStrays(stderr, shown, strays, o.Check)
	var drift []Drift
	for _, d := range Compare(shown, committed, res) {
		if !RefusedRun(refused, d.Run) {
			drift = append(drift, d)
		}
	}
	for _, d := range CompareWorkers(shownWorkers, workers, res) {
		if !RefusedRun(wRefused, d.Run) {
			drift = append(drift, d)
		}
	}
	runsFailed := res.Failed()
	staleKustomization := false
	if o.Kustomization {
		if staleKustomization, err = o.maintainKustomization(shown, res, committed); err != nil {
			return false, err
		}
	}
	fluxFailed, err := o.fluxTree(res)
	if err != nil {
		return false, err
	}
	gateFailed := false
	if o.Check {
		if gateFailed, err = o.printDrift(drift, res, JoinAll(committed, workers)); err != nil {
			return false, err
		}
	} else if err := o.writeDrift(shown, drift, res, len(runsFailed)); err != nil {
		return false, err
	}
	if len(runsFailed) > 0 {
		fmt.Fprintf(stderr, "%d run(s) failed to render, their manifests were left as they are: %s\n", len(runsFailed), strings.Join(runsFailed, ", "))
	}
	// staleKustomization: stale under Check, or unbuildable in any mode.
	return len(runsFailed) > 0 || len(refused)+len(wRefused) > 0 || (o.Check && len(drift)+len(strays) > 0) || staleKustomization || fluxFailed || gateFailed, nil
}

// reportTree says which files of the output tree were not read.
func reportTree(stderr io.Writer, shown string, refused []Refused, untracked []string) {
	for _, n := range untracked {
		fmt.Fprintf(stderr, "%s: not tracked by git; read as not committed (in a git work tree only the files git tracks are read; --include-untracked to read it)\n", path.Join(shown, n+Ext))
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "%s: %s; refused: render-all reads and writes regular files only (remove it)\n", path.Join(shown, r.Name+Ext), r.What)
	}
}

// writeDisk is where writes go: through the repository's disk rules for
// the default output directory (no link followed, the directory opened as
// an os.Root), else as given.
func (o Options) writeDisk() source.Disk {
	if o.DefaultOut {
		return o.Disk
	}
	return source.Disk{}
}

// maintainKustomization writes Out/kustomization.yaml (Kustomization)
// when it differs, or with Check prints its diff and reports it stale. A
// link or non-regular file in its place is refused, never followed. When
// two listed manifests hold one object (SharedObjects), kustomize could
// not build it: nothing is written and it reports a failure.
func (o Options) maintainKustomization(shown string, res *Result, committed map[string][]byte) (bool, error) {
	file := filepath.Join(o.Out, KustomizationFile)
	display := path.Join(shown, KustomizationFile)
	if shared := SharedObjects(res, committed); len(shared) > 0 {
		for _, s := range shared {
			fmt.Fprintf(o.Stderr, "%s: %s is in the manifests of runs %s; kustomize refuses a resource listed twice, so an overlay over %s would not build; expected one run owning the profile's shared deployments (spec.onlyDeployments: true) and spec.noDeployments: true in the others\n",
				display, s.Object, strings.Join(s.Runs, ", "), shown)
		}
		return true, nil
	}
	want := Kustomization(res, committed)
	var have []byte
	if st, err := os.Lstat(file); err == nil {
		if !st.Mode().IsRegular() {
			return false, fmt.Errorf("%s: not a regular file; refused: render-all writes regular files only (remove it)", display)
		}
		if have, err = source.ReadLimited(filepath.ToSlash(file), file, source.MaxRenderSize); err != nil {
			return false, err
		}
	}
	if string(have) == string(want) {
		return false, nil
	}
	if o.Check {
		fmt.Fprint(o.Stdout, UnifiedDiff("a/"+display, "b/"+display, have, want))
		fmt.Fprintf(o.Stderr, "%s: out of date (render-all --kustomization lists every run's manifest)\n", display)
		return true, nil
	}
	if err := o.writeDisk().WriteFile(file, want); err != nil {
		return false, err
	}
	fmt.Fprintf(o.Stdout, "wrote %s\n", display)
	return false, nil
}

// printDrift is Check: the drift as a diff on stdout, what is stale on
// stderr, then the security gate against the base branch.
func (o Options) printDrift(drift []Drift, res *Result, committed map[string][]byte) (bool, error) {
	for _, d := range drift {
		// The committed side is the PR's bytes: a line that would be a
		// CI log command or a control character is printed escaped
		// (fn/support/safetext), at the cost of `git apply` for that file.
		diff := d.Diff
		if guarded := safetext.Lines(diff); guarded != diff {
			fmt.Fprintf(o.Stderr, "%s: the diff holds control characters or lines that read as CI log commands; they are printed escaped, so `git apply` will not apply this file's diff\n", d.File)
			diff = guarded
		}
		fmt.Fprint(o.Stdout, diff)
	}
	for _, d := range drift {
		fmt.Fprintf(o.Stderr, "%s: %s\n", d.File, DescribeChange(d.Change))
	}
	if len(drift) > 0 {
		fmt.Fprintf(o.Stderr, "%d of %d manifest(s) out of date: run `%s` (or `make manifests`) and commit the result\n", len(drift), len(res.Runs)+Orphans(drift), o.Rerun)
	}
	base, err := o.readBase(committed)
	if err != nil {
		return false, err
	}
	_, prAllow, err := ReadAllow(o.Disk, o.Dir)
	if err != nil {
		return false, err
	}
	unremoved, err := o.refuseUnremoved(base, res)
	if err != nil {
		return false, err
	}
	gateFailed, err := o.Gate(o.Stderr, res, base, prAllow)
	return unremoved || gateFailed, err
}

// readBase finds and reads the base the gate judges against.
func (o Options) readBase(committed map[string][]byte) (Base, error) {
	switch {
	case o.Base.Dir != "":
		b, err := BaseFromDir(o.Base.Dir)
		if err != nil {
			return b, UsageError{fmt.Errorf("--base: %w", err)}
		}
		return b, nil
	case o.Base.Ref != "":
		b, err := BaseFromRevision(o.Dir, o.Base.Ref, "")
		if err != nil {
			return b, UsageError{fmt.Errorf("--base-ref: %w", err)}
		}
		return b, nil
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	ref, why, err := FindBaseRef(o.Dir, getenv)
	if err != nil {
		return Base{}, UsageError{err}
	}
	if ref == "" {
		return Unknown(o.Disk, o.Dir, committed)
	}
	return BaseFromRevision(o.Dir, ref, why)
}

// writeDrift is render-all without Check: it writes what is stale or
// missing and removes what is orphaned.
func (o Options) writeDrift(shown string, drift []Drift, res *Result, failed int) error {
	wdisk := o.writeDisk()
	for _, d := range drift {
		// d.File is below shown: the output directory or its WorkersDir.
		file := filepath.Join(o.Out, filepath.FromSlash(strings.TrimPrefix(d.File, shown+"/")))
		if d.Change == Orphan || d.Change == Gone || d.Change == Elsewhere {
			if err := wdisk.RemoveFile(file); err != nil {
				return err
			}
			why := fmt.Sprintf("no run %s/%s", RunsDir, d.Run)
			switch d.Change {
			case Gone:
				why = "the run is state: " + runspec.Removed
			case Elsewhere:
				why = "the run renders no object for this cluster"
			}
			fmt.Fprintf(o.Stdout, "removed %s (%s)\n", d.File, why)
			continue
		}
		if err := wdisk.WriteFile(file, d.Data); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "wrote %s\n", d.File)
	}
	fmt.Fprintf(o.Stdout, "%d run(s): %d rendered, %d changed, %d failed\n", len(res.Runs), len(res.Files), len(drift)-Orphans(drift), failed)
	return nil
}
