package renderall

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/shell"
)

// Flags is render-all's command line as the user gave it. The CLI declares
// the flags; what they mean, which are refused and which combinations go
// together is decided here (Options).
type Flags struct {
	// Dir is the runs repository; Out, Root and RecipeRoot are --out,
	// --root and --recipe-root, "" when not given.
	Dir, Out, Root, RecipeRoot string
	// BaseDir and BaseRef are --base and --base-ref; BaseDirSet and
	// BaseRefSet say the flag was given, an empty value included.
	BaseDir, BaseRef       string
	BaseDirSet, BaseRefSet bool
	// Check, Kustomization and Untracked are --check, --kustomization and
	// --include-untracked.
	Check, Kustomization, Untracked bool
	// FluxSource, FluxNamespace and FluxInterval are --flux,
	// --flux-namespace and --flux-interval ("" when not given).
	FluxSource, FluxNamespace, FluxInterval string
}

// Options checks the flags and turns them into Run's options, all but the
// security gate, the environment and the writers, which the caller sets.
// A flag that cannot be used as given is a UsageError.
func (f Flags) Options() (Options, error) {
	out := f.Out
	if out == "" {
		out = filepath.Join(f.Dir, ManifestsDir)
	}
	root := f.Root
	if root == "" {
		root = RepoRoot(f.Dir)
	}
	disk, err := source.ConfineRepo(root, f.Untracked)
	if err != nil {
		return Options{}, UsageError{fmt.Errorf("--root: %w", err)}
	}
	if err := f.checkBase(); err != nil {
		return Options{}, err
	}
	rr, err := recipeRootLike(disk, f.Dir, f.RecipeRoot)
	if err != nil {
		return Options{}, UsageError{fmt.Errorf("--recipe-root: %w", err)}
	}
	flux, err := f.flux()
	if err != nil {
		return Options{}, UsageError{err}
	}
	return Options{
		Flux: flux,
		Disk: disk, Dir: f.Dir, Out: out, DefaultOut: f.Out == "", RecipeRoot: rr,
		Check: f.Check, Kustomization: f.Kustomization,
		Base:  BaseSpec{Dir: f.BaseDir, Ref: f.BaseRef},
		Rerun: f.rerun(),
	}, nil
}

// flux is the Flux generation the flags ask for: off without --flux; its
// namespace and interval default to the shipped Kustomization's. The
// runs' builds name ../../manifests/<run>.yaml, so it goes with the
// default output directory.
func (f Flags) flux() (Flux, error) {
	if f.FluxSource == "" {
		if f.FluxNamespace != "" || f.FluxInterval != "" {
			return Flux{}, errors.New("--flux-namespace and --flux-interval go with --flux SOURCE")
		}
		return Flux{}, nil
	}
	if f.Out != "" {
		return Flux{}, errors.New("--flux and --out: give one; each run's Flux folder names ../../manifests/<run>.yaml, the default output directory")
	}
	fl := Flux{Source: f.FluxSource, Namespace: f.FluxNamespace, Interval: f.FluxInterval, RepoPath: DisplayDir(f.Dir, f.Dir)}
	if fl.Namespace == "" {
		fl.Namespace = DefaultFluxNamespace
	}
	if fl.Interval == "" {
		fl.Interval = DefaultFluxInterval
	}
	return fl, fl.check()
}

// checkBase refuses an empty or option-shaped --base or --base-ref: an
// unset variable in a CI script, or a value swallowed from the next flag,
// must not turn into "no base branch found" and a gate judged against the
// pull request's own allow-list. Both go with --check, and only one of them.
func (f Flags) checkBase() error {
	for _, b := range []struct {
		name, value, want string
		set               bool
	}{
		{"base", f.BaseDir, "a checkout of the base branch (a directory)", f.BaseDirSet},
		{"base-ref", f.BaseRef, "the base branch (origin/main), a tag or a commit", f.BaseRefSet},
	} {
		if !b.set {
			continue
		}
		if strings.TrimSpace(b.value) == "" || strings.HasPrefix(b.value, "-") {
			return UsageError{fmt.Errorf("--%s: %q: expected %s; a value starting with - reads as an option, and an empty one is an unset variable, never \"no base\"", b.name, b.value, b.want)}
		}
	}
	if (f.BaseDir != "" || f.BaseRef != "") && !f.Check {
		return UsageError{errors.New("--base and --base-ref go with --check")}
	}
	if f.BaseDir != "" && f.BaseRef != "" {
		return UsageError{errors.New("--base and --base-ref: give one")}
	}
	return nil
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

// rerun is the render-all line that rewrites what --check found stale:
// the same directory and every flag that changes what is read or written,
// spelled as they were given.
func (f Flags) rerun() string {
	cmd := "nrl-k8s render-all " + shell.Quote(filepath.ToSlash(f.Dir))
	for _, p := range []struct{ flag, value string }{{"--out", f.Out}, {"--root", f.Root}, {"--recipe-root", f.RecipeRoot}} {
		if p.value != "" {
			cmd += " " + p.flag + " " + shell.Quote(filepath.ToSlash(p.value))
		}
	}
	if f.Untracked {
		cmd += " --include-untracked"
	}
	if f.Kustomization {
		cmd += " --kustomization"
	}
	for _, p := range []struct{ flag, value string }{{"--flux", f.FluxSource}, {"--flux-namespace", f.FluxNamespace}, {"--flux-interval", f.FluxInterval}} {
		if p.value != "" {
			cmd += " " + p.flag + " " + shell.Quote(p.value)
		}
	}
	return cmd
}
