package renderall

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

// ReadFlux reads the files git tracks below dir's fluxDirs, keyed by path
// relative to dir, at any depth. A symlink or other non-regular entry is
// never read or followed: it is returned as a stray, and so is a linked
// folder of fluxDirs itself.
func ReadFlux(disk source.Disk, dir string) (map[string][]byte, []string, error) {
	files := map[string][]byte{}
	var strays []string
	var budget source.RenderBudget
	for _, top := range fluxDirs {
		root := filepath.Join(dir, top)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && p == root {
					return nil
				}
				return err
			}
			if d.IsDir() || !tracked(disk, p) {
				return nil
			}
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if !d.Type().IsRegular() {
				strays = append(strays, rel)
				return nil
			}
			if info, err := d.Info(); err == nil {
				if err := budget.Take(filepath.ToSlash(p), info.Size()); err != nil {
					return err
				}
			}
			b, err := source.ReadLimited(filepath.ToSlash(p), p, source.MaxRenderSize)
			if errors.Is(err, source.ErrRefused) {
				strays = append(strays, rel)
				return nil
			}
			files[rel] = b
			return err
		})
		if err != nil {
			return nil, nil, err
		}
	}
	sort.Strings(strays)
	return files, strays, nil
}

// fluxTree is render-all's Flux step (--flux): it compares the committed
// Flux files with what the runs render to and, with Check, prints the
// drift and refuses strays; without, writes and removes files. It reports
// whether the command fails. Without --flux, committed Flux files are
// unchecked: --check refuses them (a CI line that forgot the flag must
// not pass a pull request's edit of what a parent Kustomization applies).
func (o Options) fluxTree(res *Result) (bool, error) {
	committed, strays, err := ReadFlux(o.Disk, o.Dir)
	if err != nil {
		return false, err
	}
	shown := DisplayDir(o.Dir, o.Dir)
	if !o.Flux.On() {
		if len(committed)+len(strays) == 0 {
			return false, nil
		}
		dirs := make([]string, len(fluxDirs))
		for i, d := range fluxDirs {
			dirs[i] = safetext.Inline(path.Join(shown, d) + "/")
		}
		if o.Check {
			fmt.Fprintf(o.Stderr, "%s: hold files render-all does not check without --flux; refused: a Flux Kustomization applies them, so pass --flux SOURCE as the repository's render-all does (or remove them)\n", strings.Join(dirs, ", "))
			return true, nil
		}
		fmt.Fprintf(o.Stderr, "%s: hold files render-all keeps only with --flux SOURCE; left alone\n", strings.Join(dirs, ", "))
		return false, nil
	}
	drift, more := o.Flux.CompareFlux(shown, committed, res)
	strays = append(strays, more...)
	sort.Strings(strays)
	build, ks := fluxPaths("<run>")
	wbuild, wks := fluxWorkerPaths("<run>")
	what := fmt.Sprintf("not a Flux file render-all writes (%s, each opening with %q)", strings.Join([]string{build, wbuild, ks, wks}, ", "), fluxMark)
	for _, s := range strays {
		file := safetext.Inline(path.Join(shown, s))
		if o.Check {
			fmt.Fprintf(o.Stderr, "%s: %s; refused: a parent Kustomization (or a run's) would apply it, so no run's review covers it (remove it, or move it out of %s/)\n", file, what, strings.Join(fluxDirs, "/, "))
			continue
		}
		fmt.Fprintf(o.Stderr, "%s: %s; left alone (render-all --check refuses it)\n", file, what)
	}
	if o.Check {
		for _, d := range drift {
			fmt.Fprint(o.Stdout, safetext.Lines(d.Diff))
		}
		for _, d := range drift {
			fmt.Fprintf(o.Stderr, "%s: %s\n", safetext.Inline(d.File), describeFlux(d.Change))
		}
		if len(drift) > 0 {
			fmt.Fprintf(o.Stderr, "%d Flux file(s) out of date: run `%s` and commit the result\n", len(drift), o.Rerun)
		}
		return len(drift)+len(strays) > 0, nil
	}
	for _, d := range drift {
		rel := d.File
		if shown != "." {
			rel = strings.TrimPrefix(d.File, shown+"/")
		}
		file := filepath.Join(o.Dir, filepath.FromSlash(rel))
		if d.Change == Orphan {
			if err := o.Disk.RemoveFile(file); err != nil {
				return false, err
			}
			// Its folders below FluxDir, once empty, go too (Remove
			// refuses a full one).
			top := filepath.Join(o.Dir, FluxDir) + string(filepath.Separator)
			for dir := filepath.Dir(file); strings.HasPrefix(dir, top); dir = filepath.Dir(dir) {
				if os.Remove(dir) != nil {
					break
				}
			}
			fmt.Fprintf(o.Stdout, "removed %s (no run %s/%s)\n", safetext.Inline(d.File), RunsDir, safetext.Inline(d.Run))
			continue
		}
		if err := o.Disk.WriteFile(file, d.Data); err != nil {
			return false, err
		}
		fmt.Fprintf(o.Stdout, "wrote %s\n", d.File)
	}
	return false, nil
}

// describeFlux says what a Flux file's drift is.
func describeFlux(c Change) string {
	switch c {
	case Stale:
		return "stale (differs from what render-all writes; not edited by hand): render-all would rewrite it"
	case Missing:
		return "missing: render-all would write it"
	default:
		return "orphaned (its run no longer exists): render-all would remove it"
	}
}

// refuseUnremoved is the removal rule of the gate (Unremoved), with Flux
// generation on: it prints each refusal and reports whether there was one.
func (o Options) refuseUnremoved(base Base, res *Result) (bool, error) {
	if !o.Flux.On() {
		return false, nil
	}
	runs, err := Unremoved(base, res)
	if err != nil {
		return false, err
	}
	for _, run := range runs {
		fmt.Fprintf(o.Stderr, "%s: refused: %s\n", run, UnremovedRefusal(run))
	}
	return len(runs) > 0, nil
}

// fluxRunsOnDisk are the run folders below dir's FluxDir, and a reader of
// one's build through disk (a base checkout, or the checkout itself when
// no base is known).
func fluxRunsOnDisk(disk source.Disk, dir string) ([]string, func(string) ([]byte, error), error) {
	entries, err := os.ReadDir(filepath.Join(dir, FluxDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var runs []string
	for _, e := range entries {
		if e.IsDir() {
			runs = append(runs, e.Name())
		}
	}
	read := func(file string) ([]byte, error) {
		data, err := disk.ReadFile(filepath.ToSlash(filepath.Join(dir, FluxDir, filepath.FromSlash(file))))
		if errors.Is(err, source.ErrNotFound) {
			return nil, nil
		}
		return data, err
	}
	return runs, read, nil
}

// fluxRunsAt are the run folders below rel's FluxDir at a revision, and a
// reader of one's build there.
func fluxRunsAt(rev source.Revision, rel string) ([]string, func(string) ([]byte, error), error) {
	entries, err := rev.ReadDir(path.Join(rel, FluxDir))
	if err != nil {
		return nil, nil, err
	}
	var runs []string
	for _, e := range entries {
		if !e.Regular {
			runs = append(runs, e.Name)
		}
	}
	read := func(file string) ([]byte, error) {
		data, err := rev.ReadFile(path.Join(rel, FluxDir, file), source.MaxFileSize)
		if errors.Is(err, source.ErrNotFound) || errors.Is(err, source.ErrRefused) {
			return nil, nil
		}
		return data, err
	}
	return runs, read, nil
}
