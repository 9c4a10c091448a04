package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nemo-rl-krm/nemo-rl-krm/fn/renderall"
	"github.com/nemo-rl-krm/nemo-rl-krm/fn/source"
)

func init() {
	extraCommands = append(extraCommands, renderAllCmd, diffCmd)
}

func renderAllCmd() *cobra.Command {
	var outDir string
	var check bool
	c := &cobra.Command{
		Use:   "render-all [DIR] [--out DIR] [--check]",
		Short: "Render every run of a runs repository into its committed manifests tree",
		Long: `Render every DIR/runs/<run>/run.yaml (a NemoRLRun) into DIR/manifests/<run>.yaml,
one file per run holding exactly what 'nrl-k8s render' prints for it. Files
are written only when their content changes; a manifest whose run no longer
exists is removed. A run that fails renders nothing, keeps its committed file
and makes the command exit 1; the other runs still render.

--check writes nothing: it prints a unified diff of every stale, missing or
orphaned manifest and exits 1 if there is any, so CI can block a pull request
whose manifests were not regenerated.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := "."
			if len(args) == 1 {
				root = args[0]
			}
			out := outDir
			if out == "" {
				out = filepath.Join(root, renderall.ManifestsDir)
			}
			return renderAll(cmd, root, out, check)
		},
	}
	c.Flags().StringVar(&outDir, "out", "", "output directory (default DIR/manifests)")
	c.Flags().BoolVar(&check, "check", false, "write nothing; print a diff and exit 1 when the output tree is stale")
	return c
}

func renderAll(cmd *cobra.Command, root, out string, check bool) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	runs, err := renderall.Discover(root)
	if err != nil {
		return err
	}
	res := renderall.Render(source.Disk{}, runs)
	// Prefixed with the run: one profile may serve several runs.
	for _, name := range res.Runs {
		for _, d := range res.Diags[name] {
			fmt.Fprintf(stderr, "%s: %s\n", name, d)
		}
	}
	committed, err := readManifests(out)
	if err != nil {
		return err
	}
	drift := renderall.Compare(displayDir(root, out), committed, res)
	failed := res.Failed()

	if check {
		for _, d := range drift {
			fmt.Fprint(stdout, d.Diff)
		}
		for _, d := range drift {
			fmt.Fprintf(stderr, "%s: %s\n", d.File, describeDrift(d.Change))
		}
		if len(drift) > 0 {
			fmt.Fprintf(stderr, "%d of %d manifest(s) out of date: run `nrl-k8s render-all %s` (or `make manifests`) and commit the result\n", len(drift), len(res.Runs)+countOrphans(drift), root)
		}
	} else {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return err
		}
		for _, d := range drift {
			file := filepath.Join(out, d.Run+renderall.Ext)
			if d.Change == renderall.Orphan {
				if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				fmt.Fprintf(stdout, "removed %s (no run %s/%s)\n", d.File, renderall.RunsDir, d.Run)
				continue
			}
			if err := writeAtomic(file, d.Data); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s\n", d.File)
		}
		fmt.Fprintf(stdout, "%d run(s): %d rendered, %d changed, %d failed\n", len(res.Runs), len(res.Files), len(drift)-countOrphans(drift), len(failed))
	}
	if len(failed) > 0 {
		fmt.Fprintf(stderr, "%d run(s) failed to render, their manifests were left as they are: %s\n", len(failed), strings.Join(failed, ", "))
	}
	if len(failed) > 0 || (check && len(drift) > 0) {
		return exitError{ExitError}
	}
	return nil
}

func describeDrift(c renderall.Change) string {
	switch c {
	case renderall.Stale:
		return "stale (differs from the render)"
	case renderall.Missing:
		return "missing (the run renders, nothing is committed)"
	default:
		return "orphaned (its run no longer exists; render-all removes it)"
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

// readManifests reads out/*.yaml keyed by run name. A missing directory is
// an empty tree (the first render-all creates it); other files and
// subdirectories are not ours and are left alone.
func readManifests(out string) (map[string][]byte, error) {
	entries, err := os.ReadDir(out)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return map[string][]byte{}, nil
		}
		return nil, err
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), renderall.Ext) {
			continue
		}
		b, err := source.Disk{}.ReadFile(filepath.ToSlash(filepath.Join(out, e.Name())))
		if err != nil {
			return nil, err
		}
		files[strings.TrimSuffix(e.Name(), renderall.Ext)] = b
	}
	return files, nil
}

// displayDir is the output directory as diff headers show it: relative to
// the git work tree holding the runs repository (so `git apply` of the
// `--check` diff works from the repository root, and the paths are the same
// wherever CI runs), else to the runs repository, else as given.
func displayDir(root, out string) string {
	if g := gitRoot(root); g != "" {
		if abs, err := filepath.Abs(out); err == nil {
			root, out = g, abs
		}
	}
	rel, err := filepath.Rel(root, out)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path.Clean(filepath.ToSlash(out))
	}
	return filepath.ToSlash(rel)
}

// writeAtomic replaces file through a rename, so an interrupted render-all
// leaves the old manifest or the new one, never half of one.
func writeAtomic(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr, os.Chmod(tmp.Name(), 0o644)); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
