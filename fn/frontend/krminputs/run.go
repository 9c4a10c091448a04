package krminputs

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/engine/load/source"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/frontend/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/support/tree"
)

// Mode is what Execute does with the inputs it computes.
type Mode int

const (
	Print Mode = iota // write them to Stdout
	Write             // bring the kustomization's block or the kpt inputs up to date
	Check             // report what is stale on Stderr, ErrStale when anything is
)

// Options are `nrl-k8s kustomize-inputs`'s settings.
type Options struct {
	RunFiles []string // files of NemoRLRuns
	// Kustomization is the kustomization directory (-k); Kpt, when not
	// "", the kpt package directory instead.
	Kustomization, Kpt string
	// Root is the package root ("": the kustomization or kpt directory).
	Root             string
	Mode             Mode
	IncludeUntracked bool
	Stdout, Stderr   io.Writer
}

// ErrStale is Check's answer when the committed inputs differ from what
// the runs need (the difference is on Stderr already).
var ErrStale = errors.New("the inputs are stale")

// FlagError is a directory flag whose value cannot be used: the command
// line is wrong, not the inputs.
type FlagError struct {
	Flag string
	Err  error
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// Execute computes the runs' inputs and prints, writes or checks them.
func Execute(o Options) error {
	base := o.Kustomization
	if o.Kpt != "" {
		base = o.Kpt
	}
	root := o.Root
	if root == "" {
		root = base
	}
	// The one rule for repository files (source): the runs and every file
	// they read inside root, tracked by git, no link out of it; writes
	// never follow a link.
	disk, err := source.ConfineRepo(root, o.IncludeUntracked)
	if err != nil {
		return &FlagError{"--root", err}
	}
	runs, err := ReadRuns(disk, o.RunFiles)
	if err != nil {
		return err
	}
	dirs, err := Collect(disk, root, runs)
	if err != nil {
		return err
	}
	runFiles, err := RunFiles(root, runs)
	if err != nil {
		return err
	}
	if o.Kpt != "" {
		return kpt(o, disk, dirs, runFiles, root)
	}
	if !disk.Inside(o.Kustomization) {
		return &FlagError{"-k", errors.New("the kustomization directory is outside --root; expected it inside the package root, as its files: entries and the files-dir annotations are paths in the package")}
	}
	return kustomize(o, dirs, runFiles, root)
}

// kustomize prints, writes or checks the kustomization's generated block.
func kustomize(o Options, dirs []Dir, runFiles map[string]string, root string) error {
	block, err := KustomizeBlock(dirs, runFiles, root, o.Kustomization)
	if err != nil {
		return err
	}
	if o.Mode == Print {
		_, err := fmt.Fprint(o.Stdout, block)
		return err
	}
	wdisk, err := source.ConfineRepo(o.Kustomization, o.IncludeUntracked)
	if err != nil {
		return &FlagError{"-k", err}
	}
	file := filepath.Join(o.Kustomization, "kustomization.yaml")
	cur, err := wdisk.ReadFile(filepath.ToSlash(file))
	if err != nil {
		return err
	}
	next, err := ReplaceBlock(string(cur), block)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if next == string(cur) {
		return nil
	}
	if o.Mode == Check {
		fmt.Fprintf(o.Stderr, "%s: the inputs block is stale; run nrl-k8s kustomize-inputs --write\n%s",
			file, renderall.UnifiedDiff(filepath.ToSlash(file), filepath.ToSlash(file), cur, []byte(next)))
		return ErrStale
	}
	return wdisk.WriteFile(file, []byte(next))
}

// kpt prints, writes or checks the kpt package's inputs/ ConfigMaps.
func kpt(o Options, disk source.Disk, dirs []Dir, runFiles map[string]string, root string) error {
	files, err := KptFiles(disk, dirs, runFiles, root)
	if err != nil {
		return err
	}
	if o.Mode == Print {
		for _, n := range tree.SortedKeys(files) {
			if _, err := fmt.Fprintf(o.Stdout, "---\n%s", files[n]); err != nil {
				return err
			}
		}
		return nil
	}
	wdisk, err := source.ConfineRepo(o.Kpt, o.IncludeUntracked)
	if err != nil {
		return &FlagError{"--kpt", err}
	}
	stale, err := SyncKpt(wdisk, o.Kpt, files, o.Mode == Check)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		fmt.Fprintf(o.Stderr, "%s\nrun nrl-k8s kustomize-inputs --kpt %s --write\n", strings.Join(stale, "\n"), filepath.ToSlash(o.Kpt))
		return ErrStale
	}
	return nil
}
