package review

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/diag"
)

// isRunsRepo: a directory with runs/ is a runs repository, which `diff`
// renders (and so knows each run's warnings) instead of reading manifests.
func isRunsRepo(p string) bool {
	st, err := os.Stat(filepath.Join(p, renderall.RunsDir))
	return err == nil && st.IsDir()
}

// readRunsRepo renders every run of the repository at root. A run that
// fails to render is left out of the render and its errors are returned in
// failed (run name -> error lines), so the other runs are still compared.
func readRunsRepo(root string, untracked bool) (Render, map[string][]string, error) {
	// A runs repository is untrusted input: read only inside its git work
	// tree, only the files git tracks, as render-all does.
	disk, err := source.ConfineRepo(renderall.RepoRoot(root), untracked)
	if err != nil {
		return nil, nil, err
	}
	runs, err := renderall.Discover(disk, root)
	if err != nil {
		return nil, nil, err
	}
	// Rendered with paths relative to the repository, so the findings of a
	// base checkout elsewhere read the same as the PR's.
	prefix := filepath.ToSlash(filepath.Clean(root)) + "/"
	for i := range runs {
		runs[i].Path = strings.TrimPrefix(runs[i].Path, prefix)
	}
	res := renderall.Render(rooted{root: root, disk: disk}, runs)
	failed := map[string][]string{}
	for _, n := range res.Failed() {
		for _, d := range res.Diags[n].Errors() {
			failed[n] = append(failed[n], d.String())
		}
	}
	out := Render{}
	for _, n := range res.Runs {
		file := path.Join(renderall.RunsDir, n)
		if _, bad := failed[n]; bad || res.Removed[n] {
			// A removed run renders nothing: absent, as a deleted one.
			continue
		}
		r, err := Parse(n, file, res.Whole(n))
		if err != nil {
			return nil, nil, err
		}
		r.Warnings = warnings(res.Diags[n])
		out[n] = r
	}
	if len(out) == 0 && len(failed) == 0 {
		return nil, nil, errors.New(root + ": no runs")
	}
	return out, failed, nil
}

// RenderFailures is the error of a diff some of whose runs did not render
// (on either side): the summary covers the others, and these runs are
// left out of both sides rather than shown as added or removed.
func RenderFailures(sides ...FailedSide) error {
	var lines []string
	n := 0
	for _, s := range sides {
		names := make([]string, 0, len(s.Failed))
		for name := range s.Failed {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			n++
			for _, l := range s.Failed[name] {
				lines = append(lines, fmt.Sprintf("%s: run %s: %s", s.Root, name, l))
			}
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("%d run(s) failed to render and are not in the summary:\n%s", n, strings.Join(lines, "\n"))
}

// FailedSide is one input's runs that did not render.
type FailedSide struct {
	Root   string
	Failed map[string][]string
}

// warnings are a run's warnings, sorted, each once; their paths are
// relative to the repository already.
func warnings(ds diag.List) []string {
	seen := map[string]bool{}
	var out []string
	for _, d := range ds {
		if d.Severity != diag.Warning {
			continue
		}
		s := strings.TrimPrefix(d.String(), "warning: ")
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// rooted reads relative paths below root (absolute ones as they are)
// through the confined disk.
type rooted struct {
	root string
	disk source.Disk
}

func (r rooted) ReadFile(name string) ([]byte, error) {
	if !path.IsAbs(name) && !filepath.IsAbs(name) {
		name = path.Join(filepath.ToSlash(r.root), name)
	}
	return r.disk.ReadFile(name)
}

// CheckDir judges a directory as the disk does (relative to root).
func (r rooted) CheckDir(dir string) error {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.root, dir)
	}
	return r.disk.CheckDir(dir)
}
