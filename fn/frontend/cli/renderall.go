package cli

import (
	"errors"
	"fmt"
	"io"
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
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

func renderAllCmd() *cobra.Command {
	var outDir, rootDir, baseDir, baseRef, recipeRoot string
	var check, untracked, kustomization bool
	c := &cobra.Command{
		Use:   "render-all [DIR] [--out DIR] [--root DIR] [--kustomization] [--check [--base-ref REF | --base DIR]]",
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
regenerated. It then runs the security gate against the base branch: the
manifests and review-allow.yaml of --base-ref REF read from git objects
(the merge-base of HEAD and REF), or of the checkout --base DIR; without
either, the branch CI names (GITHUB_BASE_REF, GitLab's
CI_MERGE_REQUEST_TARGET_BRANCH_NAME: origin/<branch>), else the current
branch's upstream. With none it says so and judges against this checkout's
own committed manifests, which a pull request rewrites itself. Every run,
new and renamed ones included, fails the gate when its Pod Security level
rises, it enters a namespace or it gains a privilege the base branch's
review-allow.yaml does not permit.

--kustomization also keeps OUT/kustomization.yaml listing every run's
manifest, so an overlay naming OUT as its base takes a new run without a
hand edit; with --check a stale one is drift. Without it, a
kustomization.yaml there is the user's and left alone.

Paths in a run file (spec.recipe, spec.profile, spec.defaults,
spec.recipeRoot) are relative to the run file's directory, as they are for
kustomize-inputs and the KRM function. Files of a checked-out git submodule
count as tracked (NeMo-RL pinned as a submodule); one not checked out is an
error saying so. --recipe-root DIR is the recipe root of every run whose
spec.recipeRoot is empty: the folder whose layout is NeMo-RL's checkout
(the submodule), so --config points at the recipe's path below it in the
pod (nrl-k8s render --recipe-root). It must be inside the root.`,
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
			if (baseDir != "" || baseRef != "") && !check {
				return usageError{errors.New("--base and --base-ref go with --check")}
			}
			if baseDir != "" && baseRef != "" {
				return usageError{errors.New("--base and --base-ref: give one")}
			}
			rr, err := recipeRootLike(disk, dir, recipeRoot)
			if err != nil {
				return usageError{fmt.Errorf("--recipe-root: %w", err)}
			}
			chk := checkSpec{
				baseSpec: baseSpec{dir: baseDir, ref: baseRef},
				rerun:    rerunCommand(dir, outDir, rootDir, recipeRoot, kustomization, untracked),
			}
			return renderAll(cmd, disk, dir, out, outDir == "", check, kustomization, rr, chk)
		},
	}
	c.Flags().StringVar(&outDir, "out", "", "output directory (default DIR/manifests)")
	c.Flags().StringVar(&rootDir, "root", "", "read input files only inside this directory (default: the git work tree holding DIR, else DIR)")
	c.Flags().BoolVar(&check, "check", false, "write nothing; print a diff and exit 1 when the output tree is stale")
	c.Flags().StringVar(&baseDir, "base", "", "with --check: the runs repository of the base branch's checkout; the security gate judges against its committed manifests and allow-list")
	c.Flags().StringVar(&baseRef, "base-ref", "", "with --check: the base branch (origin/main); the security gate judges against its manifests and allow-list at the merge-base, read from git objects (default: the branch CI names, else the upstream branch)")
	c.Flags().BoolVar(&untracked, "include-untracked", false, "in a git work tree, also read files git does not track (by default only tracked files are read)")
	c.Flags().StringVar(&recipeRoot, "recipe-root", "", "recipe root (NeMo-RL's layout, e.g. a submodule) of every run whose spec.recipeRoot is empty; inside the root")
	c.Flags().BoolVar(&kustomization, "kustomization", false, "also maintain OUT/kustomization.yaml listing every run's manifest (an overlay's base); with --check, a stale one is drift")
	return c
}

// baseSpec is what the user said the base is: a checkout, a revision, or
// nothing (found from CI's environment or the upstream branch).
type baseSpec struct{ dir, ref string }

// checkSpec is what --check needs beyond the render: the base the gate
// judges against and the command that rewrites what it finds stale.
type checkSpec struct {
	baseSpec
	rerun string
}

// recipeRootLike is --recipe-root spelled like the run paths render-all
// builds from dir (absolute when dir is, else relative to the working
// directory), so the recipe's path below it is a prefix test; it must be a
// directory inside the root.
func recipeRootLike(disk source.Disk, dir, flag string) (string, error) {
	if flag == "" {
		return "", nil
	}
	abs, err := filepath.Abs(flag)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s: not a directory; expected the folder whose layout is NeMo-RL's checkout (examples/configs/...)", flag)
	}
	if disk.Root() != "" {
		resolved, err := filepath.EvalSymlinks(abs)
		if err != nil || !source.Within(disk.Root(), resolved) {
			return "", fmt.Errorf("%s: not inside the root %s; expected a folder of the repository (a NeMo-RL submodule)", flag, disk.Root())
		}
	}
	if filepath.IsAbs(dir) {
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Rel(wd, abs)
}

func renderAll(cmd *cobra.Command, disk source.Disk, root, out string, defaultOut, check, kustomization bool, recipeRoot string, chk checkSpec) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := renderall.CheckOutDir(disk, out, defaultOut); err != nil {
		return err
	}
	runs, err := renderall.Discover(disk, root)
	if err != nil {
		return err
	}
	renderall.DefaultRecipeRoot(runs, recipeRoot)
	res := renderall.Render(disk, runs)
	// Prefixed with the run: one profile may serve several runs.
	for _, name := range res.Runs {
		for _, d := range res.Diags[name] {
			fmt.Fprintf(stderr, "%s: %s\n", name, d)
		}
	}
	committed, refused, untracked, err := renderall.ReadManifests(disk, out)
	if err != nil {
		return err
	}
	shown := renderall.DisplayDir(root, out)
	for _, n := range untracked {
		fmt.Fprintf(stderr, "%s: not tracked by git; read as not committed (in a git work tree only the files git tracks are read; --include-untracked to read it)\n", path.Join(shown, n+renderall.Ext))
	}
	for _, r := range refused {
		fmt.Fprintf(stderr, "%s: %s; refused: render-all reads and writes regular files only (remove it)\n", path.Join(shown, r.Name+renderall.Ext), r.What)
	}
	for _, n := range renderall.Foreign(committed, res) {
		fmt.Fprintf(stderr, "%s: no run %s/%s, and not written by render-all (objects without the %s: %s label); left alone\n",
			path.Join(shown, n+renderall.Ext), renderall.RunsDir, n, manifest.ManagedByKey, manifest.ManagedByValue)
	}
	var drift []renderall.Drift
	for _, d := range renderall.Compare(shown, committed, res) {
		if !renderall.RefusedRun(refused, d.Run) {
			drift = append(drift, d)
		}
	}
	failed := res.Failed()
	staleKustomization := false
	if kustomization {
		if staleKustomization, err = maintainKustomization(stdout, stderr, disk, out, shown, defaultOut, check, res, committed); err != nil {
			return err
		}
	}

	gateFailed := false
	if check {
		if gateFailed, err = printDrift(stdout, stderr, disk, root, chk, drift, res, committed); err != nil {
			return err
		}
	} else if err := writeDrift(stdout, disk, out, defaultOut, drift, res, len(failed)); err != nil {
		return err
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "%d run(s) failed to render, their manifests were left as they are: %s\n", len(failed), strings.Join(failed, ", "))
	}
	// staleKustomization: stale under --check, or unbuildable in any mode.
	if len(failed) > 0 || len(refused) > 0 || (check && len(drift) > 0) || staleKustomization || gateFailed {
		return exitError{ExitError}
	}
	return nil
}

// maintainKustomization writes OUT/kustomization.yaml (renderall.Kustomization)
// when it differs, or with --check prints its diff and reports it stale. A
// link or non-regular file in its place is refused, never followed. When
// two listed manifests hold one object (renderall.SharedObjects), kustomize
// could not build it: nothing is written and it reports a failure.
func maintainKustomization(stdout, stderr io.Writer, disk source.Disk, out, shown string, defaultOut, check bool, res *renderall.Result, committed map[string][]byte) (bool, error) {
	file := filepath.Join(out, renderall.KustomizationFile)
	display := path.Join(shown, renderall.KustomizationFile)
	if shared := renderall.SharedObjects(res, committed); len(shared) > 0 {
		for _, o := range shared {
			fmt.Fprintf(stderr, "%s: %s is in the manifests of runs %s; kustomize refuses a resource listed twice, so an overlay over %s would not build; expected one run owning the profile's shared deployments (spec.onlyDeployments: true) and spec.noDeployments: true in the others\n",
				display, o.Object, strings.Join(o.Runs, ", "), shown)
		}
		return true, nil
	}
	want := renderall.Kustomization(res, committed)
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
	if check {
		fmt.Fprint(stdout, renderall.UnifiedDiff("a/"+display, "b/"+display, have, want))
		fmt.Fprintf(stderr, "%s: out of date (render-all --kustomization lists every run's manifest)\n", display)
		return true, nil
	}
	wdisk := source.Disk{}
	if defaultOut {
		wdisk = disk
	}
	if err := wdisk.WriteFile(file, want); err != nil {
		return false, err
	}
	fmt.Fprintf(stdout, "wrote %s\n", display)
	return false, nil
}

// printDrift is render-all --check: the drift as a diff on stdout, what is
// stale on stderr, then the security gate against the base branch.
func printDrift(stdout, stderr io.Writer, disk source.Disk, root string, chk checkSpec, drift []renderall.Drift, res *renderall.Result, committed map[string][]byte) (bool, error) {
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
		fmt.Fprintf(stderr, "%s: %s\n", d.File, renderall.DescribeChange(d.Change))
	}
	if len(drift) > 0 {
		fmt.Fprintf(stderr, "%d of %d manifest(s) out of date: run `%s` (or `make manifests`) and commit the result\n", len(drift), len(res.Runs)+renderall.Orphans(drift), chk.rerun)
	}
	base, err := readBase(disk, root, chk.baseSpec, committed)
	if err != nil {
		return false, err
	}
	_, prAllow, err := renderall.ReadAllow(disk, root)
	if err != nil {
		return false, err
	}
	return review.SecurityGate(stderr, res, base, prAllow)
}

// rerunCommand is the render-all line that rewrites what --check found
// stale: the same directory and every flag that changes what is read or
// written, spelled as they were given.
func rerunCommand(dir, out, root, recipeRoot string, kustomization, untracked bool) string {
	cmd := "nrl-k8s render-all " + shell.Quote(filepath.ToSlash(dir))
	for _, f := range []struct{ flag, value string }{{"--out", out}, {"--root", root}, {"--recipe-root", recipeRoot}} {
		if f.value != "" {
			cmd += " " + f.flag + " " + shell.Quote(filepath.ToSlash(f.value))
		}
	}
	if untracked {
		cmd += " --include-untracked"
	}
	if kustomization {
		cmd += " --kustomization"
	}
	return cmd
}

// readBase finds and reads the base the gate judges against.
func readBase(disk source.Disk, root string, spec baseSpec, committed map[string][]byte) (renderall.Base, error) {
	switch {
	case spec.dir != "":
		b, err := renderall.BaseFromDir(spec.dir)
		if err != nil {
			return b, usageError{fmt.Errorf("--base: %w", err)}
		}
		return b, nil
	case spec.ref != "":
		b, err := renderall.BaseFromRevision(root, spec.ref, "")
		if err != nil {
			return b, usageError{fmt.Errorf("--base-ref: %w", err)}
		}
		return b, nil
	}
	ref, why, err := renderall.FindBaseRef(root, os.Getenv)
	if err != nil {
		return renderall.Base{}, usageError{err}
	}
	if ref == "" {
		return renderall.Unknown(disk, root, committed)
	}
	return renderall.BaseFromRevision(root, ref, why)
}

// writeDrift is render-all without --check: it writes what is stale or
// missing and removes what is orphaned.
func writeDrift(stdout io.Writer, disk source.Disk, out string, defaultOut bool, drift []renderall.Drift, res *renderall.Result, failed int) error {
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
	fmt.Fprintf(stdout, "%d run(s): %d rendered, %d changed, %d failed\n", len(res.Runs), len(res.Files), len(drift)-renderall.Orphans(drift), failed)
	return nil
}
