package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/manifest"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/review"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/safetext"
)

func renderAllCmd() *cobra.Command {
	var outDir, rootDir, baseDir string
	var check, untracked bool
	c := &cobra.Command{
		Use:   "render-all [DIR] [--out DIR] [--root DIR] [--check]",
		Short: "Render every run of a runs repository into its committed manifests tree",
		Long: `Render every DIR/runs/<run>/run.yaml (a NemoRLRun) into DIR/manifests/<run>.yaml,
one file per run holding exactly what 'nrl-k8s render' prints for it. Files
are written only when their content changes; a manifest whose run no longer
exists is removed when render-all wrote it (every object labelled
app.kubernetes.io/managed-by: nrl-k8s), and left alone otherwise. A run that
fails renders nothing, keeps its committed file and makes the command exit 1;
the other runs still render.

A runs repository is untrusted input on a pull request: every file a run
names (recipe, profile, defaults, their defaults: chains) must be a regular
file inside the root, the git work tree holding DIR unless --root says
otherwise; symlinks are resolved and must stay inside it. A symlinked output
directory or output file is refused, never followed (docs/reliability.md).

--check writes nothing: it prints a unified diff of every stale, missing or
orphaned manifest, says what render-all would write or remove, and exits 1
if there is any, so CI can block a pull request whose manifests were not
regenerated.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			out := outDir
			if out == "" {
				out = filepath.Join(dir, renderall.ManifestsDir)
			}
			root := rootDir
			if root == "" {
				root = renderall.RepoRoot(dir)
			}
			disk, err := source.ConfineRepo(root, untracked)
			if err != nil {
				return usageError{fmt.Errorf("--root: %w", err)}
			}
			if baseDir != "" && !check {
				return usageError{errors.New("--base goes with --check")}
			}
			return renderAll(cmd, disk, dir, out, outDir == "", check, baseDir)
		},
	}
	c.Flags().StringVar(&outDir, "out", "", "output directory (default DIR/manifests)")
	c.Flags().StringVar(&rootDir, "root", "", "read input files only inside this directory (default: the git work tree holding DIR, else DIR)")
	c.Flags().BoolVar(&check, "check", false, "write nothing; print a diff and exit 1 when the output tree is stale")
	c.Flags().StringVar(&baseDir, "base", "", "with --check: the runs repository of the base branch's checkout; the security gate compares against its committed manifests (default: this checkout's)")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "in a git work tree, also read files git does not track (by default only tracked files are read)")
	return c
}

func renderAll(cmd *cobra.Command, disk source.Disk, root, out string, defaultOut, check bool, baseDir string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := checkOutDir(disk, out, defaultOut); err != nil {
		return err
	}
	runs, err := renderall.Discover(disk, root)
	if err != nil {
		return err
	}
	res := renderall.Render(disk, runs)
	// Prefixed with the run: one profile may serve several runs.
	for _, name := range res.Runs {
		for _, d := range res.Diags[name] {
			fmt.Fprintf(stderr, "%s: %s\n", name, d)
		}
	}
	committed, refused, untracked, err := readManifests(disk, out)
	if err != nil {
		return err
	}
	shown := displayDir(root, out)
	for _, n := range untracked {
		fmt.Fprintf(stderr, "%s: not tracked by git; read as not committed (in a git work tree only the files git tracks are read; --include-untracked to read it)\n", path.Join(shown, n+renderall.Ext))
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "%s: %s; refused: render-all reads and writes regular files only (remove it)\n", path.Join(shown, r.name+renderall.Ext), r.what)
	}
	for _, n := range renderall.Foreign(committed, res) {
		fmt.Fprintf(stderr, "%s: no run %s/%s, and not written by render-all (objects without the %s: %s label); left alone\n",
			path.Join(shown, n+renderall.Ext), renderall.RunsDir, n, manifest.ManagedByKey, manifest.ManagedByValue)
	}
	var drift []renderall.Drift
	for _, d := range renderall.Compare(shown, committed, res) {
		if !refusedRun(refused, d.Run) {
			drift = append(drift, d)
		}
	}
	failed := res.Failed()

	gateFailed := false
	if check {
		for _, d := range drift {
			// The committed side is the PR's bytes: a line that would be a
			// CI log command or a control character is printed escaped
			// (fn/support/safetext), at the cost of `git apply` for that file.
			diff := d.Diff
			if guarded := safetext.Lines(diff); guarded != diff {
				fmt.Fprintf(stderr, "%s: the diff holds control characters or lines that read as CI log commands; they are printed escaped, so `git apply` will not apply this file's diff\n", d.File)
				diff = guarded
			}
			fmt.Fprint(stdout, diff)
		}
		for _, d := range drift {
			fmt.Fprintf(stderr, "%s: %s\n", d.File, describeDrift(d.Change))
		}
		if len(drift) > 0 {
			fmt.Fprintf(stderr, "%d of %d manifest(s) out of date: run `nrl-k8s render-all %s` (or `make manifests`) and commit the result\n", len(drift), len(res.Runs)+countOrphans(drift), root)
		}
		base := committed
		if baseDir != "" {
			bdisk, err := source.ConfineRepo(renderall.RepoRoot(baseDir), false)
			if err != nil {
				return usageError{fmt.Errorf("--base: %w", err)}
			}
			if base, _, _, err = readManifests(bdisk, filepath.Join(baseDir, renderall.ManifestsDir)); err != nil {
				return fmt.Errorf("--base: %w", err)
			}
		}
		if gateFailed, err = securityGate(stderr, disk, root, res, base); err != nil {
			return err
		}
	} else {
		// Writes go through the one rule for repository files: no link
		// followed, the directory opened as an os.Root (source.WriteFile).
		wdisk := source.Disk{}
		if defaultOut {
			wdisk = disk
		}
		for _, d := range drift {
			file := filepath.Join(out, d.Run+renderall.Ext)
			if d.Change == renderall.Orphan {
				if err := wdisk.RemoveFile(file); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "removed %s (no run %s/%s)\n", d.File, renderall.RunsDir, d.Run)
				continue
			}
			if err := wdisk.WriteFile(file, d.Data); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s\n", d.File)
		}
		fmt.Fprintf(stdout, "%d run(s): %d rendered, %d changed, %d failed\n", len(res.Runs), len(res.Files), len(drift)-countOrphans(drift), len(failed))
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "%d run(s) failed to render, their manifests were left as they are: %s\n", len(failed), strings.Join(failed, ", "))
	}
	if len(failed) > 0 || len(refused) > 0 || (check && len(drift) > 0) || gateFailed {
		return exitError{ExitError}
	}
	return nil
}

// checkOutDir refuses an output directory that is a symlink or not a
// directory; the default one (DIR/manifests) must also resolve inside the
// root, so a pull request cannot point render-all's writes elsewhere.
func checkOutDir(disk source.Disk, out string, defaultOut bool) error {
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

func describeDrift(c renderall.Change) string {
	switch c {
	case renderall.Stale:
		return "stale (differs from the render): render-all would rewrite it"
	case renderall.Missing:
		return "missing (the run renders, nothing is committed): render-all would write it"
	default:
		return "orphaned (its run no longer exists): render-all would remove it"
	}
}

func countOrphans(ds []renderall.Drift) int {
	n := 0
	for _, d := range ds {
		if d.Change == renderall.Orphan {
			n++
		}
	}
	return n
}

// refusedFile is an entry of the output directory render-all will neither
// read nor replace.
type refusedFile struct{ name, what string }

func refusedRun(rs []refusedFile, run string) bool {
	for _, r := range rs {
		if r.name == run {
			return true
		}
	}
	return false
}

// readManifests reads out/*.yaml keyed by run name. A missing directory is
// an empty tree (the first render-all creates it); other files and
// subdirectories are not ours and are left alone. A *.yaml entry that is a
// symlink or not a regular file is never read (its target could be any
// host file) and is returned as refused. In a git work tree a file git
// does not track is not committed: it is returned in untracked, unread.
func readManifests(disk source.Disk, out string) (map[string][]byte, []refusedFile, []string, error) {
	entries, err := os.ReadDir(out)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string][]byte{}, nil, nil, nil
		}
		return nil, nil, nil, err
	}
	files := map[string][]byte{}
	var refused []refusedFile
	var untracked []string
	var budget source.RenderBudget
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), renderall.Ext) {
			continue
		}
		name := strings.TrimSuffix(e.Name(), renderall.Ext)
		if e.Type()&fs.ModeSymlink != 0 {
			refused = append(refused, refusedFile{name, "is a symlink"})
			continue
		}
		if e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			refused = append(refused, refusedFile{name, "is not a regular file"})
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
				refused = append(refused, refusedFile{name, "is not a regular file"})
				continue
			}
			return nil, nil, nil, err
		}
		files[name] = b
	}
	return files, refused, untracked, nil
}

// displayDir is the output directory as diff headers show it: relative to
// the git work tree holding the runs repository (so `git apply` of the
// `--check` diff works from the repository root, and the paths are the same
// wherever CI runs), else to the runs repository, else as given.
func displayDir(root, out string) string {
	if abs, err := filepath.Abs(out); err == nil {
		root, out = renderall.RepoRoot(root), abs
	}
	rel, err := filepath.Rel(root, out)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path.Clean(filepath.ToSlash(out))
	}
	return filepath.ToSlash(rel)
}

// securityGate prints the security and scope section of every run whose
// render differs there from base (the committed manifests, or the base
// branch's), and reports whether a run's Pod Security level rose or its
// namespaces changed without the repository's allow-list permitting it.
func securityGate(stderr io.Writer, disk source.Disk, root string, res *renderall.Result, base map[string][]byte) (bool, error) {
	var allow *renderall.Allow
	allowFile := filepath.Join(root, renderall.AllowFile)
	if data, err := disk.ReadFile(filepath.ToSlash(allowFile)); err == nil {
		if allow, err = renderall.ParseAllow(filepath.ToSlash(allowFile), data); err != nil {
			return false, err
		}
	} else if !errors.Is(err, source.ErrNotFound) {
		return false, err
	}
	failed := false
	for _, n := range res.Runs {
		data, ok := res.Files[n]
		if !ok {
			continue
		}
		cur, err := review.Parse(n, n, data)
		if err != nil {
			return false, err
		}
		// A run without a base manifest is new: compared against nothing,
		// it has no level to rise from and no namespace to leave.
		olds := review.Render{}
		if b, ok := base[n]; ok {
			old, err := review.Parse(n, n, b)
			if err != nil {
				fmt.Fprintf(stderr, "%s: the base manifest is not a render (%v); compared against nothing\n", n, err)
			} else {
				olds[n] = old
			}
		}
		s := review.Diff(olds, review.Render{n: cur})
		if len(s.Runs) == 0 {
			continue
		}
		d := s.Runs[0]
		if len(d.Security) == 0 && len(d.KindsAdded)+len(d.KindsRemoved) == 0 && !d.LevelRose() && !d.NamespaceChanged() {
			continue
		}
		fmt.Fprintf(stderr, "%s: security and scope:\n", n)
		for _, l := range d.SecurityLines() {
			fmt.Fprintf(stderr, "  %s\n", safetext.Inline(l))
		}
		if d.LevelRose() && !allow.PermitsLevel(n, d.PodSecurityAfter) {
			failed = true
			fmt.Fprintf(stderr, "%s: error: the run's Pod Security level rises from %s to %s; refused unless %s allows it (runs.%s.podSecurity: %s), a file reviewed like code\n", n, d.PodSecurityBefore, d.PodSecurityAfter, renderall.AllowFile, n, d.PodSecurityAfter)
		}
		if d.NamespaceChanged() && !allow.PermitsNamespaces(n, d.NamespacesAfter) {
			failed = true
			fmt.Fprintf(stderr, "%s: error: the run's namespaces change from [%s] to [%s]; refused unless %s lists them (runs.%s.namespaces), a file reviewed like code\n", n, strings.Join(d.NamespacesBefore, ", "), strings.Join(d.NamespacesAfter, ", "), renderall.AllowFile, n)
		}
	}
	return failed, nil
}
